/**
 * Accounts through HTTP against the real app: registration, login, sessions (client type,
 * 401 rules, sliding and fixed expiry, role re-read, single-session mode, sweep), logout,
 * ping, password change, temporary-account expiry and purge, rate limits, stored bcrypt
 * hashes, the bootstrap superuser, and that no secret ever leaves in a body or a log line.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startTestServer, TestClock, type HttpResponse, type TestServer, type TestServerOptions } from '../helpers/test-server.ts';
import { createUser, login, sessionFor, sessionRow, GOOD_PASSWORD, OTHER_GOOD_PASSWORD } from '../helpers/accounts.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { toDbTime } from '../../src/db/clock.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const INVALID_SESSION = 'Invalid or expired session';
const BAD_CREDENTIALS = 'Invalid username or password';
const BAD_USERNAME = 'Username must be 2-20 characters';
const LOGIN_OK = 'Login successful. Select a character to enter the world.';
const TOO_SHORT = (n: number) => `Password must be at least 12 characters long (currently ${n})`;
const TOO_COMMON = 'This password is too common and easily guessed. Please choose a more unique password.';
const registered = (username: string) =>
  `Temporary account created successfully! You can now login as ${username}. Character creation is a separate step.`;

/** Passes the STANDARD policy; used as a changed password. */
const THIRD_PASSWORD = 'Amber-Falcon-Rises-7';
/** A wrong guess that would itself pass the policy. */
const WRONG_PASSWORD = 'Wrong-Guess-Again-5';
/** Every strong password this file sends: none may ever appear in a body or a log line. */
const SECRET_PASSWORDS = [GOOD_PASSWORD, OTHER_GOOD_PASSWORD, THIRD_PASSWORD, WRONG_PASSWORD];

/**
 * Hashes written by the reference server's bcrypt (Python `bcrypt`, generated once for this file):
 * `bcrypt.hashpw(b'Quiet-Lantern-42', bcrypt.gensalt(12))` and, in the older `$2a$` flavour at
 * cost 10, `bcrypt.hashpw(b'Copper-Heron-Tide-9', bcrypt.gensalt(10, prefix=b'2a'))`.
 */
const REFERENCE_2B_12_HASH = '$2b$12$ryatTvgIqA4lGIv1wlOWEeDHxzHAbVLSnGeQOlVOrB1JBuN9nUBhm';
const LEGACY_2A_10_HASH = '$2a$10$fw5wwBqjYNsdbZx/6..6ueSvqXC8r1Txn2FzqIXyzO04wD9vzrMdm';

/** Everything the servers of this file said, for the secrets checks at the end. */
const seen = {
  bodies: [] as string[],
  sessionIds: new Set<string>(),
  logs: [] as MemoryTransport[],
};

function record(res: HttpResponse): HttpResponse {
  seen.bodies.push(res.text);
  const sid: unknown = res.body?.session_id;
  if (typeof sid === 'string' && sid !== '') seen.sessionIds.add(sid);
  return res;
}

/** Starts a test server whose every response and log line is kept for the secrets checks. */
async function start(options: TestServerOptions = {}): Promise<TestServer> {
  const server = await startTestServer(options);
  const request = server.request;
  server.request = async (method, urlPath, body, headers) => record(await request(method, urlPath, body, headers));
  server.get = (urlPath, headers) => server.request('GET', urlPath, undefined, headers);
  server.post = (urlPath, body, headers) => server.request('POST', urlPath, body ?? {}, headers);
  seen.logs.push(server.logs);
  return server;
}

/** A second instance on the same database (a restart, or a second node), with its own clock. */
async function startAnotherInstance(server: TestServer, clock: TestClock, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const logs = new MemoryTransport();
  seen.logs.push(logs);
  const searchPath = (server.db.client.config as { searchPath?: string[] }).searchPath;
  return startServer({ config: server.config, logger: createLogger('debug', [logs]), clock: clock.now, dbSchema: searchPath?.[0], env });
}

// Rows come back as the driver gives them (SQLite booleans are 0/1).
async function userRow(server: TestServer, username: string): Promise<any> {
  return server.db('users').where({ username }).first();
}

