/**
 * The README's fault claims ("Faults: what an operator can expect") as tests small enough for
 * CI; bench/faults.ts measures the same at scale.
 *
 * - kill -9 under 10 writing clients: every write a client saw acknowledged is in the database,
 *   and the server starts again on what the killed one left.
 * - PostgreSQL restarting (a private cluster, test/helpers/private-postgres.ts; the shared one
 *   serves other suites): 5 clients saying throughout get 200 or 503 with Retry-After, never a
 *   500; each gets 200 again without anyone restarting the server; every acknowledged say is
 *   stored.
 * - A short churn of logins, streams, moves, says, dropped streams, logouts and kicks:
 *   afterwards the server's open streams, handles and timers are back where they were.
 *
 * The churn and the kill share one server, a child process (`mud-server serve`): its handles
 * and timers are its own, and it can be killed.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { send, startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { startCliServer, throwAwayDatabase, type CliServer } from '../helpers/cli-server.ts';
import { countFound, newLedger, spawnFacts, writeLoad, type Answer } from '../helpers/acknowledged-writes.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { loginAs, newPlayer, registerGuest, selectCharacter, uniqueName } from '../helpers/players.ts';
import { openStream } from '../helpers/sse.ts';
import { eventually } from '../helpers/eventually.ts';
import { metricValue } from '../helpers/metrics-text.ts';
import { postgresBinFor, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
/** No pruning of the chat the checks look for, no limits on clients that all come from 127.0.0.1. */
const FAULT_ENV = { MUD_LOG_LEVEL: 'info', MUD_RATE_LIMIT_ENABLED: 'false', MUD_CHAT_MAX_MESSAGES_PER_ROOM: '1000000' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A database of the test's own (a SQLite file, or a PostgreSQL database beside the shared one's) and a connection to read it directly. */
interface Store {
  env: Record<string, string>;
  /** The PostgreSQL database's name (undefined on SQLite). */
  database: string | undefined;
  open(): Knex;
  drop(): Promise<void>;
}

