/**
 * The denial matrix, generated from the contract: every protected operation of openapi.yaml
 * (effective `security` not `[]`) × every caller — no session, player, worldbuilder, admin,
 * superuser — sent the way its examples describe it (as contract-examples.test.ts does), with
 * the session as `Authorization: Bearer`. No session answers 401, a role below the operation's
 * minimum 403, a role at or above it the success the contract documents (its 2xx response), so
 * that an allowed request failing any other way (a 500, a 409) fails too. The minimum role of each operation
 * is declared below; an operation of the contract missing from that table, or a table entry
 * the contract does not have, fails the suite, so a new route cannot skip the matrix.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { createUser, sessionFor } from '../helpers/accounts.ts';
import { closedPortUrl } from '../helpers/fake-upstream.ts';
import { contractOperations, effectiveSecurity, EXAMPLE_FLOW, exampleRequest, successStatuses, takesSessionInPath, type ContractEntry } from '../helpers/contract.ts';
import { rank, ROLES, type Role } from '../../src/shared/roles.ts';
import { openStream } from '../helpers/sse.ts';
import { fileReport } from '../helpers/moderation.ts';

/**
 * The least role each protected operation admits (src/services/accounts/roles.ts, routes/*.ts);
 * `player` means any session. Admin permissions: VIEW_LOGS, KICK_USERS, BAN_USERS,
 * CREATE_USERS and STOP_SERVER are admin and up, MANAGE_USERS superuser only.
 */
const MINIMUM_ROLE: Readonly<Record<string, Role>> = {
  // Accounts: any session.
  logout: 'player',
  changePassword: 'player',
  pingSession: 'player',
  // Admin inspection: VIEW_LOGS.
  adminListPlayers: 'admin',
  adminListConnections: 'admin',
  adminListPlayerLocations: 'admin',
  adminListTables: 'admin',
  adminReadTable: 'admin',
  adminListSessions: 'admin',
  adminListChatMessages: 'admin',
  adminListWorldStatus: 'admin',
  adminReadSchema: 'admin',
  adminCharacterAxisState: 'admin',
  adminCharacterAxisEvents: 'admin',
  adminReadLedger: 'admin',
  adminListAudit: 'admin',
  // Admin actions.
  adminKickSession: 'admin', // KICK_USERS
  adminKickCharacter: 'admin', // KICK_USERS
  adminManageCharacter: 'superuser', // MANAGE_USERS
  adminCreateUser: 'admin', // CREATE_USERS
  adminCreateCharacter: 'admin', // CREATE_USERS
  adminManageUser: 'admin', // the example bans: BAN_USERS (change_role, delete, change_password: MANAGE_USERS)
  adminSetWorldAccess: 'admin', // admin or superuser role
  adminStopServer: 'admin', // STOP_SERVER
  // Moderation: BAN_USERS for reports, ANNOUNCE for the wall (admin and up).
  adminListReports: 'admin',
  adminResolveReport: 'admin',
  adminWall: 'admin',
  // Language-model runtime commands: VIEW_LOGS.
  adminLlmCommand: 'admin',
  adminLlmClearContext: 'admin',
  // Policy control plane: admin or superuser role.
  getPolicyCapabilities: 'admin',
  listPolicies: 'admin',
  getPolicy: 'admin',
  validatePolicy: 'admin',
  upsertPolicyVariant: 'admin',
  activatePolicy: 'admin',
  listPolicyActivations: 'admin',
  publishPolicies: 'admin',
  getPublishRun: 'admin',
  importPolicyArtifact: 'admin',
  getPolicyHashSnapshot: 'admin',
  // Lab: admin or superuser role.
  labListWorlds: 'admin',
  labWorldConfig: 'admin',
  labImagePolicyBundle: 'admin',
  labCompileImagePrompt: 'admin',
  labTranslate: 'admin',
  // Characters: any session.
  listCharacters: 'player',
  listWorlds: 'player',
  createCharacter: 'player',
  selectCharacter: 'player',
  deselectCharacter: 'player',
  // Game: any session; without a bound character 409 (the matrix binds one to every role).
  runCommand: 'player',
  listCommands: 'player',
  getStatus: 'player',
  getRoomChat: 'player',
  streamEvents: 'player',
  // Pipeline: any valid session.
  generateConditionAxes: 'player',
  // Building: EDIT_WORLD (creating and deleting rooms CREATE_ROOMS, items CREATE_ITEMS; admins may do all).
  listWorldRooms: 'worldbuilder',
  createWorldRoom: 'worldbuilder',
  getWorldRoom: 'worldbuilder',
  updateWorldRoom: 'worldbuilder',
  deleteWorldRoom: 'worldbuilder',
  revertWorldRoom: 'worldbuilder',
  addWorldExit: 'worldbuilder',
  removeWorldExit: 'worldbuilder',
  createWorldItem: 'worldbuilder',
  getWorldItem: 'worldbuilder',
  updateWorldItem: 'worldbuilder',
  deleteWorldItem: 'worldbuilder',
  listWorldChanges: 'worldbuilder',
  listWorldNpcs: 'worldbuilder',
  createWorldNpc: 'worldbuilder',
  getWorldNpc: 'worldbuilder',
  updateWorldNpc: 'worldbuilder',
  deleteWorldNpc: 'worldbuilder',
  revertWorldNpc: 'worldbuilder',
  listScriptErrors: 'worldbuilder',
};

