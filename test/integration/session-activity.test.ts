/**
 * Session activity is recorded in memory and written in batches (src/services/accounts/session-activity.ts):
 * polls never write on their own path, a flush writes everything pending in a few statements,
 * the expiry still slides, the sweep writes first, and a failed write is kept for the next one.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { createUser, login, sessionRow } from '../helpers/accounts.ts';
import { newPlayer, wroteBehindServer } from '../helpers/players.ts';
import { toDbTime } from '../../src/db/clock.ts';
import { insertedId } from '../../src/db/inserted-id.ts';
import { SessionRepository, sessionTokenHash } from '../../src/db/repositories/session-repository.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Past the 15 s to which activity is recorded (docs/decisions.md), so each request records some. */
const PAST_RESOLUTION = 20 * SECOND;

const ping = (server: TestServer, sessionId: string) => server.post(`/ping/${sessionId}`);

/** The UPDATE, INSERT and DELETE statements the server's database runs during `work`. */
async function writesDuring(server: TestServer, work: () => Promise<unknown>): Promise<string[]> {
  const writes: string[] = [];
  const onQuery = (query: { sql: string }): void => {
    if (/^\s*(update|insert|delete)\b/i.test(query.sql)) writes.push(query.sql);
  };
  server.db.on('query', onQuery);
  try {
    await work();
  } finally {
    server.db.off('query', onQuery);
  }
  return writes;
}

