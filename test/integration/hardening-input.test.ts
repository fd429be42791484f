/**
 * Hostile input (issue 13, findings 6, 7, 8 and 11), on SQLite and PostgreSQL alike: NUL
 * bytes, out-of-range integers and malformed bearer tokens are refused before any query and
 * without an error log; chat is stored as plain text; game commands are throttled per session;
 * old and excess chat is pruned; database errors are logged without their SQL or bound values.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { GOOD_PASSWORD, OTHER_GOOD_PASSWORD, bearer, createUser, login, sessionFor } from '../helpers/accounts.ts';
import { cmd, newPlayer, okCmd, type Player } from '../helpers/players.ts';
import { contractDocument } from '../helpers/contract.ts';
import { SESSION_ID_FORMAT } from '../../src/http/middleware/auth.ts';
import { toDbTime } from '../../src/db/clock.ts';
import { insertedId } from '../../src/db/inserted-id.ts';

type LogEntry = Record<string, unknown>;

interface Traced {
  res: HttpResponse;
  /** Log entries of this request, the access line excepted. */
  logs: LogEntry[];
  /** SQL statements the request ran. */
  queries: string[];
}

let seq = 0;

/** Sends with a fresh request id; collects that request's log entries and the queries it ran. */
async function traced(server: TestServer, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<Traced> {
  const requestId = `hardening-${++seq}`;
  const queries: string[] = [];
  const onQuery = (query: { sql: string }): void => {
    queries.push(query.sql);
  };
  server.db.on('query', onQuery);
  try {
    const res = await server.request(method, urlPath, body, { ...headers, 'X-Request-Id': requestId });
    // The access line is written when the response closes, possibly after the client has it.
    const deadline = Date.now() + 2000;
    while (!server.logs.entries.some((e) => e.request_id === requestId && e.message === 'request') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { res, logs: server.logs.entries.filter((e) => e.request_id === requestId && e.message !== 'request'), queries };
  } finally {
    server.db.off('query', onQuery);
  }
}

const errorsIn = (logs: LogEntry[]): LogEntry[] => logs.filter((e) => e.level === 'error');


const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

describe('hardening: hostile input', () => {
  describe('NUL bytes, out-of-range integers and malformed sessions', () => {
    let server: TestServer;
    let player: Player;
    let admin: string;
    before(async () => {
      // These tests count the queries of requests.
      server = await startTestServer({ worldClock: false });
      player = await newPlayer(server, 'Nul');
      admin = await sessionFor(server, 'nuladmin', 'admin');
    });
    after(async () => {
      await server?.close();
    });

    /** 400 naming `path`, no query run, nothing logged at error. */
    async function expectRefused(method: string, urlPath: string, body: unknown, path: string): Promise<HttpResponse> {
      const { res, logs, queries } = await traced(server, method, urlPath, body);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors.map((e: { path: string }) => e.path), res.text).to.deep.equal([path]);
      expect(queries, 'queries run').to.deep.equal([]);
      expect(errorsIn(logs)).to.deep.equal([]);
      return res;
    }

    async function refuseNul(method: string, urlPath: string, body: unknown, path: string): Promise<void> {
      const res = await expectRefused(method, urlPath, body, path);
      expect(res.body).to.deep.equal({ detail: `Invalid request: ${path} ${NUL_MESSAGE}`, errors: [{ path, message: NUL_MESSAGE }] });
    }

    it('refuses NUL in a path segment (POST /ping/a%00b)', async () => {
      await refuseNul('POST', '/ping/a%00b', {}, '/path');
    });

    it('refuses NUL in a query value (?session_id=%00) and a query name', async () => {
      await refuseNul('GET', '/characters?session_id=%00', undefined, '/query/session_id');
      await refuseNul('GET', `/characters?session_id=${player.sessionId}&a%00=1`, undefined, '/query');
    });

    it('refuses NUL in a login body', async () => {
      await refuseNul('POST', '/login', { username: 'ev\u0000il', password: GOOD_PASSWORD }, '/body/username');
    });

    it('refuses NUL in a game command (say hi\\u0000there)', async () => {
      await refuseNul('POST', '/command', { session_id: player.sessionId, command: 'say hi\u0000there' }, '/body/command');
    });

    it('refuses NUL at any depth of a body, in values and in property names', async () => {
      const url = `/api/policies/prompt:test.nul:a/variants/v1?session_id=${admin}`;
      const variant = (content: unknown) => ({ schema_version: '1.0', policy_version: 1, status: 'draft', content });
      await refuseNul('PUT', url, variant({ lines: [{ text: 'ok' }, { text: 'a\u0000b' }] }), '/body/content/lines/1/text');
      await refuseNul('PUT', url, variant({ nested: { 'k\u0000': 'v' } }), '/body/content/nested');
    });

    it('refuses out-of-range integer ids, limits and offsets with the contract 400', async () => {
      const q = `session_id=${admin}`;
      await expectRefused('POST', '/characters/select', { session_id: player.sessionId, character_id: 99999999999 }, '/body/character_id');
      await expectRefused('POST', '/characters/select', { session_id: player.sessionId, character_id: -99999999999 }, '/body/character_id');
      await expectRefused('GET', `/admin/database/table/users?${q}&offset=99999999999999999999`, undefined, '/query/offset');
      await expectRefused('GET', `/admin/database/chat-messages?${q}&limit=99999999999`, undefined, '/query/limit');
      await expectRefused('GET', `/admin/characters/99999999999/axis-state?${q}`, undefined, '/params/character_id');
      await expectRefused('GET', `/admin/characters/-1/axis-events?${q}`, undefined, '/params/character_id');
      await expectRefused('GET', `/api/policy-publish/-99999999999?${q}`, undefined, '/params/publish_run_id');
    });

    it('gives every integer a request can carry a range that fits a 32-bit column', () => {
      // Lab seeds are echoed or sent to the language model, never stored.
      const notStored = new Set(['POST /api/lab/compile-image-prompt body/seed', 'POST /api/lab/translate body/seed']);
      const doc = contractDocument() as unknown as { paths: Record<string, Record<string, any>> };
      const resolve = (node: any): any => {
        let current = node;
        while (current?.$ref) current = (current.$ref as string).slice(2).split('/').reduce((o: any, key: string) => o[key], doc);
        return current;
      };
      const found: string[] = [];
      const unbounded: string[] = [];
      const walk = (node: any, where: string, seen: Set<unknown>): void => {
        const schema = resolve(node);
        if (!schema || seen.has(schema)) return;
        const inner = new Set(seen).add(schema);
        if (schema.type === 'integer') {
          found.push(where);
          const fits = schema.minimum >= -2147483648 && schema.maximum <= 2147483647;
          if (!fits && !notStored.has(where)) unbounded.push(`${where} [${schema.minimum}, ${schema.maximum}]`);
        }
        for (const key of ['allOf', 'oneOf', 'anyOf']) (schema[key] ?? []).forEach((s: unknown) => walk(s, where, inner));
        for (const [name, s] of Object.entries(schema.properties ?? {})) walk(s, `${where}/${name}`, inner);
        if (schema.items) walk(schema.items, `${where}/0`, inner);
        if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}/*`, inner);
      };
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op?.responses) continue;
          const operation = `${method.toUpperCase()} ${path}`;
          for (const param of [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve)) walk(param.schema, `${operation} ${param.in}:${param.name}`, new Set());
          const body = resolve(op.requestBody)?.content?.['application/json']?.schema;
          if (body) walk(body, `${operation} body`, new Set());
        }
      }
      expect(found).to.include('POST /characters/select body/character_id');
      expect(unbounded).to.deep.equal([]);
    });

    it('checks a bearer token against the contract SessionId pattern', () => {
      const schemas = (contractDocument() as unknown as { components: { schemas: Record<string, { pattern: string }> } }).components.schemas;
      expect(SESSION_ID_FORMAT.source).to.equal(schemas.SessionId!.pattern);
    });

    it('answers a malformed bearer token 401 without running a query', async () => {
      for (const token of ['not-a-session', "x'--", player.sessionId.toUpperCase(), `${player.sessionId}0`]) {
        const { res, logs, queries } = await traced(server, 'GET', '/characters', undefined, bearer(token));
        expect(res.status, token).to.equal(401);
        expect(res.body).to.deep.equal({ detail: 'Invalid or expired session' });
        expect(res.headers.get('www-authenticate')).to.equal('Bearer');
        expect(queries, token).to.deep.equal([]);
        expect(errorsIn(logs)).to.deep.equal([]);
      }
      // Beside a good session_id too: malformed is 401, not the 400 of two different sessions.
      expect((await server.get(`/characters?session_id=${player.sessionId}`, bearer('nope'))).status).to.equal(401);
      expect((await server.get('/characters', bearer(player.sessionId))).status).to.equal(200);
    });

    it('does not throttle commands while [rate_limit] enabled is false', async () => {
      // This server allows one command per session per window, but rate limits are off.
      for (let i = 0; i < 3; i++) await okCmd(player, 'look');
    });
  });

  describe('chat text is plain text', () => {
    let server: TestServer;
    let speaker: Player;
    let listener: Player;
    before(async () => {
      server = await startTestServer();
      speaker = await newPlayer(server, 'Speaker', 'lockkeepers_square');
      listener = await newPlayer(server, 'Listener', 'lockkeepers_square');
    });
    after(async () => {
      await server?.close();
    });

    const lastMessage = async (player: Player): Promise<{ text: string; chat: string }> => {
      const res = await server.get(`/chat/${player.sessionId}`);
      expect(res.status, res.text).to.equal(200);
      return { text: res.body.messages.at(-1).text, chat: res.body.chat };
    };

    const HOSTILE = '\x1b[2J\x1b[31mred\x1b[0m \u202Eevil\u202C tab\there\nline \u2066iso\u2069 \u200Emark\u200F \x07\x7f\x85<b>';
    const CLEAN = 'red evil tab here line iso mark  &lt;b&gt;';

    it('say stores and answers the text without escape sequences, controls or bidi controls', async () => {
      expect(await okCmd(speaker, `say ${HOSTILE}`)).to.equal(`You say: ${CLEAN}`);
      const seen = await lastMessage(listener);
      expect(seen.text).to.equal(CLEAN);
      expect(seen.chat).to.contain(`: ${CLEAN}\n`);
    });

    it('yell and whisper are cleaned the same way', async () => {
      expect(await okCmd(speaker, `yell ${HOSTILE}`)).to.equal(`You yell: ${CLEAN}`);
      expect((await lastMessage(listener)).text).to.equal(`[YELL] ${CLEAN}`);
      expect(await okCmd(speaker, `whisper ${listener.name} ${HOSTILE}`)).to.equal(`You whisper to ${listener.name}: ${CLEAN}`);
      expect((await lastMessage(listener)).text).to.equal(`[WHISPER: ${speaker.name} \u2192 ${listener.name}] ${CLEAN}`);
    });

    it('a message of nothing but controls is no message', async () => {
      expect(await cmd(speaker, 'say \u202E\x1b[0m\u200F')).to.deep.equal({ success: false, message: 'Say what?' });
      expect(await cmd(speaker, 'yell \t\u2066')).to.deep.equal({ success: false, message: 'Yell what?' });
    });

    it('stores no control character at all', async () => {
      const rows: Array<{ message: string }> = await server.db('chat_messages').select('message');
      expect(rows.length).to.be.greaterThan(0);
      for (const { message } of rows) expect(message).not.to.match(/[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    });
  });

  describe('command throttle per session', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        env: { MUD_RATE_LIMIT_ENABLED: 'true', MUD_RATE_LIMIT_COMMAND_PER_SESSION: '5', MUD_RATE_LIMIT_COMMAND_WINDOW_SECONDS: '30' },
      });
    });
    after(async () => {
      await server?.close();
    });

    it('answers 429 with Retry-After once a session has used its commands, other sessions unaffected', async () => {
      const flooder = await newPlayer(server, 'Flooder');
      const bystander = await newPlayer(server, 'Bystander');
      const yells = () => server.db('chat_messages').where({ character_id: flooder.characterId }).count({ n: '*' }).first();
      for (let i = 0; i < 5; i++) await okCmd(flooder, `yell ${'a'.repeat(1000)}`);
      const stored = await yells();
      const { res, logs } = await traced(server, 'POST', '/command', { session_id: flooder.sessionId, command: `yell ${'a'.repeat(1000)}` });
      expect(res.status, res.text).to.equal(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 30);
      expect(res.body).to.deep.equal({ detail: `Too many commands. Try again in ${retryAfter} seconds.` });
      expect(errorsIn(logs)).to.deep.equal([]);
      // The bearer form counts against the same session.
      expect((await server.post('/command', { command: 'look' }, bearer(flooder.sessionId))).status).to.equal(429);
      expect(await yells()).to.deep.equal(stored);
      await okCmd(bystander, 'look');
    });

    it('counts per session, not per account: a new login starts afresh', async () => {
      const player = await newPlayer(server, 'Relogger');
      for (let i = 0; i < 5; i++) await okCmd(player, 'look');
      expect((await server.post('/command', { session_id: player.sessionId, command: 'look' })).status).to.equal(429);
      const second = await login(server, player.username);
      expect((await server.post('/characters/select', { session_id: second, character_id: player.characterId })).status).to.equal(200);
      expect((await server.post('/command', { session_id: second, command: 'look' })).status).to.equal(200);
    });
  });

  describe('chat retention', () => {
    let server: TestServer;
    const DAY = 86_400_000;
    before(async () => {
      server = await startTestServer({ env: { MUD_CHAT_RETENTION_DAYS: '7', MUD_CHAT_MAX_MESSAGES_PER_ROOM: '20' } });
    });
    after(async () => {
      await server?.close();
    });

    /** Inserts `count` messages into a room, `ageMs` old; returns their ids, oldest first. */
    async function post(worldId: string, roomId: string, count: number, ageMs: number): Promise<number[]> {
      const createdAt = toDbTime(new Date(server.clock.now().getTime() - ageMs));
      const ids: number[] = [];
      for (let i = 0; i < count; i++) {
        const [row] = await server
          .db('chat_messages')
          .insert({ world_id: worldId, room_id: roomId, character_id: null, sender_name: 'Old Voice', channel: 'say', recipient_character_id: null, message: `m${i}`, created_at: createdAt })
          .returning('id');
        ids.push(insertedId(row));
      }
      return ids;
    }

    const idsIn = async (worldId: string, roomId: string): Promise<number[]> =>
      (await server.db('chat_messages').where({ world_id: worldId, room_id: roomId }).orderBy('id').select('id')).map((r) => Number(r.id));

    const retention = (of: TestServer) => of.services.maintenanceTasks.find((t) => t.name === 'chat-retention')!;

    it('is a maintenance task on its configured interval', () => {
      expect(retention(server).intervalMs).to.equal(server.config.chat.pruneIntervalMinutes * 60_000);
    });

    it('deletes messages past the age limit and beyond the per-room cap, and keeps the rest', async () => {
      await server.db('chat_messages').del();
      const busy = await post('emberwick', 'lockkeepers_square', 25, 0);
      // Interleaved with another world's room of the same name: rooms are counted per world.
      const otherWorld = await post('hollow_spire', 'lockkeepers_square', 20, 0);
      await post('emberwick', 'ropewalk_bridge', 3, 8 * DAY);
      const recent = await post('emberwick', 'ropewalk_bridge', 2, 6 * DAY);

      expect(await retention(server).run()).to.equal(5 + 3);
      expect(await idsIn('emberwick', 'lockkeepers_square')).to.deep.equal(busy.slice(5));
      expect(await idsIn('hollow_spire', 'lockkeepers_square')).to.deep.equal(otherWorld);
      expect(await idsIn('emberwick', 'ropewalk_bridge')).to.deep.equal(recent);
      expect(await retention(server).run()).to.equal(0);
    });

    it('is safe when two instances run it at once', async () => {
      const second = await startTestServer({ shareDatabaseWith: server });
      try {
        await server.db('chat_messages').del();
        const busy = await post('emberwick', 'lockkeepers_square', 60, 0);
        await post('emberwick', 'ropewalk_bridge', 10, 8 * DAY);
        const removed = await Promise.all([retention(server).run(), retention(second).run()]);
        expect(removed[0] + removed[1]).to.equal(40 + 10);
        expect(await idsIn('emberwick', 'lockkeepers_square')).to.deep.equal(busy.slice(40));
        expect(await idsIn('emberwick', 'ropewalk_bridge')).to.deep.equal([]);
        expect(errorsIn(second.logs.entries)).to.deep.equal([]);
      } finally {
        await second.close();
      }
      expect(errorsIn(server.logs.entries)).to.deep.equal([]);
    });
  });

  describe('database errors in the log', () => {
    let server: TestServer;
    let session: string;
    let userId: number;
    let locker: Knex;
    before(async () => {
      server = await startTestServer();
      userId = await createUser(server, 'lockeduser', 'player');
      session = await login(server, 'lockeduser');
      if (usePostgres) {
        // A real lock timeout: the update waits on a row lock another connection holds, with
        // a lock_timeout short enough for a test (set for that statement by a trigger, since
        // no configuration key sets it and a role or database default would reach other tests).
        await server.db.raw(`
          CREATE FUNCTION short_lock_timeout() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM set_config('lock_timeout', '200ms', true); RETURN NULL; END $$`);
        await server.db.raw('CREATE TRIGGER short_lock_timeout BEFORE UPDATE ON users FOR EACH STATEMENT EXECUTE FUNCTION short_lock_timeout()');
        locker = knexFactory({ client: 'pg', connection: process.env.MUD_TEST_DATABASE_URL, searchPath: [server.schema!], pool: { min: 1, max: 1 } });
        await locker.raw('BEGIN');
        await locker.raw('SELECT id FROM users WHERE id = ? FOR UPDATE', [userId]);
      } else {
        // A second connection holds the write lock, so the server's update waits its busy
        // timeout (5 s; no configuration key sets it) and fails with SQLITE_BUSY.
        locker = knexFactory({ client: 'sqlite3', connection: { filename: server.config.database.path }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
        await locker.raw('BEGIN EXCLUSIVE');
      }
    });
    after(async () => {
      await locker?.raw('ROLLBACK');
      await locker?.destroy();
      await server?.close();
    });

    it('a failed password change logs the driver message and code, without SQL, bound values or the hash', async () => {
      const { res, logs } = await traced(server, 'POST', '/change-password', { session_id: session, old_password: GOOD_PASSWORD, new_password: OTHER_GOOD_PASSWORD });
      // SQLite still locked after its busy timeout is a database that cannot take writes now: 503.
      expect(res.status, res.text).to.equal(usePostgres ? 500 : 503);
      expect(res.body).to.deep.equal({ detail: usePostgres ? 'Internal server error' : 'The database is unavailable; try again in a few seconds.' });
      const errors = usePostgres ? errorsIn(logs) : logs.filter((e) => e.level === 'warn');
      expect(errors.map((e) => [e.message, e.code])).to.deep.equal([[usePostgres ? 'Unhandled error' : 'Database unavailable', usePostgres ? '55P03' : 'SQLITE_BUSY']]);
      expect(String(errors[0]!.error)).to.match(usePostgres ? /^error: canceling statement due to lock timeout(\n|$)/ : /^SQLITE_BUSY: database is locked(\n|$)/);
      const text = JSON.stringify(logs);
      // No statement, no column, no bcrypt hash (`$2b$…`), no error fields knex may attach.
      for (const leak of [/update\s+\W?users/i, /password_hash/, /\$2[aby]?\$/, /"(sql|bindings)"/]) expect(text).not.to.match(leak);
    });
  });
});
