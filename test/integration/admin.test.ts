/**
 * Admin routes through HTTP against the real app: permission denials for every route and
 * role, the database listings and their world scoping, table reads, session kick, user
 * creation and management (each rule in its order), world grants and the server stop.
 * Every response body seen here is checked for bcrypt hashes (`$2a$`, `$2b$`).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { startTestServer, usePostgres, type HttpResponse, type TestServer, type TestServerOptions } from '../helpers/test-server.ts';
import { createUser, login, sessionFor, sessionRow, GOOD_PASSWORD, OTHER_GOOD_PASSWORD } from '../helpers/accounts.ts';
import { toDbTime } from '../../src/db/clock.ts';
import type { Role } from '../../src/shared/roles.ts';
import { expectContractError } from '../helpers/contract.ts';
import { SECRET_COLUMNS } from '../../src/db/repositories/inspection-repository.ts';

const INVALID_SESSION = 'Invalid or expired session';
/**
 * Column names that look like credentials; each such column must be in SECRET_COLUMNS. Plain
 * `hash` or `key` is left out: content_hash, ipc_hash, policy_key and name_key are public.
 */
const CREDENTIAL_LIKE = /password|token|secret|credential|api_key/i;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

/** How many responses the hash guard has inspected (item 9 asserts it is not zero). */
let responsesChecked = 0;

/** Starts a test server whose request helpers refuse any body that carries a bcrypt hash. */
async function startGuardedServer(options: TestServerOptions = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  const raw = server.request;
  const request = async (method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse> => {
    const res = await raw(method, urlPath, body, headers);
    responsesChecked += 1;
    for (const marker of ['$2a$', '$2b$']) {
      if (res.text.includes(marker)) throw new Error(`${method} ${urlPath} answered a body containing a password hash (${marker})`);
    }
    return res;
  };
  server.request = request;
  server.get = (urlPath, headers) => request('GET', urlPath, undefined, headers);
  server.post = (urlPath, body, headers) => request('POST', urlPath, body ?? {}, headers);
  return server;
}

function now(server: TestServer): string {
  return toDbTime(server.clock.now());
}

async function userId(server: TestServer, username: string): Promise<number> {
  const row = await server.db('users').where({ username }).first('id');
  if (!row) throw new Error(`no user ${username}`);
  return Number(row.id);
}

/** Inserts a character row directly (the game routes are not under test here). */
async function insertCharacter(server: TestServer, ownerId: number | null, name: string, worldId: string, roomId: string | null = 'lockkeepers_square'): Promise<number> {
  const stamp = now(server);
  const [row] = await server
    .db('characters')
    .insert({ user_id: ownerId, name, name_key: name.toLowerCase(), world_id: worldId, room_id: roomId, created_at: stamp, updated_at: stamp })
    .returning('id');
  return Number(typeof row === 'object' ? (row as { id: number }).id : row);
}

/** A session's handle: its row id, which the listings show instead of the token. */
async function handleOf(server: TestServer, token: string): Promise<number> {
  const row = await sessionRow(server, token);
  if (!row) throw new Error('no such session');
  return Number(row.id);
}

/** Binds a session to a world and character the way character selection would. */
async function bindSession(server: TestServer, sessionId: string, worldId: string, characterId: number): Promise<void> {
  const updated = await server.db('sessions').where({ id: await handleOf(server, sessionId) }).update({ world_id: worldId, character_id: characterId });
  expect(updated).to.equal(1);
}

async function insertChat(server: TestServer, worldId: string, roomId: string, senderName: string, message: string, characterId: number | null = null): Promise<void> {
  await server.db('chat_messages').insert({
    world_id: worldId,
    room_id: roomId,
    character_id: characterId,
    sender_name: senderName,
    channel: 'say',
    recipient_character_id: null,
    message,
    created_at: now(server),
  });
}

function q(sessionId: string): string {
  return `session_id=${encodeURIComponent(sessionId)}`;
}

function expectError(res: HttpResponse, status: number, detail: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.detail, res.text).to.equal(detail);
}

/** Every key of every object in a JSON value, at any depth. */
function allKeys(value: unknown, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => allKeys(v, into));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      allKeys(v, into);
    }
  }
  return into;
}

async function pingStatus(server: TestServer, sessionId: string): Promise<number> {
  return (await server.post(`/ping/${sessionId}`)).status;
}