/** The error `work` rejects with. */
async function failureOf(work: () => Promise<unknown>): Promise<Error> {
  try {
    await work();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

/** Makes every write of session activity fail in the database itself, until the returned function undoes it. */
async function refuseActivityWrites(server: TestServer): Promise<() => Promise<void>> {
  if (usePostgres) {
    await server.db.raw("CREATE FUNCTION refuse_activity() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'activity refused'; END $$");
    await server.db.raw('CREATE TRIGGER refuse_activity BEFORE UPDATE OF last_activity ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_activity()');
    return async () => {
      await server.db.raw('DROP TRIGGER refuse_activity ON sessions');
      await server.db.raw('DROP FUNCTION refuse_activity()');
    };
  }
  await server.db.raw("CREATE TRIGGER refuse_activity BEFORE UPDATE OF last_activity ON sessions BEGIN SELECT RAISE(ABORT, 'activity refused'); END");
  return async () => {
    await server.db.raw('DROP TRIGGER refuse_activity');
  };
}

describe(`session activity (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let server: TestServer;
  before(async () => {
    // These tests count the writes of session activity.
    server = await startTestServer({ worldClock: false });
    await createUser(server, 'regular', 'player');
  });
  after(async () => {
    await server?.close();
  });

  it('polls write nothing while served; one flush writes their activity in one statement, a second writes nothing', async () => {
    const player = await newPlayer(server, 'Reader');
    const before = await sessionRow(server, player.sessionId);
    const polls = [
      () => server.get(`/chat/${player.sessionId}`),
      () => server.get(`/status/${player.sessionId}`),
      () => ping(server, player.sessionId),
    ];
    const writes = await writesDuring(server, async () => {
      for (const poll of polls) {
        server.clock.advance(PAST_RESOLUTION);
        const res = await poll();
        expect(res.status, res.text).to.equal(200);
      }
    });
    expect(writes).to.deep.equal([]);
    const unwritten = await sessionRow(server, player.sessionId);
    expect(unwritten).to.include({ last_activity: before.last_activity, expires_at: before.expires_at });

    const flushed = await writesDuring(server, () => server.services.sessions.flushActivity());
    expect(flushed).to.have.length(1);
    const now = server.clock.now();
    expect(await sessionRow(server, player.sessionId)).to.include({
      last_activity: toDbTime(now),
      expires_at: toDbTime(new Date(now.getTime() + 480 * MINUTE)),
    });
    expect(await writesDuring(server, () => server.services.sessions.flushActivity())).to.deep.equal([]);
  });

  it('slides the expiry through flushes: used every 7 hours a session outlives the 8-hour ttl, idle it ends', async () => {
    const sid = await login(server, 'regular');
    for (let hour = 7; hour <= 35; hour += 7) {
      server.clock.advance(7 * HOUR);
      expect((await ping(server, sid)).status, `hour ${hour}`).to.equal(200);
      await server.services.sessions.flushActivity();
      expect((await sessionRow(server, sid)).expires_at, `hour ${hour}`).to.equal(toDbTime(new Date(server.clock.now().getTime() + 480 * MINUTE)));
      // Forgets the remembered session: the next request judges it by the row alone.
      await wroteBehindServer(server);
    }
    server.clock.advance(481 * MINUTE);
    expect((await ping(server, sid)).status).to.equal(401);
    expect(await server.services.sessions.sweepExpired()).to.be.at.least(1);
    expect(await sessionRow(server, sid)).to.equal(undefined);
  });

  it('the sweep writes pending activity first: a session slid only in memory is not swept', async () => {
    const sid = await login(server, 'regular');
    const loginExpiry = (await sessionRow(server, sid)).expires_at as string;
    server.clock.advance(7 * HOUR);
    expect((await ping(server, sid)).status).to.equal(200);
    const slidTo = toDbTime(new Date(server.clock.now().getTime() + 480 * MINUTE));
    expect((await sessionRow(server, sid)).expires_at).to.equal(loginExpiry);
    // Past the expiry the row had at login, well before the slid one.
    server.clock.advance(2 * HOUR);
    await server.services.sessions.sweepExpired();
    expect((await sessionRow(server, sid)).expires_at).to.equal(slidTo);
    expect((await ping(server, sid)).status).to.equal(200);
  });

  it('keeps the activity of a failed write for the next one, newer activity replacing it; an outage is logged once as it begins and once as it ends, without tokens', async () => {
    await server.services.sessions.flushActivity();
    const first = await login(server, 'regular');
    const second = await login(server, 'regular');
    server.clock.advance(PAST_RESOLUTION);
    for (const sid of [first, second]) expect((await ping(server, sid)).status).to.equal(200);
    const firstStamp = toDbTime(server.clock.now());
    const allow = await refuseActivityWrites(server);
    try {
      expect((await failureOf(() => server.services.sessions.flushActivity())).message).to.contain('activity refused');
      server.clock.advance(PAST_RESOLUTION);
      expect((await ping(server, second)).status).to.equal(200);
      // Failing again (here and on the retry timer) logs nothing more: one line per outage.
      for (let i = 0; i < 3; i++) await failureOf(() => server.services.sessions.flushActivity());
      const outage = server.logs.entries.filter((e) => e.message === 'Session activity cannot be written; kept in memory and retried with backoff');
      expect(outage).to.have.length(1);
      expect(outage[0]).to.include({ level: 'error', sessions: 2 });
      expect(server.logs.text()).to.not.contain(first).and.not.contain(second);
    } finally {
      await allow();
    }
    await server.services.sessions.flushActivity();
    expect(server.logs.entries.filter((e) => e.message === 'Session activity written again')).to.have.length(1);
    expect((await sessionRow(server, first)).last_activity).to.equal(firstStamp);
    expect((await sessionRow(server, second)).last_activity).to.equal(toDbTime(server.clock.now()));
  });

  it('writes many sessions in one UPDATE per 150, and never brings back a deleted one', async () => {
    const userId = Number((await server.db('users').where({ username: 'regular' }).first('id')).id);
    const created = toDbTime(server.clock.now());
    // Unexpired, so no sweep can take them while the test runs.
    const loginExpiry = toDbTime(new Date(server.clock.now().getTime() + 8 * HOUR));
    const ids: number[] = [];
    for (let i = 0; i < 320; i++) {
      const [row] = await server
        .db('sessions')
        .insert({ token_hash: sessionTokenHash(randomUUID()), user_id: userId, client_type: 'web', created_at: created, last_activity: created, expires_at: loginExpiry })
        .returning('id');
      ids.push(insertedId(row));
    }
    const deleted = ids.pop()!;
    await server.db('sessions').where({ id: deleted }).delete();
    const stamp = toDbTime(new Date(server.clock.now().getTime() + MINUTE));
    const expiry = toDbTime(new Date(server.clock.now().getTime() + HOUR));
    // Even ids slide their expiry; odd ones only record activity (as without sliding expiry).
    const rows = [...ids, deleted].map((id) => ({ id, lastActivity: stamp, ...(id % 2 === 0 ? { expiresAt: expiry } : {}) }));
    const writes = await writesDuring(server, () => new SessionRepository(server.db).recordActivity(rows));
    expect(writes).to.have.length(3);
    const stored = await server.db('sessions').whereIn('id', [...ids, deleted]).select('id', 'last_activity', 'expires_at');
    expect(stored).to.have.length(ids.length);
    for (const row of stored) {
      expect(row, String(row.id)).to.include({ last_activity: stamp, expires_at: Number(row.id) % 2 === 0 ? expiry : loginExpiry });
    }
    await server.db('sessions').whereIn('id', ids).delete();
  });
});
