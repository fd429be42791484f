/**
 * What one client can make the event streams hold (issue 21, defects 3 and 4): a stream's
 * unread backlog is bounded in bytes, an account and an address hold a bounded number of
 * streams, and a client that hangs up while its GET /events is being authenticated leaves no
 * stream behind.
 */
import { describe, it, afterEach } from 'mocha';
import { expect } from 'chai';
import net from 'node:net';
import { usePostgres, type TestServer } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { loginAs, newPlayer, okCmd, selectCharacter } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';

const BACKLOG = 16_384;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GET /events from a raw socket that never reads what the server sends. */
function silentStream(server: TestServer, sessionId: string): net.Socket {
  const socket = net.connect(server.port, '127.0.0.1');
  socket.pause();
  socket.write(`GET /events/${sessionId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
  return socket;
}

describe(`event stream limits (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  const server = oneServer({
    env: { MUD_EVENTS_BACKLOG_BYTES: String(BACKLOG), MUD_EVENTS_STREAMS_PER_ACCOUNT: '2', MUD_EVENTS_STREAMS_PER_ADDRESS: '3' },
    reset: true,
  });
  const open: SseStream[] = [];
  const sockets: net.Socket[] = [];

  afterEach(async () => {
    open.splice(0).forEach((s) => s.close());
    sockets.splice(0).forEach((s) => s.destroy());
    for (let waited = 0; server().services.streams.stats().open > 0 && waited < 3000; waited += 50) await sleep(50);
  });

  it('a client that never reads holds at most backlog_bytes (and a frame) before it is dropped as lagging; a reading one keeps flowing', async function () {
    this.timeout(90_000);
    const [a, b, c] = [await newPlayer(server(), 'Anna'), await newPlayer(server(), 'Bert'), await newPlayer(server(), 'Cleo')];
    const lively = await openStream(`${server().url}/events/${a.sessionId}`);
    open.push(lively);
    sockets.push(silentStream(server(), b.sessionId), silentStream(server(), c.sessionId));
    for (let waited = 0; server().services.streams.stats().open < 3 && waited < 3000; waited += 20) await sleep(20);
    // Stored HTML-escaped, each `'` becomes `&#x27;`: about 12 kB a frame. The kernel's socket
    // buffers take megabytes first; past them the server holds what the client does not read.
    const text = "'".repeat(1990);
    const lagging = () => server().services.streams.stats().endedByReason.lagging ?? 0;
    let most = 0;
    // One say at a time, each read by the reading client (in this process) before the next, so
    // it keeps up however loaded the machine is.
    for (let i = 0; i < 1500 && lagging() < 2; i++) {
      await okCmd(a, `say ${text}`);
      most = Math.max(most, server().services.streams.stats().backlogBytes);
      await lively.nextOf('chat', 5000);
    }
    for (let waited = 0; lagging() < 2 && waited < 5000; waited += 50) await sleep(50);
    expect(lagging()).to.equal(2);
    // The silent streams never held more than their budgets and a frame each; the reader holds little.
    expect(most).to.be.at.most(2 * (BACKLOG + 13_000) + 13_000);
    await okCmd(b, 'say still here');
    let heard = await lively.nextOf('chat', 5000);
    while (heard.data.sender !== b.name) heard = await lively.nextOf('chat', 5000);
    expect(heard.data.text).to.equal('still here');
  });

  it('a stream ended as lagging still gets its end event, after what it was sent, once its client reads again', async function () {
    this.timeout(90_000);
    const [a, b] = [await newPlayer(server(), 'Anna'), await newPlayer(server(), 'Bert')];
    const lively = await openStream(`${server().url}/events/${a.sessionId}`);
    open.push(lively);
    const silent = silentStream(server(), b.sessionId);
    sockets.push(silent);
    for (let waited = 0; server().services.streams.stats().open < 2 && waited < 3000; waited += 20) await sleep(20);
    const text = "'".repeat(1990);
    // Streams ended as lagging since this test began.
    const earlier = server().services.streams.stats().endedByReason.lagging ?? 0;
    const lagging = () => (server().services.streams.stats().endedByReason.lagging ?? 0) - earlier;
    for (let i = 0; i < 1500 && lagging() < 1; i++) {
      await okCmd(a, `say ${text}`);
      await lively.nextOf('chat', 5000);
    }
    expect(lagging()).to.equal(1);
    // The client reads again: everything it was sent, the end last, then the server closes.
    const received: Buffer[] = [];
    silent.on('data', (chunk: Buffer) => received.push(chunk));
    await new Promise<void>((resolve) => {
      silent.once('close', () => resolve());
      silent.resume();
    });
    const body = Buffer.concat(received).toString('utf8');
    expect(body.slice(body.lastIndexOf('event: '))).to.match(/^event: end\ndata: \{"reason":"lagging"\}\n\n\r\n0\r\n\r\n$/);
  });

  it('an account holds at most streams_per_account streams and an address streams_per_address (429); a closed one frees its place', async () => {
    const a = await newPlayer(server(), 'Anna');
    const second = await loginAs(server(), a.username);
    await selectCharacter(server(), second, a.characterId);
    for (const session of [a.sessionId, second]) {
      const stream = await openStream(`${server().url}/events/${session}`);
      open.push(stream);
      expect(stream.status).to.equal(200);
    }
    const other = await loginAs(server(), a.username);
    await selectCharacter(server(), other, a.characterId);
    const refused = await openStream(`${server().url}/events/${other}`);
    expect(refused.status).to.equal(429);
    expect(refused.body.detail).to.equal('Too many open event streams for this account (at most 2). Try again in 10 seconds.');
    expect(refused.headers.get('retry-after')).to.equal('10');

    const b = await newPlayer(server(), 'Bert');
    open.push(await openStream(`${server().url}/events/${b.sessionId}`));
    const c = await newPlayer(server(), 'Cleo');
    const fromAddress = await openStream(`${server().url}/events/${c.sessionId}`);
    expect(fromAddress.status).to.equal(429);
    expect(fromAddress.body.detail).to.equal('Too many open event streams from this address (at most 3). Try again in 10 seconds.');

    open.shift()!.close();
    for (let waited = 0; server().services.streams.stats().open > 2 && waited < 3000; waited += 20) await sleep(20);
    const freed = await openStream(`${server().url}/events/${c.sessionId}`);
    open.push(freed);
    expect(freed.status).to.equal(200);
  });

  it('a client that hangs up while its GET /events is authenticated leaves no stream registered', async () => {
    const players = await Promise.all(['Anna', 'Bert'].map((name) => newPlayer(server(), name)));
    for (let round = 0; round < 10; round++) {
      // Each login is new to the session cache, so authenticating it reads the database.
      const sessions = await Promise.all(players.map((p) => loginAs(server(), p.username)));
      await Promise.all(sessions.map((s, i) => selectCharacter(server(), s, players[i]!.characterId)));
      await server().services.events.publish({ type: 'reconnected' });
      for (const session of sessions) silentStream(server(), session).resetAndDestroy();
    }
    for (let waited = 0; server().services.streams.stats().open > 0 && waited < 3000; waited += 50) await sleep(50);
    expect(server().services.streams.stats().open).to.equal(0);
    await okCmd(players[0]!, 'look');
  });
});