/** Protected operations the matrix cannot check as above, why, and what every caller gets instead. */
const EXCEPTIONS: Readonly<Record<string, { reason: string; status: number }>> = {
  getMetrics: { reason: '/metrics is off until [metrics] mode is set (open or admin): 404 to every caller by default', status: 404 },
};

/**
 * Allowed checks whose example would spend or end the session it is sent with, or another
 * account's: each runs with a fresh account of the role, after every other check.
 */
const FRESH_ACCOUNT: Readonly<Record<string, string>> = {
  logout: 'ends the session it is sent with',
  changePassword: "the example's old_password matches once per account (then 401 Current password is incorrect)",
  adminManageUser: "the example bans an account, which ends that account's sessions",
  deselectCharacter: 'unbinds the character the matrix binds to every session',
};

/**
 * Allowed checks that run on a throw-away server of their own (one per check), and why.
 * Their denials run on the shared server like every other.
 */
const OWN_SERVER: Readonly<Record<string, string>> = {
  adminStopServer: 'a success stops the server',
  adminKickSession:
    "the example ends a session named by row id: on the shared server that row may be a session the matrix needs, or one the caller does not outrank (403); on a fresh server it names none (or the caller's own)",
};

/** What an allowed check needs that no operation of the flow makes, done first the way a client does it. */
const PREPARE: Readonly<Record<string, (server: TestServer, session: string) => Promise<void>>> = {
  // Report 1, which only the game files (a player's `report` through POST /command).
  adminResolveReport: fileReport,
};

type Caller = 'none' | Role;
const CALLERS: readonly Caller[] = ['none', ...ROLES];

/** A well-formed session id no login ever returned: the "no session" of path-session operations. */
const UNKNOWN_SESSION = '00000000-0000-4000-8000-000000000000';

/** The example's target account (`mira`), so that allowed admin actions reach their work. */
const EXAMPLE_TARGET = 'mira';

const ops = contractOperations();
const isProtected = (entry: ContractEntry): boolean => effectiveSecurity(entry.op).length > 0;
/** An event stream never ends by itself: its allowed check reads the status, then hangs up. */
const isStream = (entry: ContractEntry): boolean => entry.op.responses['200']?.content?.['text/event-stream'] !== undefined;
const stopsTheServer = (operationId: string): boolean => operationId === 'adminStopServer';
/** The matrix's operations in contract order; the server stop's denials come last. */
const MATRIX = [...ops.entries()]
  .filter(([id]) => MINIMUM_ROLE[id] !== undefined)
  .sort(([a], [b]) => Number(stopsTheServer(a)) - Number(stopsTheServer(b)));

function expectedFor(operationId: string, caller: Caller): 401 | 403 | 'allowed' {
  if (caller === 'none') return 401;
  return rank(caller) >= rank(MINIMUM_ROLE[operationId]!) ? 'allowed' : 403;
}

function envFor(upstream: string): Record<string, string> {
  return { MUD_TRANSLATION_OLLAMA_URL: upstream, MUD_LLM_ALLOWED_SERVER_URLS: upstream };
}