async function sessionCount(server: TestServer, username: string): Promise<number> {
  const row = await server.db('sessions').where({ user_id: await userId(server, username) }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

// ---------------------------------------------------------------------------------------
// 1. Permission denials: every admin route × every role, plus missing/bad sessions
// ---------------------------------------------------------------------------------------

const ROLES: readonly Role[] = ['player', 'worldbuilder', 'admin', 'superuser'];
const NOBODY = 'nobody_here';

type Expectation = { status: number; detail?: string; body?: unknown };

interface RouteCase {
  name: string;
  method: 'GET' | 'POST';
  /** Path without the session; GET routes get `?session_id=` appended. */
  path: string;
  /** POST body without the session id. */
  body?: Record<string, unknown>;
  /** Permission named in the 403 for roles lacking it; null when the route is role-gated otherwise. */
  permission: string | null;
  /** Lowest role that passes the permission check. */
  minRole: Role;
  /** What a role that passes gets (the request is built to fail harmlessly afterwards). */
  pass: Expectation;
  /** A success here stops the server: passing roles get a dedicated server. */
  stops?: boolean;
}

const ok200: Expectation = { status: 200 };
const unknownUser: Expectation = { status: 404, detail: `User '${NOBODY}' not found` };

const ROUTES: readonly RouteCase[] = [
  ...['players', 'connections', 'player-locations', 'tables', 'sessions', 'chat-messages'].map(
    (name): RouteCase => ({ name: `GET /admin/database/${name}`, method: 'GET', path: `/admin/database/${name}`, permission: 'view_logs', minRole: 'admin', pass: ok200 }),
  ),
  { name: 'GET /admin/database/table/worlds', method: 'GET', path: '/admin/database/table/worlds', permission: 'view_logs', minRole: 'admin', pass: ok200 },
  {
    name: 'POST /admin/session/kick',
    method: 'POST',
    path: '/admin/session/kick',
    body: { target_session_id: '999999' },
    permission: 'kick_users',
    minRole: 'admin',
    pass: { status: 200, body: { success: false, message: 'Session not found' } },
  },
  {
    name: 'POST /admin/user/create',
    method: 'POST',
    path: '/admin/user/create',
    // A one-letter username fails the first rule after the permission check.
    body: { username: 'x', role: 'player', password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD },
    permission: 'create_users',
    minRole: 'admin',
    pass: { status: 400, detail: 'Username must be 2-20 characters' },
  },
  ...(['ban', 'deactivate', 'unban'] as const).map(
    (action): RouteCase => ({
      name: `POST /admin/user/manage (${action})`,
      method: 'POST',
      path: '/admin/user/manage',
      body: { action, target_username: NOBODY },
      permission: 'ban_users',
      minRole: 'admin',
      pass: unknownUser,
    }),
  ),
  ...(['change_role', 'delete', 'change_password'] as const).map(
    (action): RouteCase => ({
      name: `POST /admin/user/manage (${action})`,
      method: 'POST',
      path: '/admin/user/manage',
      body: { action, target_username: NOBODY, new_role: 'player', new_password: 'Eight-ch' },
      permission: 'manage_users',
      minRole: 'superuser',
      pass: unknownUser,
    }),
  ),
  {
    name: 'POST /admin/user/world-access',
    method: 'POST',
    path: '/admin/user/world-access',
    body: { target_username: NOBODY, world_id: 'hollow_spire', can_access: true },
    permission: null,
    minRole: 'admin',
    pass: unknownUser,
  },
  {
    name: 'POST /admin/server/stop',
    method: 'POST',
    path: '/admin/server/stop',
    body: {},
    permission: 'stop_server',
    minRole: 'admin',
    pass: { status: 200 },
    stops: true,
  },
];

const RANK: Record<Role, number> = { player: 0, worldbuilder: 1, admin: 2, superuser: 3 };

function denial(route: RouteCase): Expectation {
  return route.permission === null
    ? { status: 403, detail: 'World access grants require admin or superuser role.' }
    : { status: 403, detail: `Insufficient permissions. Required: ${route.permission}` };
}

function callRoute(server: TestServer, route: RouteCase, sessionId: string | undefined): Promise<HttpResponse> {
  if (route.method === 'GET') return server.get(sessionId === undefined ? route.path : `${route.path}?${q(sessionId)}`);
  const body = sessionId === undefined ? { ...route.body } : { ...route.body, session_id: sessionId };
  return server.post(route.path, body);
}

function checkExpectation(res: HttpResponse, expected: Expectation): void {
  expect(res.status, res.text).to.equal(expected.status);
  if (expected.detail !== undefined) expect(res.body).to.deep.equal({ detail: expected.detail });
  if (expected.body !== undefined) expect(res.body).to.deep.equal(expected.body);
}

describe('admin: permission denials for every route and role', () => {
  let server: TestServer;
  const sessions = {} as Record<Role, string>;

  before(async () => {
    server = await startGuardedServer();
    for (const role of ROLES) sessions[role] = await sessionFor(server, `perm_${role}`.slice(0, 20), role);
  });
  after(async () => {
    await server.close();
  });

  for (const route of ROUTES) {
    for (const role of ROLES) {
      const passes = RANK[role] >= RANK[route.minRole];
      const expected = passes ? route.pass : denial(route);
      const label = passes ? `passes (${expected.status})` : `403 ${expected.detail}`;
      it(`${route.name} as ${role}: ${label}`, async () => {
        if (passes && route.stops) {
          // A successful stop ends the server: run it on one of its own.
          const own = await startGuardedServer();
          try {
            const sid = await sessionFor(own, `stop_${role}`, role);
            const res = await callRoute(own, route, sid);
            expect(res.status, res.text).to.equal(200);
            expect(res.body).to.deep.equal({ success: true, message: `Server shutdown initiated by stop_${role}.` });
            await own.stopped;
          } finally {
            await own.close();
          }
          return;
        }
        checkExpectation(await callRoute(server, route, sessions[role]), expected);
      });
    }

    it(`${route.name} without a session_id: 401`, async () => {
      expectError(await callRoute(server, route, undefined), 401, INVALID_SESSION);
    });
    it(`${route.name} with an empty or unknown session_id: 401`, async () => {
      expectError(await callRoute(server, route, ''), 401, INVALID_SESSION);
      expectError(await callRoute(server, route, '00000000-0000-4000-8000-000000000000'), 401, INVALID_SESSION);
    });
  }

  it('an expired session is 401 on admin routes (GET and POST)', async () => {
    server.clock.advance(481 * MINUTE);
    expectError(await server.get(`/admin/database/players?${q(sessions.admin)}`), 401, INVALID_SESSION);
    expectError(await server.post('/admin/session/kick', { session_id: sessions.superuser, target_session_id: '1' }), 401, INVALID_SESSION);
  });
});

// ---------------------------------------------------------------------------------------
// 2. Listings: players, sessions, connections, locations, chat messages, and world scoping
// ---------------------------------------------------------------------------------------

describe('admin: database listings', () => {
  let server: TestServer;
  let ada: string; // admin, unbound → unscoped listings
  let bea: string; // admin bound to emberwick → scoped listings
  let pim: string; // player, unbound
  let emi: string; // player bound to emberwick
  let hal: string; // player bound to hollow_spire
  const chars = {} as Record<'bea' | 'emi' | 'emi2' | 'hal' | 'lost', number>;
  const handles = {} as Record<'ada' | 'bea' | 'pim' | 'emi' | 'hal', number>;

  before(async () => {
    server = await startGuardedServer();
    ada = await sessionFor(server, 'ada_admin', 'admin');
    bea = await sessionFor(server, 'bea_admin', 'admin');
    pim = await sessionFor(server, 'pim', 'player');
    emi = await sessionFor(server, 'emi', 'player');
    hal = await sessionFor(server, 'hal', 'player');
    await createUser(server, 'nos', 'player'); // never logs in

    chars.bea = await insertCharacter(server, await userId(server, 'bea_admin'), 'Bea Lockward', 'emberwick');
    chars.emi = await insertCharacter(server, await userId(server, 'emi'), 'Emi Canalby', 'emberwick');
    chars.emi2 = await insertCharacter(server, await userId(server, 'emi'), 'Emi Spirewalker', 'hollow_spire', 'spire_threshold');
    chars.hal = await insertCharacter(server, await userId(server, 'hal'), 'Hal Mossgrove', 'hollow_spire', 'spire_threshold');
    chars.lost = await insertCharacter(server, await userId(server, 'pim'), 'Pim Nowhere', 'emberwick', 'no_such_room');
    await bindSession(server, bea, 'emberwick', chars.bea);
    await bindSession(server, emi, 'emberwick', chars.emi);
    await bindSession(server, hal, 'hollow_spire', chars.hal);
    for (const [name, token] of Object.entries({ ada, bea, pim, emi, hal })) handles[name as keyof typeof handles] = await handleOf(server, token);
  });
  after(async () => {
    await server.close();
  });

  it('players: spec keys on every row, online flags, character counts, and no password_hash anywhere', async () => {
    const res = await server.get(`/admin/database/players?${q(ada)}`);
    expect(res.status, res.text).to.equal(200);
    const players = res.body.players as Array<Record<string, unknown>>;
    expect(players.map((p) => p.username)).to.have.members(['ada_admin', 'bea_admin', 'pim', 'emi', 'hal', 'nos']);
    for (const row of players) {
      expect(row).to.include.keys('is_online_account', 'is_online_in_world', 'online_world_ids', 'character_count', 'username', 'role', 'is_active');
      expect(row.is_online_account).to.be.a('boolean');
      expect(row.is_online_in_world).to.be.a('boolean');
      expect(row.online_world_ids).to.be.an('array');
      expect(row.character_count).to.be.a('number');
    }
    expect(allKeys(res.body).has('password_hash')).to.equal(false);
    expect(res.text).to.not.contain('password_hash');

    const byName = new Map(players.map((p) => [p.username, p]));
    expect(byName.get('pim')).to.include({ is_online_account: true, is_online_in_world: false, character_count: 1, role: 'player', is_active: true });
    expect(byName.get('pim')!.online_world_ids).to.deep.equal([]);
    expect(byName.get('emi')).to.include({ is_online_account: true, is_online_in_world: true, character_count: 2 });
    expect(byName.get('emi')!.online_world_ids).to.deep.equal(['emberwick']);
    expect(byName.get('hal')!.online_world_ids).to.deep.equal(['hollow_spire']);
    expect(byName.get('nos')).to.include({ is_online_account: false, is_online_in_world: false, character_count: 0 });
    expect(byName.get('ada_admin')).to.include({ is_online_account: true, is_online_in_world: false, role: 'admin' });
  });

  it('players is not world-scoped: a bound caller still sees every account', async () => {
    const res = await server.get(`/admin/database/players?${q(bea)}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.players).to.have.length(6);
  });

  it('sessions and connections (unscoped caller) list the caller with username and an integer age_seconds', async () => {
    const sessionsRes = await server.get(`/admin/database/sessions?${q(ada)}`);
    expect(sessionsRes.status, sessionsRes.text).to.equal(200);
    const sessions = sessionsRes.body.sessions as Array<Record<string, unknown>>;
    expect(sessions.map((s) => s.id)).to.have.members(Object.values(handles));
    const mine = sessions.find((s) => s.id === handles.ada)!;
    expect(mine).to.include({ username: 'ada_admin', world_id: null, character_name: null });
    expect(sessions.find((s) => s.id === handles.emi)).to.include({ username: 'emi', world_id: 'emberwick', character_name: 'Emi Canalby' });

    const connRes = await server.get(`/admin/database/connections?${q(ada)}`);
    expect(connRes.status, connRes.text).to.equal(200);
    const connections = connRes.body.connections as Array<Record<string, unknown>>;
    expect(connections.map((c) => c.id)).to.have.members(Object.values(handles));
    for (const c of connections) {
      expect(Number.isInteger(c.age_seconds), JSON.stringify(c)).to.equal(true);
      expect(c.age_seconds as number).to.be.at.least(0);
    }
    expect(connections.find((c) => c.id === handles.ada)).to.include({ username: 'ada_admin' });
  });

  it('sessions and connections never show a token, nor its hash: their session_id is the handle', async () => {
    const hashes = (await server.db('sessions').select('token_hash')).map((r) => String(r.token_hash));
    expect(hashes).to.have.length(5);
    for (const listing of ['sessions', 'connections'] as const) {
      const res = await server.get(`/admin/database/${listing}?${q(ada)}`);
      expect(res.status, res.text).to.equal(200);
      for (const row of res.body[listing] as Array<Record<string, unknown>>) expect(row.session_id, listing).to.equal(String(row.id));
      expect(allKeys(res.body).has('token_hash'), listing).to.equal(false);
      for (const secret of [ada, bea, pim, emi, hal, ...hashes]) expect(res.text, listing).to.not.contain(secret);
    }
  });

  it('age_seconds counts from the last activity', async () => {
    server.clock.advance(90_000);
    // Listings read activity once written (within a second), so not the listing request's own.
    expect(await pingStatus(server, ada)).to.equal(200);
    await server.services.sessions.flushActivity();
    const res = await server.get(`/admin/database/connections?${q(ada)}`);
    const pimRow = (res.body.connections as Array<Record<string, unknown>>).find((c) => c.id === handles.pim)!;
    expect(pimRow.age_seconds as number).to.be.at.least(90);
    const adaRow = (res.body.connections as Array<Record<string, unknown>>).find((c) => c.id === handles.ada)!;
    expect(adaRow.age_seconds).to.equal(0);
  });

  it('a caller bound to a world sees only that world in connections and sessions', async () => {
    for (const listing of ['connections', 'sessions'] as const) {
      const res = await server.get(`/admin/database/${listing}?${q(bea)}`);
      expect(res.status, res.text).to.equal(200);
      const rows = res.body[listing] as Array<Record<string, unknown>>;
      expect(rows.map((r) => r.id), listing).to.have.members([handles.bea, handles.emi]);
      for (const r of rows) expect(r.world_id).to.equal('emberwick');
    }
  });

  it('player-locations carry room_id and zone_id, scoped to the bound caller world', async () => {
    const unscoped = await server.get(`/admin/database/player-locations?${q(ada)}`);
    expect(unscoped.status, unscoped.text).to.equal(200);
    const all = unscoped.body.locations as Array<Record<string, unknown>>;
    expect(all.map((l) => l.character_id)).to.have.members([chars.bea, chars.emi, chars.emi2, chars.hal, chars.lost]);
    const byId = new Map(all.map((l) => [l.character_id, l]));
    expect(byId.get(chars.emi)).to.include({ character_name: 'Emi Canalby', world_id: 'emberwick', room_id: 'lockkeepers_square', zone_id: 'canal_quarter' });
    expect(byId.get(chars.hal)).to.include({ world_id: 'hollow_spire', room_id: 'spire_threshold', zone_id: 'spire' });
    expect(byId.get(chars.lost)).to.include({ room_id: 'no_such_room', zone_id: null });

    const scoped = await server.get(`/admin/database/player-locations?${q(bea)}`);
    expect(scoped.status, scoped.text).to.equal(200);
    const rows = scoped.body.locations as Array<Record<string, unknown>>;
    expect(rows.map((l) => l.character_id)).to.have.members([chars.bea, chars.emi, chars.lost]);
    for (const r of rows) expect(r.world_id).to.equal('emberwick');
    expect(rows.find((r) => r.character_id === chars.bea)).to.include({ room_id: 'lockkeepers_square', zone_id: 'canal_quarter' });
    expect(rows.find((r) => r.character_id === chars.lost)).to.include({ zone_id: null });
  });

  it('chat-messages are newest first, scoped to the bound caller world, and honour limit', async () => {
    await insertChat(server, 'emberwick', 'lockkeepers_square', 'Emi Canalby', 'first in emberwick', chars.emi);
    await insertChat(server, 'hollow_spire', 'spire_threshold', 'Hal Mossgrove', 'hello from the spire', chars.hal);
    await insertChat(server, 'emberwick', 'lockkeepers_square', 'Bea Lockward', 'second in emberwick', chars.bea);

    const unscoped = await server.get(`/admin/database/chat-messages?${q(ada)}`);
    expect(unscoped.status, unscoped.text).to.equal(200);
    expect((unscoped.body.messages as Array<{ message: string }>).map((m) => m.message)).to.deep.equal([
      'second in emberwick',
      'hello from the spire',
      'first in emberwick',
    ]);

    const scoped = await server.get(`/admin/database/chat-messages?${q(bea)}`);
    expect(scoped.status, scoped.text).to.equal(200);
    const rows = scoped.body.messages as Array<Record<string, unknown>>;
    expect(rows.map((m) => m.message)).to.deep.equal(['second in emberwick', 'first in emberwick']);
    expect(rows[0]).to.include({ username: 'Bea Lockward', world_id: 'emberwick', room_id: 'lockkeepers_square', channel: 'say' });

    const limited = await server.get(`/admin/database/chat-messages?${q(ada)}&limit=1`);
    expect(limited.status, limited.text).to.equal(200);
    expect((limited.body.messages as Array<{ message: string }>).map((m) => m.message)).to.deep.equal(['second in emberwick']);
  });

  it('a session idle for 31 minutes is no longer a connection but is still a session', async () => {
    server.clock.advance(31 * MINUTE);
    // emi and the caller stay active; pim goes idle. Listings read activity once written.
    expect(await pingStatus(server, emi)).to.equal(200);
    expect(await pingStatus(server, ada)).to.equal(200);
    await server.services.sessions.flushActivity();
    const conn = await server.get(`/admin/database/connections?${q(ada)}`);
    expect(conn.status, conn.text).to.equal(200);
    const connIds = (conn.body.connections as Array<{ id: number }>).map((c) => c.id);
    expect(connIds).to.include.members([handles.ada, handles.emi]);
    expect(connIds).to.not.include(handles.pim);
    expect(connIds).to.not.include(handles.hal);

    const sess = await server.get(`/admin/database/sessions?${q(ada)}`);
    expect((sess.body.sessions as Array<{ id: number }>).map((s) => s.id)).to.include.members([handles.pim, handles.hal]);

    // The players listing counts unexpired sessions, not recent activity.
    const players = await server.get(`/admin/database/players?${q(ada)}`);
    expect((players.body.players as Array<Record<string, unknown>>).find((p) => p.username === 'pim')).to.include({ is_online_account: true });
  });
});

// ---------------------------------------------------------------------------------------
// 3 + 4. Tables and session kick
// ---------------------------------------------------------------------------------------

describe('admin: tables and session kick', () => {
  let server: TestServer;
  let admin: string;

  before(async () => {
    // Each table's listed row count is compared with its rows, read a moment later.
    server = await startGuardedServer({ worldClock: false });
    admin = await sessionFor(server, 'tab_admin', 'admin');
    await createUser(server, 'tab_one', 'player');
    await createUser(server, 'tab_two', 'worldbuilder');
    const rows = Array.from({ length: 105 }, (_, i) => ({
      world_id: i % 2 === 0 ? 'emberwick' : 'hollow_spire',
      room_id: 'lockkeepers_square',
      character_id: null,
      sender_name: 'Filler',
      channel: 'say',
      recipient_character_id: null,
      message: `filler ${i}`,
      created_at: now(server),
    }));
    await server.db.batchInsert('chat_messages', rows, 50);
  });
  after(async () => {
    await server.close();
  });

  describe('GET /admin/database/tables and /table/{name}', () => {
    it('lists our tables with typed columns and row counts, without the migration bookkeeping', async () => {
      const res = await server.get(`/admin/database/tables?${q(admin)}`);
      expect(res.status, res.text).to.equal(200);
      const tables = res.body.tables as Array<{ name: string; row_count: number; columns: Array<Record<string, unknown>> }>;
      const names = tables.map((t) => t.name);
      expect(names).to.include.members(['users', 'sessions', 'characters', 'worlds', 'world_permissions', 'chat_messages']);
      expect(names).to.not.include('knex_migrations');
      expect(names).to.not.include('knex_migrations_lock');
      expect(names.some((n) => n.startsWith('sqlite_') || n.startsWith('pg_'))).to.equal(false);
      for (const t of tables) {
        expect(t.columns, t.name).to.be.an('array').that.is.not.empty;
        for (const c of t.columns) {
          expect(Object.keys(c).sort(), t.name).to.deep.equal(['name', 'nullable', 'type']);
          expect(c.name).to.be.a('string');
          expect(c.type).to.be.a('string');
          expect(c.nullable).to.be.a('boolean');
        }
        expect(Number.isInteger(t.row_count)).to.equal(true);
      }
      const users = tables.find((t) => t.name === 'users')!;
      expect(users.row_count).to.equal(3);
      expect(users.columns.map((c) => c.name)).to.include.members(['id', 'username', 'password_hash', 'role']);
      expect(users.columns.find((c) => c.name === 'password_hash')).to.include({ nullable: false });
      expect(tables.find((t) => t.name === 'chat_messages')!.row_count).to.equal(105);
      expect(tables.find((t) => t.name === 'worlds')!.row_count).to.equal(2);
    });

    it('/table/users redacts password_hash in every row', async () => {
      // The hashes are real, so a leak would be visible.
      const stored = await server.db('users').select('password_hash');
      for (const r of stored) expect(String(r.password_hash)).to.match(/^\$2[ab]\$/);

      const res = await server.get(`/admin/database/table/users?${q(admin)}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.table).to.equal('users');
      const columns = res.body.columns as string[];
      const idx = columns.indexOf('password_hash');
      expect(idx).to.be.at.least(0);
      const rows = res.body.rows as unknown[][];
      expect(rows).to.have.length(3);
      for (const row of rows) {
        expect(row).to.have.length(columns.length);
        expect(row[idx]).to.equal('[redacted]');
      }
      expect(rows.map((r) => r[columns.indexOf('username')])).to.have.members(['tab_admin', 'tab_one', 'tab_two']);
    });

    it('every table: each declared secret column reads [redacted], and every column named like a credential is declared', async () => {
      const tables = (await server.get(`/admin/database/tables?${q(admin)}`)).body.tables as Array<{ name: string; row_count: number; columns: Array<{ name: string }> }>;
      expect(tables.map((t) => t.name)).to.include.members(Object.keys(SECRET_COLUMNS));
      for (const table of tables) {
        const columns = table.columns.map((c) => c.name);
        const secrets = SECRET_COLUMNS[table.name] ?? [];
        expect(columns, table.name).to.include.members([...secrets]);
        for (const c of columns.filter((c) => CREDENTIAL_LIKE.test(c))) expect(secrets, `${table.name}.${c} is not in SECRET_COLUMNS`).to.include(c);

        const res = await server.get(`/admin/database/table/${table.name}?${q(admin)}&limit=1000`);
        expect(res.status, res.text).to.equal(200);
        const rows = res.body.rows as unknown[][];
        expect(rows, table.name).to.have.length(Math.min(table.row_count, 1000));
        if (secrets.length > 0) expect(rows, `${table.name} has rows to redact`).to.not.be.empty;
        for (const c of secrets) {
          const idx = (res.body.columns as string[]).indexOf(c);
          for (const row of rows) expect(row[idx], `${table.name}.${c}`).to.equal('[redacted]');
        }
      }
    });

    it('/table/sessions shows neither the token nor its hash', async () => {
      const stored = (await server.db('sessions').select('token_hash')).map((r) => String(r.token_hash));
      expect(stored).to.not.be.empty;
      for (const hash of stored) expect(hash).to.match(/^[0-9a-f]{64}$/);
      const res = await server.get(`/admin/database/table/sessions?${q(admin)}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.columns).to.not.include('session_id');
      for (const secret of [admin, ...stored]) expect(res.text).to.not.contain(secret);
    });

    it('/table/worlds reads the world catalog', async () => {
      const res = await server.get(`/admin/database/table/worlds?${q(admin)}`);
      expect(res.status, res.text).to.equal(200);
      const ids = (res.body.rows as unknown[][]).map((r) => r[(res.body.columns as string[]).indexOf('id')]);
      expect(ids).to.have.members(['emberwick', 'hollow_spire']);
    });

    for (const name of ['sqlite_master', 'knex_migrations', 'knex_migrations_lock', 'pg_user', 'nope']) {
      it(`/table/${name} is 404 Table '${name}' does not exist`, async () => {
        expectError(await server.get(`/admin/database/table/${name}?${q(admin)}`), 404, `Table '${name}' does not exist`);
      });
    }

    it('limit defaults to 100, accepts 1..1000, and offset pages', async () => {
      const byDefault = await server.get(`/admin/database/table/chat_messages?${q(admin)}`);
      expect(byDefault.status, byDefault.text).to.equal(200);
      expect(byDefault.body.rows).to.have.length(100);
      const max = await server.get(`/admin/database/table/chat_messages?${q(admin)}&limit=1000`);
      expect(max.body.rows).to.have.length(105);

      for (const bad of ['limit=0', 'limit=1001', 'limit=-1', 'limit=abc', 'offset=-1']) {
        const res = await server.get(`/admin/database/table/chat_messages?${q(admin)}&${bad}`);
        expect(res.status, `${bad}: ${res.text}`).to.equal(400);
        expect(res.body.detail).to.be.a('string');
      }

      const all = await server.get(`/admin/database/table/users?${q(admin)}`);
      const idIdx = (all.body.columns as string[]).indexOf('id');
      const ids = (all.body.rows as unknown[][]).map((r) => r[idIdx]);
      const first = await server.get(`/admin/database/table/users?${q(admin)}&limit=1`);
      const second = await server.get(`/admin/database/table/users?${q(admin)}&limit=1&offset=1`);
      expect(first.status).to.equal(200);
      expect(second.status).to.equal(200);
      expect(first.body.rows).to.have.length(1);
      expect(second.body.rows).to.have.length(1);
      expect((first.body.rows as unknown[][])[0]![idIdx]).to.equal(ids[0]);
      expect((second.body.rows as unknown[][])[0]![idIdx]).to.equal(ids[1]);
      expect(ids[0]).to.not.equal(ids[1]);
      const beyond = await server.get(`/admin/database/table/users?${q(admin)}&offset=3`);
      expect(beyond.body.rows).to.deep.equal([]);
    });

    it('chat-messages limit defaults to 100 and is bounded 1..1000', async () => {
      const byDefault = await server.get(`/admin/database/chat-messages?${q(admin)}`);
      expect(byDefault.status, byDefault.text).to.equal(200);
      expect(byDefault.body.messages).to.have.length(100);
      expect((await server.get(`/admin/database/chat-messages?${q(admin)}&limit=1000`)).body.messages).to.have.length(105);
      expect((await server.get(`/admin/database/chat-messages?${q(admin)}&limit=0`)).status).to.equal(400);
      expect((await server.get(`/admin/database/chat-messages?${q(admin)}&limit=1001`)).status).to.equal(400);
    });
  });

  describe('POST /admin/session/kick', () => {
    const kick = (actor: string, target: string | number) => server.post('/admin/session/kick', { session_id: actor, target_session_id: String(target) });
    const kicked = { success: true, message: 'Session disconnected' };
    const outranked = (role: Role) => `Insufficient permissions to manage user with role '${role}'`;

    before(async () => {
      await createUser(server, 'tab_super', 'superuser');
      await createUser(server, 'tab_peer', 'admin');
    });

    it('disconnects a known session by its token; the target then gets 401 and other sessions live on', async () => {
      const target = await login(server, 'tab_one');
      const other = await login(server, 'tab_one');
      expect(await pingStatus(server, target)).to.equal(200);

      const res = await kick(admin, target);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(kicked);

      expectError(await server.post(`/ping/${target}`), 401, INVALID_SESSION);
      expect(await pingStatus(server, other)).to.equal(200);
      expect(await sessionRow(server, target)).to.equal(undefined);
    });

    it('disconnects a player session by the handle the session listing shows; its token then gets 401', async () => {
      const target = await login(server, 'tab_two');
      const listing = await server.get(`/admin/database/sessions?${q(admin)}`);
      expect(listing.status, listing.text).to.equal(200);
      const rows = (listing.body.sessions as Array<{ id: number; username: string }>).filter((r) => r.username === 'tab_two');
      expect(rows).to.have.length(1);
      expect(listing.text).to.not.contain(target);

      const res = await kick(admin, String(rows[0]!.id));
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(kicked);
      expectError(await server.post(`/ping/${target}`), 401, INVALID_SESSION);
    });

    it('answers 403 when the actor does not outrank the owner (by handle or token); the session stays valid', async () => {
      const superuser = await login(server, 'tab_super');
      const peer = await login(server, 'tab_peer');
      for (const [target, role] of [[superuser, 'superuser'], [peer, 'admin']] as const) {
        for (const reference of [target, String(await handleOf(server, target))]) {
          expectError(await kick(admin, reference), 403, outranked(role));
        }
        expect(await pingStatus(server, target)).to.equal(200);
      }
      // A superuser outranks the admin.
      expect((await kick(superuser, peer)).body).to.deep.equal(kicked);
      expectError(await server.post(`/ping/${peer}`), 401, INVALID_SESSION);
    });

    it("ends the actor's own sessions, the current one included, like logout", async () => {
      const mine = await login(server, 'tab_admin');
      const other = await login(server, 'tab_admin');
      expect((await kick(mine, await handleOf(server, other))).body).to.deep.equal(kicked);
      expectError(await server.post(`/ping/${other}`), 401, INVALID_SESSION);
      expect((await kick(mine, mine)).body).to.deep.equal(kicked);
      expectError(await server.post(`/ping/${mine}`), 401, INVALID_SESSION);
      expect(await pingStatus(server, admin)).to.equal(200);
    });

    it('answers 200 success false for an unknown (or already kicked) session', async () => {
      for (const unknown of ['999999', '9999999999', '00000000-0000-4000-8000-000000000000']) {
        const res = await kick(admin, unknown);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ success: false, message: 'Session not found' });
      }

      const target = await login(server, 'tab_two');
      const handle = await handleOf(server, target);
      expect((await kick(admin, target)).body).to.deep.equal(kicked);
      for (const again of [target, handle]) expect((await kick(admin, again)).body).to.deep.equal({ success: false, message: 'Session not found' });
    });

    it('a missing or empty target_session_id is a 400; one that is neither a handle nor a token names no session', async () => {
      expect((await server.post('/admin/session/kick', { session_id: admin })).status).to.equal(400);
      expect((await kick(admin, '')).status).to.equal(400);
      for (const other of ['no-such-session', '0', '07', '-1', '1.5', '12345678901', '0B6C4A1E-9F0D-4A2B-8C3D-5E6F7A8B9C0D']) {
        const res = await kick(admin, other);
        expect(res.status, `${other}: ${res.text}`).to.equal(200);
        expect(res.body).to.deep.equal({ success: false, message: 'Session not found' });
      }
    });
  });
});

// ---------------------------------------------------------------------------------------
// 5. POST /admin/user/create
// ---------------------------------------------------------------------------------------

describe('admin: POST /admin/user/create', () => {
  let server: TestServer;
  let su: string;
  let adm: string;

  const create = (session: string, username: string, role: string, password = GOOD_PASSWORD, confirm = password) =>
    server.post('/admin/user/create', { session_id: session, username, role, password, password_confirm: confirm });
  const created = (u: string, r: string) => ({ success: true, message: `User '${u}' created with role '${r}'. No character was provisioned automatically.` });

  before(async () => {
    server = await startGuardedServer();
    su = await sessionFor(server, 'cr_super', 'superuser');
    adm = await sessionFor(server, 'cr_admin', 'admin');
  });
  after(async () => {
    await server.close();
  });

  it('1. trimmed username outside 2..20 is 400 (checked before the role)', async () => {
    expectError(await create(adm, ' a ', 'player'), 400, 'Username must be 2-20 characters');
    expectError(await create(adm, '', 'player'), 400, 'Username must be 2-20 characters');
    expectError(await create(adm, 'x'.repeat(21), 'player'), 400, 'Username must be 2-20 characters');
    // The contract's role enum is checked before the service's ordered rules.
    expectContractError(await create(adm, 'a', 'king'), '/body/role');
  });

  it('2. an unknown role is a contract 400 naming the field (checked before rank and taken name)', async () => {
    expectContractError(await create(adm, 'new_one', 'king'), '/body/role');
    expectContractError(await create(adm, 'new_one', ''), '/body/role');
    expectContractError(await create(su, 'cr_admin', 'god'), '/body/role');
  });

  it('3. an admin may create only player and worldbuilder (403 before the taken-name check)', async () => {
    expectError(await create(adm, 'new_admin', 'admin'), 403, "Insufficient permissions to create role 'admin'");
    expectError(await create(adm, 'new_super', 'superuser'), 403, "Insufficient permissions to create role 'superuser'");
    expectError(await create(adm, 'cr_super', ' SuperUser '), 403, "Insufficient permissions to create role 'superuser'");
    expectError(await create(adm, 'new_admin', 'admin', 'weak', 'other'), 403, "Insufficient permissions to create role 'admin'");
  });

  it('role is trimmed and lower-cased: " Worldbuilder " creates a worldbuilder', async () => {
    const res = await create(adm, 'new_builder', ' Worldbuilder ');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal(created('new_builder', 'worldbuilder'));
    const row = await server.db('users').where({ username: 'new_builder' }).first();
    expect(row.role).to.equal('worldbuilder');
  });

  it('the username is stored trimmed', async () => {
    const res = await create(adm, '  trimmed_pl  ', 'player');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal(created('trimmed_pl', 'player'));
    expect(await server.db('users').where({ username: 'trimmed_pl' }).first()).to.not.equal(undefined);
  });

  it('a superuser may create every role', async () => {
    for (const role of ROLES) {
      const username = `su_made_${role}`.slice(0, 20);
      const res = await create(su, username, role);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(created(username, role));
    }
  });

  it('4. a taken username is 400 (before the password checks)', async () => {
    expectError(await create(adm, 'cr_super', 'player'), 400, 'Username already taken');
    expectError(await create(adm, ' new_builder ', 'player', 'weak', 'different'), 400, 'Username already taken');
  });

  it('5. differing passwords are 400 (before the policy)', async () => {
    expectError(await create(adm, 'mismatch', 'player', GOOD_PASSWORD, OTHER_GOOD_PASSWORD), 400, 'Passwords do not match');
    expectError(await create(adm, 'mismatch', 'player', 'abc', 'abd'), 400, 'Passwords do not match');
  });

  it('6. the STANDARD policy applies, its messages joined by single spaces', async () => {
    expectError(await create(adm, 'weakling', 'player', 'Tiny-Owl'), 400, 'Password must be at least 12 characters long (currently 8)');
    expectError(
      await create(adm, 'weakling', 'player', 'password'),
      400,
      'Password must be at least 12 characters long (currently 8) This password is too common and easily guessed. Please choose a more unique password.',
    );
    expectError(
      await create(adm, 'weakling', 'player', 'abc'),
      400,
      "Password must be at least 12 characters long (currently 3) Password contains sequential characters (abc). Avoid sequences like 'abc', '123', or 'xyz'.",
    );
    expect(await server.db('users').where({ username: 'weakling' }).first()).to.equal(undefined);
  });

  it('success: exact message; the row is permanent with origin = the creator role; login works', async () => {
    const res = await create(adm, 'made_by_admin', 'player');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal(created('made_by_admin', 'player'));

    const byAdmin = await server.db('users').where({ username: 'made_by_admin' }).first();
    expect(byAdmin.account_origin).to.equal('admin');
    expect(Boolean(byAdmin.is_guest)).to.equal(false);
    expect(byAdmin.guest_expires_at).to.equal(null);
    expect(Boolean(byAdmin.is_active)).to.equal(true);
    expect(String(byAdmin.password_hash)).to.match(/^\$2[ab]\$/);

    const bySuper = await server.db('users').where({ username: 'su_made_admin' }).first();
    expect(bySuper.account_origin).to.equal('superuser');
    expect(Boolean(bySuper.is_guest)).to.equal(false);

    // No character was provisioned.
    expect(await server.db('characters').where({ user_id: byAdmin.id })).to.deep.equal([]);

    const loginRes = await server.post('/login', { username: 'made_by_admin', password: GOOD_PASSWORD });
    expect(loginRes.status, loginRes.text).to.equal(200);
    expect(loginRes.body.role).to.equal('player');
  });

  it('admin-created accounts are never purged, while a self-registered one is', async () => {
    const reg = await server.post('/register', { username: 'visitor_v', password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD });
    expect(reg.status, reg.text).to.equal(200);

    server.clock.advance(48 * HOUR);
    const task = server.services.maintenanceTasks.find((t) => t.name === 'expired-temporary-accounts')!;
    expect(task).to.not.equal(undefined);
    await task.run();

    expect(await server.db('users').where({ username: 'visitor_v' }).first()).to.equal(undefined);
    for (const username of ['made_by_admin', 'new_builder', 'su_made_admin', 'su_made_superuser', 'su_made_player']) {
      expect(await server.db('users').where({ username }).first(), username).to.not.equal(undefined);
    }
    const loginRes = await server.post('/login', { username: 'made_by_admin', password: GOOD_PASSWORD });
    expect(loginRes.status, loginRes.text).to.equal(200);
  });
});

// ---------------------------------------------------------------------------------------
// 6. POST /admin/user/manage
// ---------------------------------------------------------------------------------------

describe('admin: POST /admin/user/manage', () => {
  let server: TestServer;
  let su: string;
  let adm: string;

  const manage = (session: string, action: string, target: string, extra: Record<string, unknown> = {}) =>
    server.post('/admin/user/manage', { session_id: session, action, target_username: target, ...extra });
  const done = (message: string) => ({ success: true, message });

  before(async () => {
    server = await startGuardedServer();
    su = await sessionFor(server, 'mg_super', 'superuser');
    adm = await sessionFor(server, 'mg_admin', 'admin');
    await createUser(server, 'mg_admin2', 'admin');
    await createUser(server, 'mg_super2', 'superuser');
    for (const name of ['rolly', 'banny', 'deaky', 'shouty', 'goner', 'passy', 'uppy']) await createUser(server, name, 'player');
    await createUser(server, 'buildy', 'worldbuilder');
  });
  after(async () => {
    await server.close();
  });

  describe('rule order', () => {
    it('1. an unknown action is a contract 400 naming the field', async () => {
      expectContractError(await manage(adm, 'fly', 'rolly'), '/body/action');
      expectContractError(await manage(adm, 'FLY', 'rolly'), '/body/action');
      expectContractError(await manage(su, '', 'rolly'), '/body/action');
      // The action is checked before the target exists.
      expectContractError(await manage(adm, 'fly', 'ghost'), '/body/action');
    });

    it('the permission depends on the action and is checked before the target lookup', async () => {
      expectError(await manage(adm, 'change_role', 'ghost', { new_role: 'player' }), 403, 'Insufficient permissions. Required: manage_users');
      expectError(await manage(adm, 'DELETE', 'rolly'), 403, 'Insufficient permissions. Required: manage_users');
      expectError(await manage(adm, 'change_password', 'rolly', { new_password: 'Eight-ch' }), 403, 'Insufficient permissions. Required: manage_users');
    });

    it('2a. an unknown target is 404', async () => {
      expectError(await manage(adm, 'ban', 'ghost'), 404, "User 'ghost' not found");
      expectError(await manage(su, 'change_role', 'ghost', { new_role: 'admin' }), 404, "User 'ghost' not found");
      // Lookup is exact (case-sensitive).
      expectError(await manage(adm, 'ban', 'Rolly'), 404, "User 'Rolly' not found");
    });

    it('2b. managing yourself is 400 for every action but change_password', async () => {
      expectError(await manage(adm, 'ban', 'mg_admin'), 400, 'Cannot manage your own account');
      expectError(await manage(adm, 'unban', 'mg_admin'), 400, 'Cannot manage your own account');
      expectError(await manage(su, 'change_role', 'mg_super', { new_role: 'player' }), 400, 'Cannot manage your own account');
      expectError(await manage(su, 'delete', 'mg_super'), 400, 'Cannot manage your own account');
      // change_password on yourself goes on to the rank rule, which nobody passes on themselves.
      expectError(await manage(su, 'change_password', 'mg_super', { new_password: 'Eight-ch' }), 403, "Insufficient permissions to manage user with role 'superuser'");
    });

    it('2c. a target of equal or higher rank is 403 (before the action fields are checked)', async () => {
      expectError(await manage(adm, 'ban', 'mg_admin2'), 403, "Insufficient permissions to manage user with role 'admin'");
      expectError(await manage(adm, 'deactivate', 'mg_super'), 403, "Insufficient permissions to manage user with role 'superuser'");
      expectError(await manage(su, 'change_role', 'mg_super2'), 403, "Insufficient permissions to manage user with role 'superuser'");
      expectError(await manage(su, 'change_password', 'mg_super2'), 403, "Insufficient permissions to manage user with role 'superuser'");
      expectError(await manage(su, 'delete', 'mg_super2'), 403, "Insufficient permissions to manage user with role 'superuser'");
      // The equal-rank admin is untouched.
      expect(Boolean((await server.db('users').where({ username: 'mg_admin2' }).first()).is_active)).to.equal(true);
    });
  });

  describe('change_role', () => {
    it('new_role is required and must be one of the four roles', async () => {
      expectError(await manage(su, 'change_role', 'rolly'), 400, 'new_role is required for change_role action');
      expectContractError(await manage(su, 'change_role', 'rolly', { new_role: '' }), '/body/new_role');
      expectContractError(await manage(su, 'change_role', 'rolly', { new_role: 'king' }), '/body/new_role');
    });

    it("succeeds with the exact message and takes effect on the target's very next request", async () => {
      const target = await login(server, 'uppy');
      expectError(await server.get(`/admin/database/players?${q(target)}`), 403, 'Insufficient permissions. Required: view_logs');

      const res = await manage(su, 'CHANGE_ROLE', 'uppy', { new_role: 'admin' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done("Successfully changed uppy's role to admin"));
      expect((await server.db('users').where({ username: 'uppy' }).first()).role).to.equal('admin');

      // Same session, no re-login: the role is re-read on every request.
      expect((await server.get(`/admin/database/players?${q(target)}`)).status).to.equal(200);

      const back = await manage(su, 'change_role', 'uppy', { new_role: 'player' });
      expect(back.body).to.deep.equal(done("Successfully changed uppy's role to player"));
      expectError(await server.get(`/admin/database/players?${q(target)}`), 403, 'Insufficient permissions. Required: view_logs');
    });

    it('player → worldbuilder', async () => {
      const res = await manage(su, 'change_role', 'rolly', { new_role: 'worldbuilder' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done("Successfully changed rolly's role to worldbuilder"));
      const loginRes = await server.post('/login', { username: 'rolly', password: GOOD_PASSWORD });
      expect(loginRes.body.role).to.equal('worldbuilder');
    });
  });

  describe('ban / deactivate / unban', () => {
    it("ban removes ALL the target's sessions and refuses login with 401 Account is deactivated", async () => {
      const s1 = await login(server, 'banny');
      const s2 = await login(server, 'banny');
      expect(await sessionCount(server, 'banny')).to.equal(2);

      const res = await manage(adm, 'BAN', 'banny');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done('Successfully banned banny'));

      expectError(await server.post(`/ping/${s1}`), 401, INVALID_SESSION);
      expectError(await server.post(`/ping/${s2}`), 401, INVALID_SESSION);
      expect(await sessionCount(server, 'banny')).to.equal(0);
      expectError(await server.post('/login', { username: 'banny', password: GOOD_PASSWORD }), 401, 'Account is deactivated');

      const players = await server.get(`/admin/database/players?${q(adm)}`);
      expect((players.body.players as Array<Record<string, unknown>>).find((p) => p.username === 'banny')).to.include({
        is_active: false,
        is_online_account: false,
      });
    });

    it('unban reactivates: exact message and login works again', async () => {
      const res = await manage(adm, 'unban', 'banny');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done('Successfully unbanned banny'));
      const loginRes = await server.post('/login', { username: 'banny', password: GOOD_PASSWORD });
      expect(loginRes.status, loginRes.text).to.equal(200);
    });

    it('deactivate is an alias of ban', async () => {
      const s = await login(server, 'deaky');
      const res = await manage(su, 'Deactivate', 'deaky');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done('Successfully banned deaky'));
      expectError(await server.post(`/ping/${s}`), 401, INVALID_SESSION);
      expectError(await server.post('/login', { username: 'deaky', password: GOOD_PASSWORD }), 401, 'Account is deactivated');
    });

    it('an admin may ban a worldbuilder; the ban does not touch other accounts', async () => {
      const bystander = await login(server, 'shouty');
      const res = await manage(adm, 'ban', 'buildy');
      expect(res.body).to.deep.equal(done('Successfully banned buildy'));
      expect(await pingStatus(server, bystander)).to.equal(200);
      expect(await pingStatus(server, adm)).to.equal(200);
    });
  });

  describe('delete', () => {
    it("an admin may not delete (manage_users)", async () => {
      expectError(await manage(adm, 'delete', 'goner'), 403, 'Insufficient permissions. Required: manage_users');
    });

    it('a superuser deletes: the row and its sessions go, its characters stay with user_id null', async () => {
      const gonerId = await userId(server, 'goner');
      const s1 = await login(server, 'goner');
      const s2 = await login(server, 'goner');
      const charId = await insertCharacter(server, gonerId, 'Goner Lately', 'emberwick');
      await bindSession(server, s1, 'emberwick', charId);
      await server.db('world_permissions').insert({ user_id: gonerId, world_id: 'hollow_spire', can_access: true, created_at: now(server) });

      const res = await manage(su, 'delete', 'goner');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done('Successfully deleted goner'));

      expect(await server.db('users').where({ username: 'goner' }).first()).to.equal(undefined);
      expect(await server.db('sessions').where({ user_id: gonerId })).to.deep.equal([]);
      expect(await server.db('world_permissions').where({ user_id: gonerId })).to.deep.equal([]);
      expectError(await server.post(`/ping/${s1}`), 401, INVALID_SESSION);
      expectError(await server.post(`/ping/${s2}`), 401, INVALID_SESSION);

      const character = await server.db('characters').where({ id: charId }).first();
      expect(character).to.not.equal(undefined);
      expect(character.user_id).to.equal(null);
      expect(character.name).to.equal('Goner Lately');

      expectError(await server.post('/login', { username: 'goner', password: GOOD_PASSWORD }), 401, 'Invalid username or password');
      expectError(await manage(su, 'delete', 'goner'), 404, "User 'goner' not found");
    });
  });

  describe('change_password', () => {
    it('new_password is required and needs at least 8 characters', async () => {
      expectError(await manage(su, 'change_password', 'passy'), 400, 'new_password is required for change_password action');
      expectError(await manage(su, 'change_password', 'passy', { new_password: '' }), 400, 'new_password is required for change_password action');
      expectError(await manage(su, 'change_password', 'passy', { new_password: 'abcdefg' }), 400, 'Password must be at least 8 characters long');
    });

    // The security audit asks for STANDARD on resets, over the specification's 8 characters
    // (docs/decisions.md); the 8-character check stays first, so its message still appears.
    it('then applies the STANDARD policy; login uses the new password', async () => {
      expectError(
        await manage(su, 'change_password', 'passy', { new_password: 'abcdefgh' }),
        400,
        "Password must be at least 12 characters long (currently 8) Password contains sequential characters (abc). Avoid sequences like 'abc', '123', or 'xyz'.",
      );
      const res = await manage(su, 'change_password', 'passy', { new_password: OTHER_GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal(done('Successfully changed password for passy'));

      const loginRes = await server.post('/login', { username: 'passy', password: OTHER_GOOD_PASSWORD });
      expect(loginRes.status, loginRes.text).to.equal(200);
      expectError(await server.post('/login', { username: 'passy', password: GOOD_PASSWORD }), 401, 'Invalid username or password');
      expect(String((await server.db('users').where({ username: 'passy' }).first()).password_hash)).to.match(/^\$2[ab]\$/);
    });

    it('a superuser may set an admin password', async () => {
      const res = await manage(su, 'change_password', 'mg_admin2', { new_password: 'Admin-Set-Pw' });
      expect(res.body).to.deep.equal(done('Successfully changed password for mg_admin2'));
      expect((await server.post('/login', { username: 'mg_admin2', password: 'Admin-Set-Pw' })).status).to.equal(200);
    });
  });
});

// ---------------------------------------------------------------------------------------
// 7. POST /admin/user/world-access
// ---------------------------------------------------------------------------------------

describe('admin: POST /admin/user/world-access', () => {
  let server: TestServer;
  let su: string;
  let adm: string;

  const grant = (session: string, target: string, worldId: string, canAccess: unknown) =>
    server.post('/admin/user/world-access', { session_id: session, target_username: target, world_id: worldId, can_access: canAccess });

  async function worldEntry(username: string, worldId: string): Promise<Record<string, unknown>> {
    const res = await server.post('/login', { username, password: GOOD_PASSWORD });
    expect(res.status, res.text).to.equal(200);
    const entry = (res.body.available_worlds as Array<Record<string, unknown>>).find((w) => w.id === worldId);
    expect(entry, `${worldId} in available_worlds`).to.not.equal(undefined);
    return entry!;
  }

  before(async () => {
    server = await startGuardedServer();
    su = await sessionFor(server, 'wa_super', 'superuser');
    adm = await sessionFor(server, 'wa_admin', 'admin');
    await createUser(server, 'wa_admin2', 'admin');
    await createUser(server, 'wa_player', 'player');
  });
  after(async () => {
    await server.close();
  });

  it('hollow_spire is invite-only: locked for a player without a grant', async () => {
    expect(await worldEntry('wa_player', 'hollow_spire')).to.include({ can_access: false, is_locked: true, access_mode: 'invite' });
  });

  it('an admin grants a player; the next login shows the world accessible', async () => {
    const res = await grant(adm, 'wa_player', 'hollow_spire', true);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.message).to.be.a('string').and.contain('wa_player').and.contain('hollow_spire');
    expect(Object.keys(res.body).sort()).to.deep.equal(['message', 'success']);
    expect(await worldEntry('wa_player', 'hollow_spire')).to.include({ can_access: true, is_locked: false });
    // Granting again is idempotent.
    expect((await grant(adm, 'wa_player', 'hollow_spire', true)).status).to.equal(200);
  });

  it('revoking (can_access false) locks the world again', async () => {
    const res = await grant(adm, 'wa_player', 'hollow_spire', false);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.message).to.be.a('string').and.contain('wa_player');
    expect(await worldEntry('wa_player', 'hollow_spire')).to.include({ can_access: false, is_locked: true });
  });

  it('unknown user 404, unknown world 404', async () => {
    expectError(await grant(adm, 'ghost', 'hollow_spire', true), 404, "User 'ghost' not found");
    expectError(await grant(adm, 'wa_player', 'atlantis', true), 404, "World 'atlantis' not found");
  });

  it('a target of equal or higher rank is 403; a superuser may grant an admin', async () => {
    expectError(await grant(adm, 'wa_admin2', 'hollow_spire', true), 403, "Insufficient permissions to manage user with role 'admin'");
    expectError(await grant(adm, 'wa_super', 'hollow_spire', true), 403, "Insufficient permissions to manage user with role 'superuser'");
    expect((await grant(su, 'wa_admin2', 'hollow_spire', true)).status).to.equal(200);
  });

  it('can_access must be a boolean (400), and every field is required', async () => {
    for (const bad of ['true', 1, null, 'yes']) {
      const res = await grant(adm, 'wa_player', 'hollow_spire', bad);
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).to.equal(400);
      expect(res.body.detail).to.be.a('string');
    }
    const missing = await server.post('/admin/user/world-access', { session_id: adm, target_username: 'wa_player', world_id: 'hollow_spire' });
    expect(missing.status, missing.text).to.equal(400);
    expect(await worldEntry('wa_player', 'hollow_spire')).to.include({ can_access: false });
  });
});

// ---------------------------------------------------------------------------------------
// 8. POST /admin/server/stop (dedicated server)
// ---------------------------------------------------------------------------------------

describe('admin: POST /admin/server/stop', () => {
  it('stops the server gracefully; close() afterwards still cleans up', async () => {
    const server = await startGuardedServer();
    let closed = false;
    try {
      const admin = await sessionFor(server, 'stopper', 'admin');
      const schema = usePostgres ? String(((await server.db.raw('select current_schema() as s')) as { rows: Array<{ s: string }> }).rows[0]!.s) : undefined;
      const dbDir = path.dirname(server.config.database.path);

      const res = await server.post('/admin/server/stop', { session_id: admin });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: 'Server shutdown initiated by stopper.' });

      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        server.stopped,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('server.stopped did not resolve')), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(server.logs.text()).to.contain('Shutdown complete');

      let failure: unknown;
      try {
        await fetch(`${server.url}/health`);
      } catch (err) {
        failure = err;
      }
      expect(failure, 'a request after the stop must fail to connect').to.be.instanceOf(Error);

      await server.close();
      closed = true;
      if (usePostgres) {
        const pg = knexFactory({ client: 'pg', connection: process.env.MUD_TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
        try {
          const left = await pg('information_schema.schemata').where({ schema_name: schema }).first();
          expect(left, `schema ${schema} dropped`).to.equal(undefined);
        } finally {
          await pg.destroy();
        }
      } else {
        expect(existsSync(dbDir), 'temporary database directory removed').to.equal(false);
      }
      // stop() is idempotent.
      await server.stop();
    } finally {
      if (!closed) await server.close();
    }
  });
});

// ---------------------------------------------------------------------------------------
// 9. No password hash ever left the server
// ---------------------------------------------------------------------------------------

describe('admin: no response carried a password hash', () => {
  it('every response above was checked for $2a$ / $2b$', () => {
    // The guard throws on the first offending response; here we only prove it ran.
    expect(responsesChecked).to.be.greaterThan(100);
  });
});