async function newStore(): Promise<Store> {
  if (usePostgres) {
    const db = await throwAwayDatabase();
    return { env: { DATABASE_URL: db.url }, database: new URL(db.url).pathname.slice(1), open: () => knexFactory({ client: 'pg', connection: db.url }), drop: db.drop };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-faults-'));
  const filename = path.join(dir, 'mud.db');
  return {
    env: { MUD_DB_PATH: filename },
    database: undefined,
    open: () => knexFactory({ client: 'sqlite3', connection: { filename }, useNullAsDefault: true }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `mud-server serve` on the store, once it listens. */
async function serve(store: Store, env: Record<string, string> = {}): Promise<{ server: CliServer; url: string }> {
  const server = startCliServer(['serve'], { ...FAULT_ENV, ...store.env, ...env });
  const url = String((await server.waitFor((line) => line.message === 'Server listening', 60_000)).url);
  return { server, url };
}

/** SIGTERM, and the exit it must end in. */
async function stop(server: CliServer): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited, server.stderr()).to.equal(0);
}

/** Requests to a server by its url, for the helpers that take a test server. */
const at = (url: string) => ({ post: (urlPath: string, body?: unknown) => send(url, 'POST', urlPath, body ?? {}) });

/** A guest logged in and playing at `url`. */
async function guestAt(url: string, first: string): Promise<{ username: string; characterId: number; sessionId: string }> {
  const { username, characterId } = await registerGuest(at(url), uniqueName(first));
  const sessionId = await loginAs(at(url), username);
  await selectCharacter(at(url), sessionId, characterId);
  return { username, characterId, sessionId };
}

/** One server for both: the churn needs it fresh, the kill ends it. */
describe(`faults: churn, then kill -9 (${DB_NAME})`, function () {
  this.timeout(90_000);
  const admin = { username: 'churnadmin', password: GOOD_PASSWORD };
  let on: Store;
  let server: CliServer;
  let url = '';
  const restarted: CliServer[] = [];
  before(async () => {
    on = await newStore();
    ({ server, url } = await serve(on, { MUD_METRICS_MODE: 'open', MUD_ADMIN_USER: admin.username, MUD_ADMIN_PASSWORD: admin.password }));
  });
  after(async () => {
    for (const child of [server, ...restarted]) child?.kill();
    await Promise.all([server, ...restarted].filter(Boolean).map((child) => child.exited));
    await on?.drop();
  });

  it('after a short churn of logins, streams, moves, says, dropped streams, logouts and kicks, open streams, handles and timers are back at their level', async () => {
    const adminSession = await loginAs(at(url), admin.username);
    const accounts = await Promise.all(Array.from({ length: 5 }, () => registerGuest(at(url), uniqueName('Churn'))));
    // The server's own PostgreSQL connections come and go with its pool; they are not what leaks.
    const meta = usePostgres ? knexFactory({ client: 'pg', connection: process.env.MUD_TEST_DATABASE_URL, pool: { min: 0, max: 1 } }) : null;
    const levels = async () => {
      // A connection of its own, closed after the answer, so that the reading counts no client's keep-alive socket.
      const text = await new Promise<string>((resolve, reject) => {
        http.get(`${url}/metrics`, { agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(body));
        }).on('error', reject);
      });
      const connections = meta ? Number((await meta.raw('select count(*) as n from pg_stat_activity where datname = ?', [on.database!])).rows[0].n) : 0;
      return {
        streams: metricValue(text, 'mud_event_streams_open'),
        handles: metricValue(text, 'nodejs_active_handles_total') - connections,
        timers: metricValue(text, 'nodejs_active_resources', 'type="Timeout"'),
      };
    };
    try {
      const before = await levels();
      const failures: string[] = [];
      const expectOk = (what: string, res: HttpResponse): HttpResponse => {
        if (res.status !== 200) failures.push(`${what}: ${res.status} ${res.text}`);
        return res;
      };
      let cycles = 0;
      const until = Date.now() + 3000;
      // Each client: log in, play with a stream open, drop the stream, log out, be kicked or just go; again.
      await Promise.all(
        accounts.map(async (account, i) => {
          for (let round = 0; Date.now() < until; round++) {
            const login = expectOk('login', await send(url, 'POST', '/login', { username: account.username, password: GOOD_PASSWORD }));
            const sessionId = String(login.body?.session_id);
            expectOk('select', await send(url, 'POST', '/characters/select', { session_id: sessionId, character_id: account.characterId }));
            const stream = await openStream(`${url}/events/${sessionId}`);
            if (stream.status !== 200) failures.push(`stream: ${stream.status}`);
            for (const command of ['north', `say round ${round}`, 'look', 'south']) expectOk(command, await send(url, 'POST', '/command', { session_id: sessionId, command }));
            stream.close();
            // Then kicked, or logged out, or gone as a closed tab goes (the session left to expire).
            const end = (i + round) % 3;
            if (end === 0) expectOk('kick', await send(url, 'POST', '/admin/session/kick', { session_id: adminSession, target_session_id: sessionId }));
            else if (end === 1) expectOk('logout', await send(url, 'POST', '/logout', { session_id: sessionId }));
            cycles++;
          }
        }),
      );
      expect(failures).to.deep.equal([]);
      expect(cycles).to.be.greaterThan(5);
      await eventually(async () => {
        const now = await levels();
        expect(now.streams, 'open streams').to.equal(0);
        expect(now.handles, `handles (${before.handles} before the churn)`).to.be.at.most(before.handles);
        expect(now.timers, `timers (${before.timers} before the churn)`).to.be.at.most(before.timers);
      }, 15_000);
    } finally {
      await meta?.destroy();
    }
  });

  it('kill -9 under 10 writing clients loses no acknowledged write, and the server starts again on what it left', async () => {
    const facts = await spawnFacts();
    const ledger = newLedger();
    const players = await Promise.all(Array.from({ length: 10 }, () => guestAt(url, 'Crash')));
    for (const player of players) ledger.accounts.add(player.username);
    let killed = false;
    const command = (sessionId: string) => (text: string): Promise<Answer> =>
      send(url, 'POST', '/command', { session_id: sessionId, command: text }).catch(() => ({ status: 0, body: undefined }));
    const load = players.map((player) => writeLoad(command(player.sessionId), player.characterId, facts, ledger, () => killed));
    await sleep(3000);
    server.kill();
    await server.exited;
    killed = true;
    await Promise.all(load);
    expect(ledger.says.size, 'says acknowledged before the kill').to.be.greaterThan(10);
    expect(ledger.unanswered, 'commands in flight at the kill').to.be.greaterThan(0);

    // Nothing to repair: the server starts on the database as the killed one left it.
    const again = await serve(on);
    restarted.push(again.server);
    expect((await send(again.url, 'GET', '/health')).status).to.equal(200);
    await stop(again.server);
    const db = on.open();
    try {
      const found = await countFound(db, ledger, facts);
      expect(found.lost, `${found.lost.length} acknowledged writes lost`).to.deep.equal([]);
      expect(found.says).to.equal(ledger.says.size);
      expect(found.accounts).to.equal(10);
    } finally {
      await db.destroy();
    }
  });
});

describe('faults: PostgreSQL restarting (a private cluster)', function () {
  this.timeout(60_000);
  let cluster: PrivatePostgres | undefined;
  let server: TestServer | undefined;

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    cluster = await startPrivatePostgres(postgresBinFor(this));
    server = await startTestServer({ databaseUrl: cluster.url, env: { MUD_CHAT_MAX_MESSAGES_PER_ROOM: '1000000' } });
  });
  after(async () => {
    try {
      await server?.close();
    } finally {
      await cluster?.stop();
    }
  });

  it('5 clients saying through a restart get 200 or 503 with Retry-After, never a 500; each gets 200 again by itself; every acknowledged say is stored', async () => {
    const players = await Promise.all(Array.from({ length: 5 }, () => newPlayer(server!, 'Restart')));
    const said: string[] = [];
    const answers: HttpResponse[] = [];
    const backAfter = new Set<number>();
    let restarted = false;
    let stopped = false;
    const loops = players.map(async (player, i) => {
      for (let n = 0; !stopped; n++) {
        const text = `client ${i} line ${n}`;
        const res = await server!.post('/command', { session_id: player.sessionId, command: `say ${text}` });
        answers.push(res);
        if (res.status === 200) {
          said.push(text);
          if (restarted) backAfter.add(i);
        } else await sleep(50);
      }
    });
    try {
      await sleep(500);
      await cluster!.restart();
      restarted = true;
      await eventually(async () => expect(backAfter.size, 'clients answered 200 since the restart').to.equal(5), 15_000);
    } finally {
      stopped = true;
      await Promise.all(loops);
    }
    const statuses = answers.map((res) => res.status);
    expect(
      answers.filter((res) => res.status !== 200 && res.status !== 503).map((res) => `${res.status} ${res.text}`),
      'answers other than 200 and 503',
    ).to.deep.equal([]);
    const refused = answers.filter((res) => res.status === 503);
    expect(refused.length, `the restart was met (${statuses.length} answers)`).to.be.greaterThan(0);
    for (const res of refused) {
      expect(res.body).to.deep.equal({ detail: 'The database is unavailable; try again in a few seconds.' });
      expect(res.headers.get('retry-after')).to.equal('5');
    }
    const stored = new Set((await server!.db('chat_messages').pluck('message')).map(String));
    expect(said.filter((text) => !stored.has(text)), 'acknowledged says not stored').to.deep.equal([]);
    expect((await server!.get('/health')).status).to.equal(200);
  });
});