/** Every row of every application table, minus the activity stamps a session check may refresh. */
async function snapshot(server: TestServer): Promise<Record<string, string[]>> {
  const names: string[] = server.schema
    ? await server.db.withSchema('information_schema').from('tables').where({ table_schema: server.schema, table_type: 'BASE TABLE' }).pluck('table_name')
    : await server.db('sqlite_master').where({ type: 'table' }).pluck('name');
  const volatile = new Set(['last_activity', 'expires_at']);
  const result: Record<string, string[]> = {};
  for (const name of names.filter((n) => !n.startsWith('knex_') && !n.startsWith('sqlite_')).sort()) {
    const rows: Record<string, unknown>[] = await server.db(name).select('*');
    result[name] = rows.map((row) => JSON.stringify(Object.entries(row).filter(([k]) => !volatile.has(k)))).sort();
  }
  return result;
}

/** A session of a new account of the role, with a character of its own bound to it, so that game requests reach the game rather than 409. */
async function boundSession(server: TestServer, username: string, role: Role): Promise<string> {
  const session = await sessionFor(server, username, role);
  const auth = { Authorization: `Bearer ${session}` };
  const created = await server.post('/characters/create', { world_id: 'emberwick' }, auth);
  expect(created.status, created.text).to.equal(200);
  const selected = await server.post('/characters/select', { character_id: created.body.character_id }, auth);
  expect(selected.status, selected.text).to.equal(200);
  return session;
}

/** Where an operation comes in the examples' flow (operations it leaves out come after it). */
const flowIndex = (operationId: string): number => {
  const at = EXAMPLE_FLOW.findIndex(([id]) => id === operationId);
  return at < 0 ? EXAMPLE_FLOW.length : at;
};

