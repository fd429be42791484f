/**
 * Link-dead is told as it happens (issue 35): when a character's last event stream closes and
 * nothing else keeps it connected, the world's other streams get a `presence` event with
 * `linkdead: true`, and `linkdead: false` when it streams again; GET /status names the
 * link-dead among the active players. Clients mark who is link-dead from these alone.
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, resetGame, statusOf } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';
import { sessionRow } from '../helpers/accounts.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

describe(`link-dead, live (${DB_NAME})`, function () {
  this.timeout(30_000);
  let server: TestServer;
  const streams: SseStream[] = [];
  const listen = async (sessionId: string): Promise<SseStream> => {
    const stream = await openStream(`${server.url}/events/${sessionId}`);
    streams.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await resetGame(server);
  });

  it('a closed tab is link-dead for the others at once, and back when it streams again', async () => {
    const anna = await newPlayer(server, 'Anna');
    const bert = await newPlayer(server, 'Bert');
    const watching = await listen(anna.sessionId);
    const tab = await listen(bert.sessionId);
    // Once the tab's stream is known to every instance (its lease written).
    const bertSession = (await sessionRow(server, bert.sessionId)).id;
    await eventually(async () => expect(await server.db('event_stream_leases').where({ session_id: bertSession })).to.have.length(1), 5000);
    expect((await statusOf(anna)).linkdead_players).to.deep.equal([]);
    tab.close();
    expect((await watching.nextOf('presence')).data).to.deep.equal({ character: bert.name, online: true, linkdead: true });
    expect((await statusOf(anna)).linkdead_players).to.deep.equal([bert.name]);
    expect((await statusOf(anna)).active_players).to.include(bert.name);
    await listen(bert.sessionId);
    expect((await watching.nextOf('presence')).data).to.deep.equal({ character: bert.name, online: true, linkdead: false });
    await eventually(async () => expect((await statusOf(anna)).linkdead_players).to.deep.equal([]), 5000);
  });
});
