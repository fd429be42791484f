/**
 * Presence that means connected (docs/decisions.md, "Presence means connected"): a character is
 * connected while it has an open event stream or made a request within [presence] idle_seconds,
 * link-dead otherwise (marked in `who` and the room), and after linkdead_seconds it leaves the
 * lists with leave/presence events while its session stays valid; it comes back with its next
 * request. POST /characters/deselect leaves at once. The admin session listing shows who is
 * connected. Across instances on PostgreSQL, the streams of one instance count on the other.
 */
import { describe, it, beforeEach, afterEach } from 'mocha';
import { expect } from 'chai';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer, twoInstances } from '../helpers/suite-servers.ts';
import { cmd, loginAs, newPlayer, okCmd, resetGame, selectCharacter, statusOf, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const SPAWN = 'lockkeepers_square';
const IDLE_MS = 60_000;
const LINKDEAD_MS = 300_000;
/** Lease writes, bus events and activity flushes settle within this (never a fixed sleep). */
const SETTLE_MS = 5000;

describe(`presence means connected (${DB_NAME})`, function () {
  const server = oneServer({ reset: true });
  let admin: string;
  const open: SseStream[] = [];
  const listen = async (player: Player): Promise<SseStream> => {
    const stream = await openStream(`${player.server.url}/events/${player.sessionId}`);
    open.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };
  const sessionRowOf = async (player: Player) => {
    const res = await server().get('/admin/database/sessions', { authorization: `Bearer ${admin}` });
    expect(res.status, res.text).to.equal(200);
    return (res.body.sessions as Array<{ character_name: string | null; open_streams: number; connected: boolean; away: boolean }>).find((r) => r.character_name === player.name);
  };

  beforeEach(async () => {
    admin = await sessionFor(server(), `pr_admin${Date.now() % 1_000_000}`, 'superuser');
  });
  afterEach(() => {
    open.splice(0).forEach((s) => s.close());
  });

  it('without a stream: connected for idle_seconds after a request, then link-dead in who and the room (still in /status); a request connects it again', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
    server().clock.advance(IDLE_MS + 1000);
    expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name} (link-dead)`);
    expect(await okCmd(a, 'look')).to.include(`[Players here]:\n  - ${b.name} (link-dead)\n`);
    expect(await okCmd(a, `examine ${b.name}`)).to.equal(`${b.name} is here.\n${b.name} is link-dead: their player is away.\nThey carry nothing.`);
    expect((await statusOf(a)).active_players).to.deep.equal([a.name, b.name].sort());
    expect(await okCmd(a, `tell ${b.name} hello`)).to.equal(`You tell ${b.name}: hello\n${b.name} is link-dead: it waits in their chat.`);
    // Bert comes back: one request and every list sees him connected.
    await statusOf(b);
    await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`), SETTLE_MS);
  });

  it('an open event stream keeps a character connected; closing it makes it link-dead at once', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const stream = await listen(b);
    await eventually(async () => expect((await sessionRowOf(b))?.open_streams).to.equal(1), SETTLE_MS);
    server().clock.advance(IDLE_MS + 1000);
    await server().services.streams.renewLeases();
    expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
    expect(await sessionRowOf(b)).to.include({ open_streams: 1, connected: true, away: false });
    stream.close();
    await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name} (link-dead)`), SETTLE_MS);
    expect(await sessionRowOf(b)).to.include({ open_streams: 0, connected: false, away: false });
  });

  it("a streaming character's requests after idle_seconds tell no instance anything (it was connected all along); after its stream closes, they connect it", async () => {
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const connections: string[] = [];
    server().services.events.subscribe((event) => {
      if (event.type === 'connection') connections.push(event.worldId);
    });
    const stream = await listen(b);
    await eventually(async () => expect((await sessionRowOf(b))?.open_streams).to.equal(1), SETTLE_MS);
    // The stream's opening is told (on PostgreSQL heard back a moment after its lease is written).
    await eventually(async () => expect(connections).to.include('emberwick'), SETTLE_MS);
    connections.length = 0;
    server().clock.advance(IDLE_MS + 1000);
    await server().services.streams.renewLeases();
    await okCmd(b, 'look');
    await server().services.sessions.flushActivity();
    expect(connections, 'a connection event makes every instance reload the world\'s list').to.deep.equal([]);

    stream.close();
    await eventually(async () => expect((await sessionRowOf(b))?.open_streams).to.equal(0), SETTLE_MS);
    // Its closing is told too, as heard back after the lease is written.
    await eventually(async () => expect(connections).to.include('emberwick'), SETTLE_MS);
    connections.length = 0;
    await okCmd(b, 'look');
    await eventually(async () => expect(connections).to.deep.equal(['emberwick']), SETTLE_MS);
  });

  it('the tab closed: link-dead at once although the last request was recent; opening a stream again connects it', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    (await listen(b)).close();
    await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name} (link-dead)`), SETTLE_MS);
    await listen(b);
    await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`), SETTLE_MS);
  });

  it('link-dead past linkdead_seconds: leaves the lists (leave, presence offline), the session stays valid, and its next request brings it back', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const watcher = await listen(a);
    await eventually(async () => expect((await sessionRowOf(a))?.open_streams).to.equal(1), SETTLE_MS);
    server().clock.advance(LINKDEAD_MS + 1000);
    expect(await server().services.sweepLinkdead()).to.equal(1);
    expect((await watcher.nextOf('leave')).data).to.deep.equal({ character: b.name, room_id: SPAWN, direction: null, cause: 'logout' });
    expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: false });
    expect(await okCmd(a, 'who')).to.equal('No other players online.');
    expect(await okCmd(a, 'look')).to.not.include('[Players here]');
    expect((await statusOf(a)).active_players).to.deep.equal([a.name]);
    expect(await sessionRowOf(b)).to.include({ connected: false, away: true });
    // Anna, watching, was never swept; a second sweep finds nobody.
    expect(await server().services.sweepLinkdead()).to.equal(0);
    // Bert returns: his session still works, and he arrives again.
    expect((await statusOf(b)).current_room).to.equal(SPAWN);
    expect((await watcher.nextOf('arrive')).data).to.deep.equal({ character: b.name, room_id: SPAWN, direction: null, cause: 'login' });
    expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: true });
    expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
    expect(await sessionRowOf(b)).to.include({ connected: true, away: false });
  });

  it('a character with a second, connected session is not swept away with the idle one', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const watcher = await listen(a);
    server().clock.advance(LINKDEAD_MS + 1000);
    const second = await loginAs(server(), b.username);
    await selectCharacter(server(), second, b.characterId);
    expect(await server().services.sweepLinkdead()).to.equal(1);
    // Anna's own say comes after anything the sweep told.
    await okCmd(a, 'say still here?');
    const told = await watcher.until('chat', (e) => e.data.text === 'still here?');
    expect(told.filter((e) => e.event === 'leave' || e.event === 'presence').map((e) => e.data), 'Bert never left').to.deep.equal([]);
    expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
  });

  it('POST /characters/deselect: the character leaves at once, the session stays logged in, selecting again arrives', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const watcher = await listen(a);
    const res = await server().post('/characters/deselect', { session_id: b.sessionId });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, message: `${b.name} leaves the world.` });
    expect((await watcher.nextOf('leave')).data).to.deep.equal({ character: b.name, room_id: SPAWN, direction: null, cause: 'logout' });
    expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: false });
    expect(await okCmd(a, 'who')).to.equal('No other players online.');
    const noCharacter = await server().post('/command', { session_id: b.sessionId, command: 'look' });
    expect(noCharacter.status).to.equal(409);
    const again = await server().post('/characters/deselect', {}, { authorization: `Bearer ${b.sessionId}` });
    expect(again.status).to.equal(409);
    expect(again.body.detail).to.equal('No character selected for session. Select a character first.');
    expect((await server().get('/characters', { authorization: `Bearer ${b.sessionId}` })).status).to.equal(200);
    await selectCharacter(server(), b.sessionId, b.characterId);
    expect((await watcher.nextOf('arrive')).data).to.deep.equal({ character: b.name, room_id: SPAWN, direction: null, cause: 'login' });
    expect((await cmd(b, 'look')).success).to.equal(true);
  });

  it('POST /characters/deselect without a valid session: 401', async () => {
    const res = await server().post('/characters/deselect', { session_id: '00000000-0000-4000-8000-000000000000' });
    expect(res.status).to.equal(401);
  });
});

describe(`presence across two instances (${DB_NAME})`, function () {
  // One SQLite instance per database file: its bus is in-process (docs/decisions.md).
  const servers = twoInstances({ postgresOnly: true });

  it("a stream on instance B keeps its character connected on A; its close makes it link-dead on A; A's sweep sends it away, a request on B brings it back", async () => {
    const [one, two] = servers();
    await resetGame(one);
    const a = await newPlayer(one, 'Anna', SPAWN);
    const b = await newPlayer(two, 'Bert', SPAWN);
    const stream = await openStream(`${two.url}/events/${b.sessionId}`);
    const watcher = await openStream(`${one.url}/events/${a.sessionId}`);
    try {
      await eventually(async () => expect(await one.db('event_stream_leases').count({ n: '*' }).first()).to.deep.include({ n: usePostgres ? '2' : 2 }), SETTLE_MS);
      one.clock.advance(IDLE_MS + 1000);
      await two.services.streams.renewLeases();
      await one.services.streams.renewLeases();
      expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
      stream.close();
      await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name} (link-dead)`), SETTLE_MS);
      // Told on A as it happened on B (issue 35).
      expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: true, linkdead: true });
      one.clock.advance(LINKDEAD_MS);
      await two.services.streams.renewLeases();
      expect(await one.services.sweepLinkdead()).to.equal(1);
      expect(await two.services.sweepLinkdead()).to.equal(0);
      expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: false });
      expect(await okCmd(a, 'who')).to.equal('No other players online.');
      expect((await statusOf(b)).current_room).to.equal(SPAWN);
      expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: true });
      await eventually(async () => expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`), SETTLE_MS);
    } finally {
      stream.close();
      watcher.close();
    }
  });
});

describe(`the link-dead sweep on its own schedule (${DB_NAME})`, function () {
  const LINKDEAD_SECONDS = 20;
  const server = oneServer({ env: { MUD_PRESENCE_IDLE_SECONDS: '5', MUD_PRESENCE_LINKDEAD_SECONDS: String(LINKDEAD_SECONDS) } });

  it('sends a character link-dead past linkdead_seconds away with nobody calling the sweep: it runs every tenth of linkdead_seconds', async () => {
    const a = await newPlayer(server(), 'Anna', SPAWN);
    const b = await newPlayer(server(), 'Bert', SPAWN);
    const watcher = await openStream(`${server().url}/events/${a.sessionId}`);
    try {
      expect(watcher.status).to.equal(200);
      await eventually(async () => expect(Number((await server().db('event_stream_leases').count({ n: '*' }).first())?.n)).to.equal(1), SETTLE_MS);
      server().clock.advance((LINKDEAD_SECONDS + 1) * 1000);
      // The sweep runs every 2 s here (a tenth of 20 s): 6 s are three chances, and less than
      // linkdead_seconds, so a sweep less often than that would miss them all.
      expect((await watcher.nextOf('leave', 6000)).data).to.deep.equal({ character: b.name, room_id: SPAWN, direction: null, cause: 'logout' });
      expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: b.name, online: false });
    } finally {
      watcher.close();
    }
  });
});