async function sessionCount(server: TestServer, userId: number): Promise<number> {
  const row = await server.db('sessions').where({ user_id: userId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

function register(server: TestServer, username: string, password = GOOD_PASSWORD, confirm = password): Promise<HttpResponse> {
  return server.post('/register', { username, password, password_confirm: confirm });
}

const ping = (server: TestServer, sessionId: string) => server.post(`/ping/${sessionId}`);

function expectError(res: HttpResponse, status: number, detail: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.deep.equal({ detail });
}

function expectRateLimited(res: HttpResponse): void {
  expect(res.status, res.text).to.equal(429);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).to.match(/^\d+$/);
  expect(Number(retryAfter)).to.be.within(1, 60);
  expect(Object.keys(res.body)).to.deep.equal(['detail']);
  expect(res.body.detail).to.be.a('string').that.is.not.empty;
}

function expiredAccountsPurge(server: TestServer | RunningServer) {
  const task = server.services.maintenanceTasks.find((t) => t.name === 'expired-temporary-accounts');
  if (!task) throw new Error('no expired-temporary-accounts task');
  return task;
}

describe('accounts', () => {
  let server: TestServer;
  before(async () => {
    server = await start();
  });
  after(async () => {
    await server.close();
  });

  describe('POST /register', () => {
    it('rejects a trimmed username shorter than 2 or longer than 20 characters', async () => {
      for (const username of ['a', ' a ', '    ', '', 'x'.repeat(21), `  ${'y'.repeat(21)}  `]) {
        expectError(await register(server, username), 400, BAD_USERNAME);
      }
    });

    it('checks the username length first (rule 1 before rules 3 and 4)', async () => {
      expectError(await register(server, 'q', 'password', 'different'), 400, BAD_USERNAME);
    });

    it('creates a temporary player account: role player, guest, visitor, expiry 24 h after creation', async () => {
      const res = await register(server, 'alice');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: registered('alice') });
      const now = server.clock.now();
      const row = await userRow(server, 'alice');
      expect(row.role).to.equal('player');
      expect(Boolean(row.is_guest)).to.equal(true);
      expect(Boolean(row.is_active)).to.equal(true);
      expect(row.account_origin).to.equal('visitor');
      expect(row.created_at).to.equal(toDbTime(now));
      expect(row.guest_expires_at).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(row.guest_expires_at).to.equal(toDbTime(new Date(now.getTime() + 24 * HOUR)));
      expect(row.last_login).to.equal(null);
      // No character is created by registration.
      const characters = await server.db('characters').where({ user_id: row.id });
      expect(characters).to.deep.equal([]);
    });

    it('accepts the boundary lengths 2 and 20 and stores the trimmed name', async () => {
      const two = await register(server, '  bo  ');
      expect(two.status, two.text).to.equal(200);
      expect(two.body.message).to.equal(registered('bo'));
      expect(await userRow(server, 'bo')).to.include({ username: 'bo' });
      expect(await userRow(server, '  bo  ')).to.equal(undefined);
      const twenty = 't'.repeat(19) + 'z';
      expect((await register(server, twenty)).status).to.equal(200);
    });

    it('rejects a taken username, also when the request adds surrounding spaces', async () => {
      expectError(await register(server, 'alice'), 400, 'Username already taken');
      expectError(await register(server, '  alice '), 400, 'Username already taken');
    });

    // Unique in any letter case (the security audit), while login looks names up exactly.
    it('refuses a name taken in another letter case; login still looks names up exactly', async () => {
      expectError(await register(server, 'Alice'), 400, 'Username already taken');
      expectError(await register(server, 'ALICE'), 400, 'Username already taken');
      expect(await userRow(server, 'Alice')).to.equal(undefined);
      expectError(await server.post('/login', { username: 'Alice', password: GOOD_PASSWORD }), 401, BAD_CREDENTIALS);
      expect((await server.post('/login', { username: 'alice', password: GOOD_PASSWORD })).status).to.equal(200);
    });

    it('checks the taken name before the password match (rule 2 before rule 3)', async () => {
      expectError(await register(server, 'alice', GOOD_PASSWORD, OTHER_GOOD_PASSWORD), 400, 'Username already taken');
      expectError(await register(server, 'alice', 'password', 'password'), 400, 'Username already taken');
    });

    it('rejects passwords that differ, before the policy (rule 3 before rule 4)', async () => {
      expectError(await register(server, 'carol', GOOD_PASSWORD, OTHER_GOOD_PASSWORD), 400, 'Passwords do not match');
      expectError(await register(server, 'carol', 'password', 'passw0rd'), 400, 'Passwords do not match');
      expect(await userRow(server, 'carol')).to.equal(undefined);
    });

    it('applies the STANDARD policy and joins its messages with single spaces', async () => {
      expectError(await register(server, 'carol', 'password'), 400, `${TOO_SHORT(8)} ${TOO_COMMON}`);
      expectError(
        await register(server, 'carol', 'abcd'),
        400,
        `${TOO_SHORT(4)} Password contains sequential characters (abc). Avoid sequences like 'abc', '123', or 'xyz'.`,
      );
      expectError(
        await register(server, 'carol', 'Lantern-9999-Quiet'),
        400,
        'Password contains too many repeated characters (9999). Avoid repeating the same character more than 3 times.',
      );
      expect(await userRow(server, 'carol')).to.equal(undefined);
    });

    it('answers a missing field with 400, a readable detail and the errors list', async () => {
      const res = await server.post('/register', { username: 'carol', password: GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.detail).to.be.a('string').and.match(/password_confirm/);
      expect(res.body.errors).to.be.an('array').that.is.not.empty;
      expect(res.body.errors.map((e: { path: string }) => e.path)).to.include('/body/password_confirm');
      expect(await userRow(server, 'carol')).to.equal(undefined);
    });
  });

  describe('POST /login', () => {
    before(async () => {
      await createUser(server, 'lena', 'player');
      await createUser(server, 'ada', 'admin');
      await createUser(server, 'gina', 'player');
    });

    it('rejects a trimmed username outside 2..20 with 400', async () => {
      expectError(await server.post('/login', { username: ' l ', password: GOOD_PASSWORD }), 400, BAD_USERNAME);
      expectError(await server.post('/login', { username: 'l'.repeat(21), password: GOOD_PASSWORD }), 400, BAD_USERNAME);
    });

    it('answers an unknown user and a wrong password with the same 401', async () => {
      const unknown = await server.post('/login', { username: 'nobody', password: GOOD_PASSWORD });
      const wrong = await server.post('/login', { username: 'lena', password: WRONG_PASSWORD });
      expectError(unknown, 401, BAD_CREDENTIALS);
      expectError(wrong, 401, BAD_CREDENTIALS);
      expect(unknown.text).to.equal(wrong.text);
    });

    it('refuses a deactivated account with 401, naming it only to the right password', async () => {
      const id = await createUser(server, 'banned1', 'player');
      await server.services.users.update(id, { isActive: false });
      expectError(await server.post('/login', { username: 'banned1', password: WRONG_PASSWORD }), 401, BAD_CREDENTIALS);
      expectError(await server.post('/login', { username: 'banned1', password: GOOD_PASSWORD }), 401, 'Account is deactivated');
      expect(await sessionCount(server, id)).to.equal(0);
    });

    it('returns a UUID v4 session, the role, no characters and both demo worlds; sets last_login', async () => {
      expect((await userRow(server, 'lena')).last_login).to.equal(null);
      const res = await server.post('/login', { username: 'lena', password: GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys('success', 'message', 'session_id', 'role', 'characters', 'available_worlds');
      expect(res.body).to.include({ success: true, message: LOGIN_OK, role: 'player' });
      expect(res.body.session_id).to.match(UUID_V4);
      expect(res.body.characters).to.deep.equal([]);
      const worlds = res.body.available_worlds as Array<Record<string, unknown>>;
      expect(worlds.map((w) => w.id)).to.deep.equal(['emberwick', 'hollow_spire']);
      expect(worlds[0]).to.include({
        id: 'emberwick',
        can_access: true,
        can_create: true,
        access_mode: 'open',
        naming_mode: 'generated',
        slot_limit_per_account: 3,
        current_character_count: 0,
        is_locked: false,
        access_reason: 'ok',
      });
      expect(worlds[1]).to.include({
        id: 'hollow_spire',
        can_access: false,
        can_create: false,
        access_mode: 'invite',
        current_character_count: 0,
        is_locked: true,
        access_reason: 'invite_required',
      });
      expect((await userRow(server, 'lena')).last_login).to.equal(toDbTime(server.clock.now()));
      expect(await sessionRow(server, res.body.session_id)).to.include({ character_id: null, world_id: null });
    });

    it('shows an admin every world as accessible', async () => {
      const res = await server.post('/login', { username: 'ada', password: GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.role).to.equal('admin');
      const spire = res.body.available_worlds.find((w: { id: string }) => w.id === 'hollow_spire');
      expect(spire).to.include({ can_access: true, can_create: true, is_locked: false, access_reason: 'ok' });
    });

    it('opens an invite-only world to a player with a grant', async () => {
      const id = (await userRow(server, 'gina')).id as number;
      await server.services.userAdmin.grant(id, 'hollow_spire', true);
      const res = await server.post('/login', { username: 'gina', password: GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
      const spire = res.body.available_worlds.find((w: { id: string }) => w.id === 'hollow_spire');
      expect(spire).to.include({ can_access: true, can_create: true, is_locked: false, access_reason: 'ok', slot_limit_per_account: 1 });
    });
  });

  describe('sessions', () => {
    before(async () => {
      await createUser(server, 'sam', 'player');
    });

    it('stores only the SHA-256 of the token: no column of any session row holds the token', async () => {
      const sid = await login(server, 'sam');
      const rows = await server.db('sessions').select('*');
      expect(rows).to.not.be.empty;
      for (const row of rows) expect(JSON.stringify(row)).to.not.contain(sid);
      expect(await sessionRow(server, sid)).to.include({ token_hash: createHash('sha256').update(sid).digest('hex') });
    });

    it('stores X-Client-Type trimmed and lower-cased, `unknown` when absent or blank', async () => {
      const cases: Array<[Record<string, string>, string]> = [
        [{ 'X-Client-Type': '  WeB ' }, 'web'],
        [{ 'X-Client-Type': 'TUI' }, 'tui'],
        [{}, 'unknown'],
        [{ 'X-Client-Type': '' }, 'unknown'],
        [{ 'X-Client-Type': '   ' }, 'unknown'],
      ];
      for (const [headers, expected] of cases) {
        const sid = await login(server, 'sam', GOOD_PASSWORD, headers);
        expect((await sessionRow(server, sid)).client_type, JSON.stringify(headers)).to.equal(expected);
      }
    });

    it('answers a missing session_id with 401, not 400 (body and query)', async () => {
      expectError(await server.post('/logout', {}), 401, INVALID_SESSION);
      expectError(await server.post('/change-password', { old_password: GOOD_PASSWORD, new_password: THIRD_PASSWORD }), 401, INVALID_SESSION);
      expectError(await server.get('/admin/database/players'), 401, INVALID_SESSION);
    });

    it('answers an empty or unknown session_id with 401', async () => {
      const unknown = '5f0c6a1e-2222-4a2b-8c3d-123456789abc';
      expectError(await server.post('/logout', { session_id: '' }), 401, INVALID_SESSION);
      expectError(await server.post('/logout', { session_id: unknown }), 401, INVALID_SESSION);
      expectError(await server.post('/logout', { session_id: 'not-a-uuid' }), 401, INVALID_SESSION);
      expectError(await server.get('/admin/database/players?session_id='), 401, INVALID_SESSION);
      expectError(await server.get(`/admin/database/players?session_id=${unknown}`), 401, INVALID_SESSION);
      expectError(await ping(server, unknown), 401, INVALID_SESSION);
    });

    it('applies a role change to the session\'s very next request', async () => {
      await createUser(server, 'riley', 'player');
      const sid = await login(server, 'riley');
      const boss = await sessionFor(server, 'rileys_boss', 'superuser');
      const setRole = async (role: string) => {
        const res = await server.post('/admin/user/manage', { session_id: boss, action: 'change_role', target_username: 'riley', new_role: role });
        expect(res.body.success, res.text).to.equal(true);
      };
      expectError(await server.get(`/admin/database/players?session_id=${sid}`), 403, 'Insufficient permissions. Required: view_logs');
      await setRole('admin');
      const promoted = await server.get(`/admin/database/players?session_id=${sid}`);
      expect(promoted.status, promoted.text).to.equal(200);
      expect(promoted.body.players).to.be.an('array').that.is.not.empty;
      await setRole('player');
      expectError(await server.get(`/admin/database/players?session_id=${sid}`), 403, 'Insufficient permissions. Required: view_logs');
    });

    it('opens a session for 480 minutes', async () => {
      const sid = await login(server, 'sam');
      const row = await sessionRow(server, sid);
      const now = server.clock.now();
      expect(row.created_at).to.equal(toDbTime(now));
      expect(row.last_activity).to.equal(toDbTime(now));
      expect(row.expires_at).to.equal(toDbTime(new Date(now.getTime() + 480 * MINUTE)));
    });

    it('slides the expiry on each validated request and refuses an expired session, which the sweep removes', async () => {
      const sid = await login(server, 'sam');
      server.clock.advance(479 * MINUTE);
      expect((await ping(server, sid)).status).to.equal(200);
      await server.services.sessions.flushActivity();
      const row = await sessionRow(server, sid);
      expect(row.expires_at).to.equal(toDbTime(new Date(server.clock.now().getTime() + 480 * MINUTE)));
      expect(row.last_activity).to.equal(toDbTime(server.clock.now()));
      server.clock.advance(479 * MINUTE);
      expect((await ping(server, sid)).status).to.equal(200);
      server.clock.advance(481 * MINUTE);
      expectError(await ping(server, sid), 401, INVALID_SESSION);
      await server.services.sessions.sweepExpired();
      expect(await sessionRow(server, sid)).to.equal(undefined);
    });

    it('removes expired rows in the periodic sweep, keeping live ones', async () => {
      const old1 = await login(server, 'sam');
      const old2 = await login(server, 'sam');
      server.clock.advance(481 * MINUTE);
      const fresh = await login(server, 'sam');
      const removed = await server.services.sessions.sweepExpired();
      expect(removed).to.be.at.least(2);
      expect(await sessionRow(server, old1)).to.equal(undefined);
      expect(await sessionRow(server, old2)).to.equal(undefined);
      expect(await sessionRow(server, fresh)).to.not.equal(undefined);
      expect((await ping(server, fresh)).status).to.equal(200);
      const left = await server.db('sessions').where('expires_at', '<=', toDbTime(server.clock.now())).count({ n: '*' }).first();
      expect(Number(left?.n)).to.equal(0);
    });
  });

  describe('POST /logout and POST /ping/{session_id}', () => {
    let pingedSid = '';
    before(async () => {
      await createUser(server, 'otto', 'player');
    });

    it('ping answers {ok: true} for a valid session', async () => {
      pingedSid = await login(server, 'otto');
      const res = await ping(server, pingedSid);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ ok: true });
    });

    it('logs only the first 8 characters of a session id in a path', () => {
      const text = server.logs.text();
      expect(text).to.contain(`/ping/${pingedSid.slice(0, 8)}…`);
      expect(text).to.not.contain(pingedSid);
    });

    it('logout says goodbye, ends only that session, and the session is then 401', async () => {
      const sid = await login(server, 'otto');
      const other = await login(server, 'otto');
      const res = await server.post('/logout', { session_id: sid });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: 'Goodbye, otto!' });
      expect(await sessionRow(server, sid)).to.equal(undefined);
      expectError(await ping(server, sid), 401, INVALID_SESSION);
      expectError(await server.post('/logout', { session_id: sid }), 401, INVALID_SESSION);
      expect((await ping(server, other)).status).to.equal(200);
    });
  });

  describe('POST /change-password', () => {
    let sid = '';
    let otherSid = '';
    before(async () => {
      await createUser(server, 'cleo', 'player');
      sid = await login(server, 'cleo');
      otherSid = await login(server, 'cleo');
    });

    const change = (oldPassword: string, newPassword: string, sessionId = sid) =>
      server.post('/change-password', { session_id: sessionId, old_password: oldPassword, new_password: newPassword });

    it('rejects a wrong current password with 401, before the other checks', async () => {
      expectError(await change(WRONG_PASSWORD, THIRD_PASSWORD), 401, 'Current password is incorrect');
      expectError(await change(WRONG_PASSWORD, WRONG_PASSWORD), 401, 'Current password is incorrect');
      expectError(await change(WRONG_PASSWORD, 'aaaa'), 401, 'Current password is incorrect');
    });

    it('rejects a new password equal to the current one with 400', async () => {
      expectError(await change(GOOD_PASSWORD, GOOD_PASSWORD), 400, 'New password must be different from current password');
    });

    it('applies the STANDARD policy to the new password', async () => {
      expectError(
        await change(GOOD_PASSWORD, 'aaaa'),
        400,
        `${TOO_SHORT(4)} Password contains too many repeated characters (aaaa). Avoid repeating the same character more than 3 times.`,
      );
      expectError(await change(GOOD_PASSWORD, 'password'), 400, `${TOO_SHORT(8)} ${TOO_COMMON}`);
    });

    // The security audit: a session opened with the old password must not outlive it.
    it('changes the password: only the new one logs in, the other sessions end, this one stays', async () => {
      const res = await change(GOOD_PASSWORD, THIRD_PASSWORD);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: 'Password changed successfully!' });
      expectError(await server.post('/login', { username: 'cleo', password: GOOD_PASSWORD }), 401, BAD_CREDENTIALS);
      expect((await server.post('/login', { username: 'cleo', password: THIRD_PASSWORD })).status).to.equal(200);
      expect((await ping(server, sid)).status).to.equal(200);
      expectError(await ping(server, otherSid), 401, INVALID_SESSION);
      expect((await userRow(server, 'cleo')).password_hash).to.match(/^\$2b\$04\$/);
    });
  });

  describe('temporary accounts', () => {
    it('refuses an expired registered account at login and purges it; admin-created and system accounts stay', async () => {
      expect((await register(server, 'temp1')).status).to.equal(200);
      const temp1 = (await userRow(server, 'temp1')).id as number;
      await createUser(server, 'sys1', 'player');
      const adminSid = await (async () => {
        await createUser(server, 'tadmin', 'admin');
        return login(server, 'tadmin');
      })();
      const made = await server.post('/admin/user/create', {
        session_id: adminSid,
        username: 'made1',
        role: 'player',
        password: OTHER_GOOD_PASSWORD,
        password_confirm: OTHER_GOOD_PASSWORD,
      });
      expect(made.status, made.text).to.equal(200);
      expect(await userRow(server, 'made1')).to.include({ account_origin: 'admin' });

      server.clock.advance(23 * HOUR);
      await login(server, 'temp1');
      expect(await sessionCount(server, temp1)).to.equal(1);
      server.clock.advance(2 * HOUR);
      expectError(await server.post('/login', { username: 'temp1', password: GOOD_PASSWORD }), 401, BAD_CREDENTIALS);

      const removed = await expiredAccountsPurge(server).run();
      expect(removed).to.be.at.least(1);
      expect(await userRow(server, 'temp1')).to.equal(undefined);
      expect(await sessionCount(server, temp1)).to.equal(0);
      for (const username of ['sys1', 'tadmin', 'made1']) expect(await userRow(server, username), username).to.not.equal(undefined);
      await login(server, 'sys1');
      await login(server, 'made1', OTHER_GOOD_PASSWORD);
      // Nothing registered so far survives its 24 h.
      const leftover = await server.db('users').where({ account_origin: 'visitor' }).count({ n: '*' }).first();
      expect(Number(leftover?.n)).to.equal(0);
    });

    it('purges expired temporary accounts at the next start', async () => {
      expect((await register(server, 'temp2')).status).to.equal(200);
      const later = new TestClock(new Date(server.clock.now().getTime() + 25 * HOUR));
      const restarted = await startAnotherInstance(server, later);
      try {
        expect(await userRow(server, 'temp2')).to.equal(undefined);
        expect(await userRow(server, 'sys1')).to.not.equal(undefined);
      } finally {
        await restarted.stop();
      }
    });

    it('deletes each expired account once when two purges run concurrently', async () => {
      for (const username of ['temp3', 'temp4', 'temp5']) expect((await register(server, username)).status).to.equal(200);
      server.clock.advance(25 * HOUR);
      const due = await server.db('users').where({ is_guest: true }).andWhere('guest_expires_at', '<=', toDbTime(server.clock.now())).count({ n: '*' }).first();
      expect(Number(due?.n)).to.equal(3);
      const purge = expiredAccountsPurge(server);
      const [a, b] = await Promise.all([purge.run(), purge.run()]);
      expect(a + b).to.equal(3);
      for (const username of ['temp3', 'temp4', 'temp5']) expect(await userRow(server, username)).to.equal(undefined);
      expect(await purge.run()).to.equal(0);
    });
  });

  describe('stored password hashes', () => {
    async function insertWithHash(username: string, passwordHash: string): Promise<void> {
      await server.services.users.create({
        username,
        passwordHash,
        role: 'player',
        isGuest: false,
        guestExpiresAt: null,
        accountOrigin: 'system',
        createdAt: toDbTime(server.clock.now()),
      });
    }

    it("verifies a $2b$ cost-12 hash written by the reference server's bcrypt", async () => {
      await insertWithHash('refuser', REFERENCE_2B_12_HASH);
      expectError(await server.post('/login', { username: 'refuser', password: WRONG_PASSWORD }), 401, BAD_CREDENTIALS);
      const res = await server.post('/login', { username: 'refuser', password: GOOD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
    });

    it('verifies a $2a$ cost-10 hash', async () => {
      await insertWithHash('legacy', LEGACY_2A_10_HASH);
      expectError(await server.post('/login', { username: 'legacy', password: GOOD_PASSWORD }), 401, BAD_CREDENTIALS);
      expect((await server.post('/login', { username: 'legacy', password: OTHER_GOOD_PASSWORD })).status).to.equal(200);
    });

    it('writes new hashes with the configured cost', async () => {
      expect(server.config.security.bcryptRounds).to.equal(4);
      expect((await register(server, 'hasher1')).status).to.equal(200);
      expect((await userRow(server, 'hasher1')).password_hash).to.match(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
      // A change re-hashes an old cost-12 hash at the configured cost.
      const sid = await login(server, 'refuser');
      const res = await server.post('/change-password', { session_id: sid, old_password: GOOD_PASSWORD, new_password: THIRD_PASSWORD });
      expect(res.status, res.text).to.equal(200);
      expect((await userRow(server, 'refuser')).password_hash).to.match(/^\$2b\$04\$/);
    });
  });
});

describe('accounts: fixed session lifetime and one session per account', () => {
  let server: TestServer;
  before(async () => {
    server = await start({ env: { MUD_SESSION_SLIDING_EXPIRATION: 'false', MUD_SESSION_ALLOW_MULTIPLE: 'false' } });
    await createUser(server, 'solo', 'player');
  });
  after(async () => {
    await server.close();
  });

  it('a second login removes the first session', async () => {
    const first = await login(server, 'solo');
    const second = await login(server, 'solo');
    expectError(await ping(server, first), 401, INVALID_SESSION);
    expect((await ping(server, second)).status).to.equal(200);
    const id = (await userRow(server, 'solo')).id as number;
    expect(await sessionCount(server, id)).to.equal(1);
  });

  it('without sliding expiration a session dies 480 minutes after login even when used', async () => {
    const sid = await login(server, 'solo');
    const expiresAt = (await sessionRow(server, sid)).expires_at as string;
    server.clock.advance(240 * MINUTE);
    expect((await ping(server, sid)).status).to.equal(200);
    await server.services.sessions.flushActivity();
    const row = await sessionRow(server, sid);
    expect(row.expires_at).to.equal(expiresAt);
    expect(row.last_activity).to.equal(toDbTime(server.clock.now()));
    server.clock.advance(239 * MINUTE);
    expect((await ping(server, sid)).status).to.equal(200);
    server.clock.advance(2 * MINUTE);
    expectError(await ping(server, sid), 401, INVALID_SESSION);
    await server.services.sessions.sweepExpired();
    expect(await sessionRow(server, sid)).to.equal(undefined);
  });
});

describe('accounts: bootstrap superuser', () => {
  let server: TestServer;
  before(async () => {
    server = await start({ env: { MUD_ADMIN_USER: 'root1', MUD_ADMIN_PASSWORD: GOOD_PASSWORD } });
  });
  after(async () => {
    await server.close();
  });

  it('creates the superuser from MUD_ADMIN_USER/MUD_ADMIN_PASSWORD, who can log in', async () => {
    const row = await userRow(server, 'root1');
    expect(row).to.include({ role: 'superuser', account_origin: 'system', guest_expires_at: null });
    expect(Boolean(row.is_guest)).to.equal(false);
    const res = await server.post('/login', { username: 'root1', password: GOOD_PASSWORD });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.role).to.equal('superuser');
  });

  it('creates nothing when a superuser already exists', async () => {
    const again = await startAnotherInstance(server, server.clock, { MUD_ADMIN_USER: 'root2', MUD_ADMIN_PASSWORD: OTHER_GOOD_PASSWORD });
    await again.stop();
    expect(await userRow(server, 'root2')).to.equal(undefined);
    const supers = await server.db('users').where({ role: 'superuser' }).count({ n: '*' }).first();
    expect(Number(supers?.n)).to.equal(1);
  });

  it('refuses to start with a MUD_ADMIN_PASSWORD that fails the STANDARD policy', async () => {
    let failure: unknown;
    try {
      const unexpected = await startTestServer({ env: { MUD_ADMIN_USER: 'root3', MUD_ADMIN_PASSWORD: 'weak' } });
      await unexpected.close();
    } catch (err) {
      failure = err;
    }
    expect(failure, 'start-up should fail').to.be.instanceOf(Error);
    const message = (failure as Error).message;
    expect(message).to.contain('MUD_ADMIN_PASSWORD');
    expect(message).to.contain(TOO_SHORT(4));
  });
});

describe('accounts: rate limits', () => {
  let server: TestServer;
  let changerSid = '';
  before(async () => {
    server = await start({
      env: {
        MUD_RATE_LIMIT_ENABLED: 'true',
        MUD_RATE_LIMIT_LOGIN_PER_USERNAME: '3',
        MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '8',
        MUD_RATE_LIMIT_REGISTER_PER_ADDRESS: '3',
        MUD_RATE_LIMIT_CHANGE_PASSWORD_PER_USERNAME: '2',
        MUD_SERVER_TRUST_PROXY: 'loopback',
      },
    });
    await createUser(server, 'victim', 'player');
    await createUser(server, 'bystander', 'player');
    await createUser(server, 'changer', 'player');
    changerSid = await login(server, 'changer');
  });
  /** A client address of its own, for the per-address limits. */
  const from = (address: string) => ({ 'X-Forwarded-For': address });
  after(async () => {
    await server.close();
  });

  // Failures are counted per account; past the limit only wrong passwords are refused, so a
  // guesser cannot lock the owner out (the security audit).
  it('answers wrong passwords past the per-account limit with 429, a numeric Retry-After and {detail}; the right one still logs in', async () => {
    // Guessed from three addresses: each stays under its own count for the name.
    for (let i = 0; i < 3; i++) {
      expectError(await server.post('/login', { username: 'victim', password: WRONG_PASSWORD }, from(`198.51.100.${i}`)), 401, BAD_CREDENTIALS);
    }
    expectRateLimited(await server.post('/login', { username: ' victim ', password: WRONG_PASSWORD }, from('198.51.100.9')));
    expect((await server.post('/login', { username: 'victim', password: GOOD_PASSWORD }, from('198.51.100.10'))).status).to.equal(200);
  });

  it('counts only failed logins per address (issue 35): the right password costs nothing, failures of one name stop at its own count', async () => {
    const school = from('192.0.2.40');
    await createUser(server, 'typist', 'player');
    // Right passwords, more than the address's 8: nobody behind it is locked out by logging in.
    for (let i = 0; i < 10; i++) expect((await server.post('/login', { username: 'bystander', password: GOOD_PASSWORD }, school)).status, `login ${i}`).to.equal(200);
    // A client typing one name wrong again and again: past the name's 3 it is refused before
    // its password is checked, and those refusals cost the address nothing.
    for (let i = 0; i < 3; i++) expectError(await server.post('/login', { username: 'typist', password: WRONG_PASSWORD }, school), 401, BAD_CREDENTIALS);
    for (let i = 0; i < 5; i++) expectRateLimited(await server.post('/login', { username: 'typist', password: WRONG_PASSWORD }, school));
    expect((await server.post('/login', { username: 'bystander', password: GOOD_PASSWORD }, school)).status).to.equal(200);
    // Guessing across names: 8 failures from the address, then every login from it waits.
    for (const name of ['nobody1', 'nobody2', 'nobody3', 'nobody4', 'nobody5']) expectError(await server.post('/login', { username: name, password: WRONG_PASSWORD }, school), 401, BAD_CREDENTIALS);
    expectRateLimited(await server.post('/login', { username: 'bystander', password: GOOD_PASSWORD }, school));
    expect((await server.post('/login', { username: 'bystander', password: GOOD_PASSWORD }, from('192.0.2.41'))).status).to.equal(200);
  });

  it('limits registrations per address', async () => {
    for (const username of ['reg1', 'reg2', 'reg3']) {
      expectError(await register(server, username, GOOD_PASSWORD, OTHER_GOOD_PASSWORD), 400, 'Passwords do not match');
    }
    expectRateLimited(await register(server, 'reg4'));
    expect(await userRow(server, 'reg4')).to.equal(undefined);
  });

  it('limits failed password changes per account, still accepting the right current password', async () => {
    const change = (oldPassword: string) =>
      server.post('/change-password', { session_id: changerSid, old_password: oldPassword, new_password: THIRD_PASSWORD });
    expectError(await change(WRONG_PASSWORD), 401, 'Current password is incorrect');
    expectError(await change(WRONG_PASSWORD), 401, 'Current password is incorrect');
    expectRateLimited(await change(WRONG_PASSWORD));
    let row = await userRow(server, 'changer');
    expect(await server.services.hasher.verify(GOOD_PASSWORD, row.password_hash)).to.equal(true);
    expect((await change(GOOD_PASSWORD)).status).to.equal(200);
    row = await userRow(server, 'changer');
    expect(await server.services.hasher.verify(THIRD_PASSWORD, row.password_hash)).to.equal(true);
  });
});

describe('accounts: secrets', () => {
  it('no response body of this file contains a password hash or a password', () => {
    expect(seen.bodies.length).to.be.greaterThan(100);
    for (const body of seen.bodies) {
      expect(body).to.not.contain('$2a$');
      expect(body).to.not.contain('$2b$');
      for (const password of SECRET_PASSWORDS) expect(body).to.not.contain(password);
    }
  });

  it('no log line contains a password, a hash or a full session id', () => {
    expect(seen.sessionIds.size).to.be.greaterThan(20);
    const text = seen.logs.map((l) => l.text()).join('\n');
    expect(text.length).to.be.greaterThan(0);
    expect(text).to.not.contain('$2a$');
    expect(text).to.not.contain('$2b$');
    for (const password of SECRET_PASSWORDS) expect(text).to.not.contain(password);
    for (const sid of seen.sessionIds) expect(text).to.not.contain(sid);
  });
});