describe('denial matrix: every protected operation × every role', () => {
  let server: TestServer;
  let upstream: string;
  const sessions = {} as Record<Role, string>;

  before(async () => {
    upstream = await closedPortUrl();
    // Denied requests are shown to leave the database as it was.
    server = await startTestServer({ env: envFor(upstream), worldClock: false });
    await createUser(server, EXAMPLE_TARGET, 'player');
    for (const role of ROLES) sessions[role] = await boundSession(server, `dm_${role}`, role);
  });
  after(async () => {
    await server?.close();
  });

  describe('the table', () => {
    it('names every protected operation of the contract, or says why not', () => {
      const missing = [...ops].filter(([id, entry]) => isProtected(entry) && MINIMUM_ROLE[id] === undefined && EXCEPTIONS[id] === undefined);
      expect(missing.map(([id]) => id)).to.deep.equal([]);
    });
    it('names only protected operations of the contract', () => {
      const named = [...Object.keys(MINIMUM_ROLE), ...Object.keys(EXCEPTIONS), ...Object.keys(FRESH_ACCOUNT), ...Object.keys(OWN_SERVER)];
      expect(named.filter((id) => !ops.has(id)), 'not in the contract').to.deep.equal([]);
      expect(named.filter((id) => ops.has(id) && !isProtected(ops.get(id)!)), 'public in the contract').to.deep.equal([]);
      expect(Object.keys(MINIMUM_ROLE).filter((id) => EXCEPTIONS[id] !== undefined), 'both checked and excepted').to.deep.equal([]);
      const special = [...Object.keys(FRESH_ACCOUNT), ...Object.keys(OWN_SERVER)];
      expect(special.filter((id) => MINIMUM_ROLE[id] === undefined), 'run specially but not in the table').to.deep.equal([]);
    });
    it('admits optional authentication only where the session is in the path', () => {
      // `[sessionBearer, {}]` still needs a session when the path carries it (ping, status, chat).
      const optional = [...ops].filter(([, entry]) => effectiveSecurity(entry.op).some((req) => Object.keys(req).length === 0));
      const unexplained = optional.filter(([id, entry]) => !takesSessionInPath(entry.op) && EXCEPTIONS[id] === undefined);
      expect(unexplained.map(([id]) => id)).to.deep.equal([]);
    });
  });

  describe('denied: no session → 401, a role below the minimum → 403, and nothing changes', () => {
    let untouched: Record<string, string[]>;
    before(async () => {
      untouched = await snapshot(server);
    });
    for (const [operationId, entry] of MATRIX) {
      for (const caller of CALLERS) {
        const expected = expectedFor(operationId, caller);
        if (expected === 'allowed') continue;
        it(`${operationId} (${entry.method} ${entry.path}) as ${caller}: ${expected}`, async () => {
          const session = caller === 'none' ? undefined : sessions[caller];
          const pathSession = caller === 'none' && takesSessionInPath(entry.op) ? UNKNOWN_SESSION : session;
          const { method, url, body, headers } = exampleRequest(entry, session, pathSession);
          const res = await server.request(method, url, body, headers);
          expect(res.status, `${method} ${url}: ${res.text}`).to.equal(expected);
        });
      }
    }
    it('denied requests left every table as it was', async () => {
      expect(await snapshot(server)).to.deep.equal(untouched);
    });
  });

  /**
   * Each role on a server of its own, its checks in the order of the examples' flow, so that
   * each example finds what it needs (what an earlier one created, at the version it names)
   * and must succeed as the contract documents.
   */
  describe('allowed: a role at or above the minimum → the success status the contract documents', () => {
    for (const role of ROLES) {
      describe(`as ${role}, on a server of its own`, () => {
        let own: TestServer;
        let session: string;
        let fresh = 0;
        before(async () => {
          own = await startTestServer({ env: envFor(upstream) });
          // The role's character is the examples' character 1.
          session = await boundSession(own, `dm_${role}`, role);
          await createUser(own, EXAMPLE_TARGET, 'player');
        });
        after(async () => {
          await own?.close();
        });

        const checks = MATRIX.filter(([operationId]) => expectedFor(operationId, role) === 'allowed').sort(
          ([a], [b]) => Number(FRESH_ACCOUNT[a] !== undefined) - Number(FRESH_ACCOUNT[b] !== undefined) || flowIndex(a) - flowIndex(b),
        );
        for (const [operationId, entry] of checks) {
          const how = OWN_SERVER[operationId] !== undefined ? ' (on a throw-away server)' : FRESH_ACCOUNT[operationId] !== undefined ? ' (fresh account)' : '';
          it(`${operationId} (${entry.method} ${entry.path})${how}`, async () => {
            if (OWN_SERVER[operationId] !== undefined) {
              const throwAway = await startTestServer({ env: envFor(upstream) });
              try {
                const { method, url, body, headers } = exampleRequest(entry, await sessionFor(throwAway, `dm_${role}`, role));
                const res = await throwAway.request(method, url, body, headers);
                expect(res.status, `${method} ${url}: ${res.text}`).to.be.oneOf(successStatuses(entry.op));
                if (stopsTheServer(operationId)) await throwAway.stopped;
              } finally {
                await throwAway.close();
              }
              return;
            }
            const sender = FRESH_ACCOUNT[operationId] !== undefined ? await boundSession(own, `dm${++fresh}_${role}`, role) : session;
            await PREPARE[operationId]?.(own, sender);
            const { method, url, body, headers } = exampleRequest(entry, sender);
            if (isStream(entry)) {
              const stream = await openStream(own.url + url, headers);
              stream.close();
              expect(stream.status, `${method} ${url}`).to.be.oneOf(successStatuses(entry.op));
              return;
            }
            const res = await own.request(method, url, body, headers);
            expect(res.status, `${method} ${url}: ${res.text}`).to.be.oneOf(successStatuses(entry.op));
          });
        }
      });
    }
  });

  describe('exceptions', () => {
    for (const [operationId, { reason, status }] of Object.entries(EXCEPTIONS)) {
      it(`${operationId}: ${status} to every caller (${reason})`, async () => {
        const entry = ops.get(operationId)!;
        for (const caller of CALLERS) {
          const session = caller === 'none' ? undefined : sessions[caller];
          const pathSession = caller === 'none' && takesSessionInPath(entry.op) ? UNKNOWN_SESSION : session;
          const { method, url, body, headers } = exampleRequest(entry, session, pathSession);
          const res = await server.request(method, url, body, headers);
          expect(res.status, `${caller}: ${method} ${url}: ${res.text}`).to.equal(status);
        }
      });
    }
  });
});
