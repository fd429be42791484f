/**
 * Live events across a real PostgreSQL restart (issue 14): two instances on a private cluster
 * (test/helpers/private-postgres.ts; the shared database cannot be restarted under other
 * suites). A client that resumes by Last-Event-ID misses no chat, and once the instances'
 * LISTEN connections are back (src/db/event-bus.ts) events flow live again.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd } from '../helpers/players.ts';
import { openStream, type SseEvent, type SseStream } from '../helpers/sse.ts';
import { postgresBinFor, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

/** The chat events a closed stream had already received. */
async function receivedChat(stream: SseStream): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (;;) {
    const event = await stream.next(1).catch(() => null);
    if (!event) return events.filter((e) => e.event === 'chat');
    events.push(event);
  }
}

describe('live events across a database restart (PostgreSQL)', function () {
  let cluster: PrivatePostgres | undefined;
  let one: TestServer | undefined;
  let two: TestServer | undefined;

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    cluster = await startPrivatePostgres(postgresBinFor(this));
    one = await startTestServer({ databaseUrl: cluster.url });
    two = await startTestServer({ databaseUrl: cluster.url, shareDatabaseWith: one, clock: one.clock });
  });
  after(async () => {
    try {
      await two?.close();
      await one?.close();
    } finally {
      await cluster?.stop();
    }
  });

  it('a client that resumes misses no chat, and events flow live again once the bus reconnects', async () => {
    const [a, b] = [one!, two!];
    const anna = await newPlayer(a, 'Anna');
    const bert = await newPlayer(b, 'Bert');
    const first = await openStream(`${a.url}/events/${anna.sessionId}`);
    let resumed: SseStream | undefined;
    try {
      await okCmd(bert, 'say before the restart');
      const before = await first.nextOf('chat');
      expect(before.data.text).to.equal('before the restart');

      await cluster!.restart();
      // The stream holds no database connection, so the restart leaves it open (its session
      // checks fail meanwhile and end nothing).
      expect(first.done).to.equal(false);

      // Say on B until A's stream hears chat again: B's pool may first meet its dead
      // connections, and A's bus listens again only after a backoff. What was said before
      // that must still reach the stream, in order, ahead of the live says.
      const said: string[] = [];
      const seen = [before];
      const deadline = Date.now() + 15_000;
      while (seen.length === 1) {
        if (Date.now() > deadline) expect.fail(`no chat on A's stream after the restart (said: ${said.join(', ')})`);
        const text = `after the restart ${said.length + 1}`;
        const res = await b.post('/command', { session_id: bert.sessionId, command: `say ${text}` });
        // Meanwhile a say is stored or refused with 503, never anything else (README, "Faults").
        expect(res.status, res.text).to.be.oneOf([200, 503]);
        if (res.status === 200) said.push(text);
        const heard = await first.nextOf('chat', 200).catch(() => null);
        if (heard) seen.push(heard);
      }
      expect(first.done).to.equal(false);
      for (const server of [a, b]) expect((await server.get('/health')).status).to.equal(200);

      // The client drops, misses two says, and resumes from the last chat it received.
      first.close();
      seen.push(...(await receivedChat(first)));
      for (const text of ['while away 1', 'while away 2']) {
        await okCmd(bert, `say ${text}`);
        said.push(text);
      }
      resumed = await openStream(`${a.url}/events/${anna.sessionId}`, { 'last-event-id': seen.at(-1)!.id! });
      const stored = (await a.db('chat_messages').orderBy('id').pluck('id')).map(String);
      const replayed: SseEvent[] = [];
      while (seen.length + replayed.length < stored.length) {
        const event = await resumed.nextOf('chat', 2000).catch(() => null);
        if (!event) break;
        replayed.push(event);
      }
      // Compared with the database, not with consecutive ids: a restart makes the id sequence skip.
      const heard = [...seen, ...replayed];
      expect(heard.map((e) => e.id)).to.deep.equal(stored);
      expect(heard.map((e) => e.data.text)).to.deep.equal(['before the restart', ...said]);

      // A's bus listens again (it delivered above): a say on B arrives live, and as the next
      // chat, so nothing was replayed twice.
      await okCmd(bert, 'say live again');
      expect((await resumed.nextOf('chat', 2000)).data.text).to.equal('live again');
    } finally {
      first.close();
      resumed?.close();
    }
  });
});
