/**
 * Abuse limits hold across instances: two servers on one database count wrong passwords,
 * per-address logins and commands together, in the database (PostgreSQL) or in Redis
 * (`[limits] redis_url`), so a balancer in front of N instances gives no one N times the
 * allowance. Redis is the one at MUD_TEST_REDIS_URL (default redis://127.0.0.1:6379): without it
 * its tests are skipped with a message, and fail under CI; the fallback to counting in memory
 * when Redis does not answer needs none.
 */
import { describe, it, before } from 'mocha';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { twoInstances } from '../helpers/suite-servers.ts';
import { needs } from '../helpers/needs.ts';
import { createUser, GOOD_PASSWORD, login } from '../helpers/accounts.ts';
import { newPlayer, selectCharacter, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { eventually } from '../helpers/eventually.ts';

const REDIS_URL = process.env.MUD_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WRONG_PASSWORD = 'Wrong-Lantern-42';
const LIMITS = {
  MUD_RATE_LIMIT_ENABLED: 'true',
  MUD_RATE_LIMIT_LOGIN_PER_USERNAME: '4',
  MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '6',
  MUD_RATE_LIMIT_COMMAND_PER_SESSION: '5',
  MUD_EVENTS_STREAMS_PER_ACCOUNT: '2',
  MUD_EVENTS_STREAMS_PER_ADDRESS: '2',
  // Each test logs in from an address of its own, named by X-Forwarded-For.
  MUD_SERVER_TRUST_PROXY: 'loopback',
};

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

/**
 * Redis behind a TCP relay on 127.0.0.1 that can stop answering, as a Redis that hangs does
 * (stopped, or cut off by a network that drops packets): it accepts and reads, and answers
 * nothing. While it hangs, what the clients send goes nowhere, on the connections open then too,
 * which stay stuck (Redis answers in order, so they could never be in step again); once it
 * answers, new connections reach the real Redis. It counts the connections it accepts, and the
 * scripts (limit counts) it relays and those it swallows.
 */
async function hangingRedis(target: string): Promise<{ url: string; hang(): void; answer(): void; cut(): void; accepted: () => number; relayed: () => number; swallowed: () => number; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let hanging = false;
  const counts = { accepted: 0, relayed: 0, swallowed: 0 };
  const scripts = (chunk: Buffer): number => chunk.toString('latin1').match(/\*\d+\r\n\$\d+\r\nEVAL(?:SHA)?\r\n/gi)?.length ?? 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    counts.accepted += 1;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let stuck = hanging;
    const upstream = stuck ? null : connect({ host: hostname, port: Number(port || 6379) });
    if (upstream) {
      sockets.add(upstream);
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
    }
    client.on('data', (chunk: Buffer) => {
      stuck ||= hanging;
      if (stuck) counts.swallowed += scripts(chunk);
      else {
        counts.relayed += scripts(chunk);
        upstream!.write(chunk);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hang: () => (hanging = true),
    answer: () => (hanging = false),
    /** Cuts every open connection, as a network that drops idle ones does. */
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    accepted: () => counts.accepted,
    relayed: () => counts.relayed,
    swallowed: () => counts.swallowed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let addresses = 0;
const newAddress = (): Record<string, string> => ({ 'X-Forwarded-For': `203.0.113.${++addresses}` });

function expectLimited(res: HttpResponse): void {
  expect(res.status, res.text).to.equal(429);
  expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
}

/** The same checks for each shared store: `servers()` gives two instances on one database. */
function sharedLimits(servers: () => [TestServer, TestServer]): void {
  it('wrong passwords spread over both instances hit the per-account limit at the configured count, not twice it', async () => {
    const [one, two] = servers();
    const name = `shared${randomBytes(3).toString('hex')}`;
    await createUser(one, name, 'player');
    for (let i = 0; i < 4; i++) {
      const res = await [one, two][i % 2]!.post('/login', { username: name, password: WRONG_PASSWORD }, newAddress());
      expect(res.status, `failure ${i + 1}: ${res.text}`).to.equal(401);
    }
    expectLimited(await two.post('/login', { username: name, password: WRONG_PASSWORD }, newAddress()));
    expectLimited(await one.post('/login', { username: name, password: WRONG_PASSWORD }, newAddress()));
    // The owner still gets in, on either instance.
    expect((await two.post('/login', { username: name, password: GOOD_PASSWORD }, newAddress())).status).to.equal(200);
  });

  it('failed logins from one address spread over both instances hit the per-address limit at the configured count', async () => {
    const [one, two] = servers();
    const name = `addr${randomBytes(3).toString('hex')}`;
    await createUser(one, name, 'player');
    const from = newAddress();
    // Logins with the right password are not counted (issue 35).
    for (let i = 0; i < 8; i++) expect((await [one, two][i % 2]!.post('/login', { username: name, password: GOOD_PASSWORD }, from)).status).to.equal(200);
    for (let i = 0; i < 6; i++) {
      const res = await [one, two][i % 2]!.post('/login', { username: `${name}${i}`, password: WRONG_PASSWORD }, from);
      expect(res.status, `failure ${i + 1}: ${res.text}`).to.equal(401);
    }
    expectLimited(await one.post('/login', { username: name, password: GOOD_PASSWORD }, from));
    expectLimited(await two.post('/login', { username: name, password: GOOD_PASSWORD }, from));
    // Another address is not affected.
    expect((await two.post('/login', { username: name, password: GOOD_PASSWORD }, newAddress())).status).to.equal(200);
  });

  it('commands of one session spread over both instances hit the command limit at the configured count', async () => {
    const [one, two] = servers();
    const player = await newPlayer(one, 'Throttle');
    for (let i = 0; i < 5; i++) {
      const res = await [one, two][i % 2]!.post('/command', { session_id: player.sessionId, command: 'look' });
      expect(res.status, `command ${i + 1}: ${res.text}`).to.equal(200);
    }
    expectLimited(await one.post('/command', { session_id: player.sessionId, command: 'look' }));
    expectLimited(await two.post('/command', { session_id: player.sessionId, command: 'look' }));
  });
}

describe('limits shared by two instances', () => {
  describe('in the database (PostgreSQL)', () => {
    const servers = twoInstances({ env: LIMITS, postgresOnly: true });
    sharedLimits(servers);

    it('event streams spread over both instances hit the per-account and per-address stream limits at the configured count', async () => {
      const [one, two] = servers();
      const open: SseStream[] = [];
      /** A stream of `player` in a session of its own on `server`, from `from`. */
      const stream = async (server: TestServer, player: Player, from: Record<string, string>): Promise<SseStream> => {
        const sessionId = await login(server, player.username, GOOD_PASSWORD, newAddress());
        await selectCharacter(server, sessionId, player.characterId);
        const opened = await openStream(`${server.url}/events/${sessionId}`, from);
        open.push(opened);
        return opened;
      };
      // The other instance learns of a stream from its lease, written once the stream is open.
      const leased = (streams: number) =>
        eventually(async () => expect(Number((await one.db('event_stream_leases').sum({ n: 'streams' }).first())?.n ?? 0)).to.equal(streams), 5000);
      try {
        const wren = await newPlayer(one, 'Wren');
        expect((await stream(one, wren, newAddress())).status).to.equal(200);
        expect((await stream(two, wren, newAddress())).status).to.equal(200);
        await leased(2);
        const third = await stream(one, wren, newAddress());
        expectLimited({ status: third.status, headers: third.headers } as HttpResponse);

        const from = newAddress();
        const [ash, bay, cole] = [await newPlayer(two, 'Ash'), await newPlayer(two, 'Bay'), await newPlayer(two, 'Cole')];
        expect((await stream(two, ash, from)).status).to.equal(200);
        expect((await stream(one, bay, from)).status).to.equal(200);
        await leased(4);
        const fromSame = await stream(two, cole, from);
        expectLimited({ status: fromSame.status, headers: fromSame.headers } as HttpResponse);
        expect((await stream(two, cole, newAddress())).status).to.equal(200);
      } finally {
        for (const s of open) s.close();
      }
    });

    it('keeps the counts in limit_windows and prunes the windows that ended', async () => {
      const [one] = servers();
      const rows = await one.db('limit_windows').select('key');
      expect(rows.map((r) => String(r.key))).to.include.members(['login-address:203.0.113.1']);
      one.clock.advance(61_000);
      const task = one.services.maintenanceTasks.find((t) => t.name === 'limit-windows')!;
      expect(await task.run()).to.be.greaterThan(0);
      expect(await one.db('limit_windows').where('key', 'like', 'login-address:%').count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) === 0);
    });
  });

  // No Redis needed: a port where none listens.
  describe('with Redis unreachable ([limits] redis_url)', () => {
    it('counts in each instance\'s memory while Redis does not answer, and says so', async () => {
      const closed = await startTestServer({ env: { ...LIMITS, MUD_LIMITS_REDIS_URL: 'redis://127.0.0.1:1' } });
      try {
        const name = `fallback${randomBytes(3).toString('hex')}`;
        await createUser(closed, name, 'player');
        for (let i = 0; i < 4; i++) expect((await closed.post('/login', { username: name, password: WRONG_PASSWORD }, newAddress())).status).to.equal(401);
        expectLimited(await closed.post('/login', { username: name, password: WRONG_PASSWORD }, newAddress()));
        expect(closed.logs.entries.some((e) => e.level === 'warn' && /Redis unreachable/.test(String(e.message)))).to.equal(true);
        expect((await closed.get('/health')).body).to.deep.include({ status: 'ok', redis: 'degraded' });
      } finally {
        await closed.close();
      }
    });
  });

  describe('in Redis ([limits] redis_url)', () => {
    const prefix = `mud-test-${randomBytes(6).toString('hex')}:`;
    before(async function () {
      needs(this, `Redis at ${REDIS_URL}`, await reachable(REDIS_URL), 'start redis-server, or set MUD_TEST_REDIS_URL');
    });
    const servers = twoInstances({ env: { ...LIMITS, MUD_LIMITS_REDIS_URL: REDIS_URL, MUD_LIMITS_REDIS_PREFIX: prefix } });
    sharedLimits(servers);

    it('stops asking a Redis that hangs after its first timeout: counts in memory at once, says degraded in /health, and shares again once Redis answers', async () => {
      const redis = await hangingRedis(REDIS_URL);
      const server = await startTestServer({ env: { ...LIMITS, MUD_LIMITS_REDIS_URL: redis.url, MUD_LIMITS_REDIS_PREFIX: `${prefix}hang:` } });
      try {
        const health = async (): Promise<unknown> => (await server.get('/health')).body.redis;
        await eventually(async () => expect(await health()).to.equal('ok'), 10_000);
        const player = await newPlayer(server, 'Hung');
        const command = () => server.post('/command', { session_id: player.sessionId, command: 'look' });
        const relayed = redis.relayed();
        expect((await command()).status).to.equal(200);
        expect(redis.relayed(), 'a command is counted in Redis').to.be.greaterThan(relayed);

        redis.hang();
        const relayedBefore = redis.relayed();
        // The first command waits for Redis until the timeout, then is counted here.
        expect((await command()).status).to.equal(200);
        const held = redis.swallowed();
        expect(held, 'the first command asked Redis').to.be.greaterThan(0);
        expect(await health()).to.equal('degraded');
        expect(server.logs.entries.filter((e) => e.level === 'warn' && /Redis unreachable/.test(String(e.message)))).to.have.length(1);
        // The next commands and logins do not ask Redis at all, so none waits for its timeout:
        // they are counted here, where the command limit (5) still holds.
        for (let i = 0; i < 4; i++) expect((await command()).status).to.equal(200);
        expect((await server.post('/login', { username: player.username, password: GOOD_PASSWORD }, newAddress())).status).to.equal(200);
        expect((await server.post('/login', { username: player.username, password: WRONG_PASSWORD }, newAddress())).status).to.equal(401);
        expect(redis.swallowed(), 'no later request asked Redis').to.equal(held);
        expect(redis.relayed()).to.equal(relayedBefore);
        expectLimited(await command());

        redis.answer();
        await eventually(async () => expect(await health()).to.equal('ok'), 10_000);
        expect(server.logs.entries.some((e) => e.level === 'info' && /Redis answers again/.test(String(e.message)))).to.equal(true);
        const before = redis.relayed();
        expect((await server.post('/login', { username: player.username, password: GOOD_PASSWORD }, newAddress())).status).to.equal(200);
        expect(redis.relayed(), 'a login is counted in Redis again').to.be.greaterThan(before);
        expect(redis.swallowed()).to.equal(held);
      } finally {
        await server.close();
        await redis.close();
      }
    });

    it('replaces a connection cut while idle at once, with no warning', async () => {
      const redis = await hangingRedis(REDIS_URL);
      const server = await startTestServer({ env: { ...LIMITS, MUD_LIMITS_REDIS_URL: redis.url, MUD_LIMITS_REDIS_PREFIX: `${prefix}cut:` } });
      try {
        const health = async (): Promise<unknown> => (await server.get('/health')).body.redis;
        await eventually(async () => expect(await health()).to.equal('ok'), 10_000);
        const accepted = redis.accepted();
        redis.cut();
        // A new connection, and Redis answered on it.
        await eventually(async () => {
          expect(redis.accepted()).to.be.greaterThan(accepted);
          expect(await health()).to.equal('ok');
        }, 10_000);
        const before = redis.relayed();
        expect((await server.post('/login', { username: 'nobody', password: WRONG_PASSWORD }, newAddress())).status).to.equal(401);
        expect(redis.relayed(), 'the login is counted in Redis').to.be.greaterThan(before);
        expect(server.logs.entries.filter((e) => e.level === 'warn' && /Redis/.test(String(e.message)))).to.deep.equal([]);
      } finally {
        await server.close();
        await redis.close();
      }
    });
  });
});
