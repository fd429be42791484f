/**
 * Live play (GET /events/{session_id}): what each character's stream receives, resume by
 * Last-Event-ID, the ends of a stream, GET /chat?after=, and on PostgreSQL two instances on
 * one database, whose events cross over LISTEN/NOTIFY.
 */
import { describe, it, afterEach } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres } from '../helpers/test-server.ts';
import { oneServer, twoInstances } from '../helpers/suite-servers.ts';
import { cmd, loginAs, newPlayer, okCmd, resetGame, selectCharacter, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { GOOD_PASSWORD, OTHER_GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const UNKNOWN_SESSION = '00000000-0000-4000-8000-000000000000';

describe(`live events (${DB_NAME})`, function () {
  const server = oneServer({ env: { MUD_EVENTS_HEARTBEAT_SECONDS: '1', MUD_METRICS_MODE: 'open' }, reset: true });
  const open: SseStream[] = [];
  const listen = async (player: Player, headers: Record<string, string> = {}): Promise<SseStream> => {
    const stream = await openStream(`${player.server.url}/events/${player.sessionId}`, headers);
    open.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };

  afterEach(() => {
    open.splice(0).forEach((s) => s.close());
  });

  it('answers text/event-stream with the no-buffering headers, and heartbeats', async () => {
    const a = await newPlayer(server(), 'Anna');
    const stream = await listen(a);
    expect(stream.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).to.equal('no-cache');
    expect(stream.headers.get('x-accel-buffering')).to.equal('no');
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(stream.heartbeats).to.be.greaterThan(0);
  });

  it('401 for an unknown session (path or bearer), 409 without a character', async () => {
    expect((await openStream(`${server().url}/events/${UNKNOWN_SESSION}`)).status).to.equal(401);
    const a = await newPlayer(server(), 'Anna');
    const bearer = await openStream(`${server().url}/events/${a.sessionId}`, { authorization: `Bearer ${UNKNOWN_SESSION}` });
    expect(bearer.status).to.equal(400);
    const unbound = await openStream(`${server().url}/events/${await loginAs(server(), a.username)}`);
    expect(unbound.status).to.equal(409);
    const viaBearer = await openStream(`${server().url}/events/${a.sessionId}`, { authorization: `Bearer ${a.sessionId}` });
    open.push(viaBearer);
    expect(viaBearer.status).to.equal(200);
  });

  it('a say reaches a listener in the room, as GET /chat shows it, with the message id as event id', async () => {
    const a = await newPlayer(server(), 'Anna');
    const b = await newPlayer(server(), 'Bert');
    const stream = await listen(b);
    await okCmd(a, 'say hello there');
    const event = await stream.nextOf('chat');
    const chat = await server().get(`/chat/${b.sessionId}`);
    expect(event.data).to.deep.equal(chat.body.messages.at(-1));
    expect(event.id).to.equal(String(event.data.id));
    expect(event.data.text).to.equal('hello there');
  });

  it('a whisper reaches only its recipient (and sender)', async () => {
    const a = await newPlayer(server(), 'Anna');
    const b = await newPlayer(server(), 'Bert');
    const c = await newPlayer(server(), 'Cleo');
    const [toB, toC, toA] = [await listen(b), await listen(c), await listen(a)];
    await okCmd(a, `whisper ${b.name} psst`);
    expect((await toB.nextOf('chat')).data.channel).to.equal('whisper');
    expect((await toA.nextOf('chat')).data.recipient).to.equal(b.name);
    await okCmd(a, 'say public');
    expect((await toC.nextOf('chat')).data.text).to.equal('public');
  });

  it('a yell reaches an adjoining room; a say does not', async () => {
    const a = await newPlayer(server(), 'Anna', 'lockkeepers_square');
    const b = await newPlayer(server(), 'Bert', 'ropewalk_bridge');
    const stream = await listen(b);
    await okCmd(a, 'say quiet');
    await okCmd(a, 'yell LOUD');
    const event = await stream.nextOf('chat');
    expect(event.data.channel).to.equal('yell');
    expect(event.data.text).to.equal('[YELL] LOUD');
  });

  it('movement: leave in the old room, arrive in the new one, room (with look) for the mover', async () => {
    const a = await newPlayer(server(), 'Anna', 'lockkeepers_square');
    const b = await newPlayer(server(), 'Bert', 'lockkeepers_square');
    const c = await newPlayer(server(), 'Cleo', 'ropewalk_bridge');
    const [mine, left, arrived] = [await listen(a), await listen(b), await listen(c)];
    await okCmd(a, 'north');
    expect((await mine.nextOf('room')).data).to.include({ room_id: 'ropewalk_bridge' });
    expect((await left.nextOf('leave')).data).to.deep.equal({ character: a.name, room_id: 'lockkeepers_square', direction: 'north', cause: 'walk' });
    expect((await arrived.nextOf('arrive')).data).to.deep.equal({ character: a.name, room_id: 'ropewalk_bridge', direction: 'north', cause: 'walk' });
    // Now in the new room, the mover hears it.
    await okCmd(c, 'say welcome');
    expect((await mine.nextOf('chat')).data.text).to.equal('welcome');
  });

  it('item and presence events', async () => {
    const a = await newPlayer(server(), 'Anna', 'lockkeepers_square');
    const b = await newPlayer(server(), 'Bert', 'lockkeepers_square');
    const stream = await listen(b);
    const itemName = (await cmd(a, 'look')).room?.items[0]?.name;
    expect(itemName).to.be.a('string');
    await okCmd(a, `get ${itemName}`);
    expect((await stream.nextOf('item')).data).to.deep.equal({ character: a.name, item: itemName, action: 'take', room_id: 'lockkeepers_square' });
    await server().post('/logout', { session_id: a.sessionId });
    expect((await stream.nextOf('leave')).data).to.deep.equal({ character: a.name, room_id: 'lockkeepers_square', direction: null, cause: 'logout' });
    expect((await stream.nextOf('presence')).data).to.deep.equal({ character: a.name, online: false });
    // A character selected at the spawn (the room Bert is in) arrives and comes online.
    const c = await newPlayer(server(), 'Cleo');
    expect((await stream.nextOf('arrive')).data).to.deep.equal({ character: c.name, room_id: 'lockkeepers_square', direction: null, cause: 'login' });
    expect((await stream.nextOf('presence')).data).to.deep.equal({ character: c.name, online: true });
  });

  it('presence changes are told once: a second session or a re-select tells nothing; kick, ban and expiry tell leave and offline', async () => {
    const wes = await newPlayer(server(), 'Wes');
    const watcher = await listen(wes);
    const admin = await sessionFor(server(), `ev_admin${Date.now() % 100000}`, 'superuser');
    const expectLeft = async (p: Player) => {
      expect((await watcher.nextOf('leave')).data).to.deep.equal({ character: p.name, room_id: 'lockkeepers_square', direction: null, cause: 'logout' });
      expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: p.name, online: false });
    };
    const a = await newPlayer(server(), 'Anna');
    expect((await watcher.nextOf('presence')).data).to.deep.equal({ character: a.name, online: true });
    const second = await loginAs(server(), a.username);
    await selectCharacter(server(), second, a.characterId);
    await selectCharacter(server(), a.sessionId, a.characterId);
    await server().post('/logout', { session_id: second });
    // Wes's own say comes after anything those told.
    await okCmd(wes, 'say still here?');
    const told = await watcher.until('chat', (e) => e.data.text === 'still here?');
    expect(told.filter((e) => e.event === 'leave' || e.event === 'presence').map((e) => e.data), 'Anna never went offline').to.deep.equal([]);
    const row = await server().db('sessions').where({ character_id: a.characterId }).first('id');
    expect((await server().post('/admin/session/kick', { session_id: admin, target_session_id: String(row!.id) })).body.success).to.equal(true);
    await expectLeft(a);
    const b = await newPlayer(server(), 'Bo');
    expect((await server().post('/admin/user/manage', { session_id: admin, action: 'ban', target_username: b.username })).body.success).to.equal(true);
    await expectLeft(b);
    const c = await newPlayer(server(), 'Cy');
    await server().db('sessions').where({ character_id: c.characterId }).update({ expires_at: '2000-01-01 00:00:00' });
    expect(await server().services.sessions.sweepExpired()).to.equal(1);
    await expectLeft(c);
  });

  it('resume with Last-Event-ID sends exactly the chat missed, then live events', async () => {
    const a = await newPlayer(server(), 'Anna');
    const b = await newPlayer(server(), 'Bert');
    const first = await listen(b);
    await okCmd(a, 'say one');
    const seen = await first.nextOf('chat');
    first.close();
    await okCmd(a, 'say two');
    await okCmd(a, `whisper ${b.name} three`);
    const c = await newPlayer(server(), 'Cleo');
    await okCmd(a, `whisper ${c.name} not for bert`);
    const resumed = await listen(b, { 'last-event-id': seen.id! });
    expect((await resumed.nextOf('chat')).data.text).to.equal('two');
    expect((await resumed.nextOf('chat')).data.text).to.match(/three$/);
    await okCmd(a, 'say four');
    expect((await resumed.nextOf('chat')).data.text).to.equal('four');
  });

  it('GET /chat?after= returns only newer messages', async () => {
    const a = await newPlayer(server(), 'Anna');
    await okCmd(a, 'say one');
    await okCmd(a, 'say two');
    const all = await server().get(`/chat/${a.sessionId}`);
    const firstId = all.body.messages[0].id;
    const newer = await server().get(`/chat/${a.sessionId}?after=${firstId}`);
    expect(newer.status, newer.text).to.equal(200);
    expect(newer.body.messages.map((m: { text: string }) => m.text)).to.deep.equal(['two']);
    expect((await server().get(`/chat/${a.sessionId}?after=2147483648`)).status).to.equal(400);
  });

  it('logout ends the stream with end and closes it', async () => {
    const a = await newPlayer(server(), 'Anna');
    const stream = await listen(a);
    await server().post('/logout', { session_id: a.sessionId });
    expect((await stream.nextOf('end')).data).to.deep.equal({ reason: 'logout' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream.done).to.equal(true);
  });

  it('kick, ban, account deletion and a password change end the streams with their reason', async () => {
    const admin = await sessionFor(server(), `ev_admin${Date.now() % 100000}`, 'superuser');
    const streamOf = async (first: string) => {
      const p = await newPlayer(server(), first);
      return { p, stream: await listen(p) };
    };
    const kicked = await streamOf('Kira');
    const row = await server().db('sessions').where({ character_id: kicked.p.characterId }).first('id');
    expect((await server().post('/admin/session/kick', { session_id: admin, target_session_id: String(row!.id) })).body.success).to.equal(true);
    expect((await kicked.stream.nextOf('end')).data).to.deep.equal({ reason: 'kick' });
    for (const [action, reason] of [['ban', 'ban'], ['delete', 'deleted'], ['change_password', 'password_change']] as const) {
      const { p, stream } = await streamOf('Vic');
      const res = await server().post('/admin/user/manage', { session_id: admin, action, target_username: p.username, new_password: OTHER_GOOD_PASSWORD });
      expect(res.body.success, res.text).to.equal(true);
      expect((await stream.nextOf('end')).data).to.deep.equal({ reason });
    }
    const own = await streamOf('Ola');
    const second = await loginAs(server(), own.p.username);
    const changed = await server().post('/change-password', { session_id: second, old_password: GOOD_PASSWORD, new_password: OTHER_GOOD_PASSWORD });
    expect(changed.status, changed.text).to.equal(200);
    expect((await own.stream.nextOf('end')).data).to.deep.equal({ reason: 'password_change' });
  });

  it('a third stream of a session ends the oldest (replaced)', async () => {
    const a = await newPlayer(server(), 'Anna');
    const oldest = await listen(a);
    await listen(a);
    await listen(a);
    expect((await oldest.nextOf('end')).data).to.deep.equal({ reason: 'replaced' });
  });

  it('metrics: open streams, events sent, streams ended by reason', async () => {
    const a = await newPlayer(server(), 'Anna');
    const stream = await listen(a);
    await okCmd(a, 'say counted');
    await stream.nextOf('chat');
    const during = (await server().get('/metrics')).text;
    expect(during).to.match(/^mud_event_streams_open [1-9]\d*$/m);
    expect(during).to.match(/^mud_event_stream_events_sent_total [1-9]\d*$/m);
    await server().post('/logout', { session_id: a.sessionId });
    await stream.nextOf('end');
    expect((await server().get('/metrics')).text).to.match(/^mud_event_streams_ended_total\{reason="logout"\} [1-9]\d*$/m);
  });

  it('an expired session ends its streams (expiry) within 2 s', async () => {
    const a = await newPlayer(server(), 'Anna');
    const stream = await listen(a);
    await server().db('sessions').where({ id: (await server().db('sessions').first('id').where({ character_id: a.characterId }))!.id }).update({ expires_at: '2000-01-01 00:00:00' });
    expect((await stream.nextOf('end', 3500)).data).to.deep.equal({ reason: 'expiry' });
  });

  it('past streams_per_instance: 503; a server shutdown ends every stream (shutdown) without waiting for the client', async () => {
    const other = await startTestServer({ env: { MUD_EVENTS_STREAMS_PER_INSTANCE: '1' } });
    try {
      const a = await newPlayer(other, 'Anna');
      const stream = await openStream(`${other.url}/events/${a.sessionId}`);
      const b = await newPlayer(other, 'Bert');
      const refused = await openStream(`${other.url}/events/${b.sessionId}`);
      expect(refused.status).to.equal(503);
      expect(refused.body.detail).to.equal('Too many open event streams on this server; try again later.');
      const started = Date.now();
      await other.stop();
      expect(Date.now() - started).to.be.lessThan(3000);
      expect((await stream.nextOf('end')).data).to.deep.equal({ reason: 'shutdown' });
    } finally {
      await other.close();
    }
  });
});

describe(`live events across two instances (${DB_NAME})`, function () {
  // One SQLite instance per database file: its bus is in-process (docs/decisions.md).
  const servers = twoInstances({ postgresOnly: true });

  it('a say on instance B reaches a stream on instance A; a logout on B ends it', async () => {
    const [one, two] = servers();
    await resetGame(one);
    const a = await newPlayer(one, 'Anna');
    const b = await newPlayer(two, 'Bert');
    const stream = await openStream(`${one.url}/events/${a.sessionId}`);
    try {
      await okCmd(b, 'say across');
      expect((await stream.nextOf('chat')).data.text).to.equal('across');
      const res = await two.post('/logout', { session_id: a.sessionId });
      expect(res.status).to.equal(200);
      expect((await stream.nextOf('end', 2000)).data).to.deep.equal({ reason: 'logout' });
    } finally {
      stream.close();
    }
  });

  it('an instance whose LISTEN connection is cut reconnects, and a client that resumes misses no chat', async () => {
    const [one, two] = servers();
    await resetGame(one);
    const a = await newPlayer(one, 'Anna');
    const b = await newPlayer(two, 'Bert');
    const stream = await openStream(`${one.url}/events/${a.sessionId}`);
    try {
      await okCmd(b, 'say before the cut');
      const last = await stream.nextOf('chat');
      const listeners = await one.db.raw(`select pg_terminate_backend(pid) as cut from pg_stat_activity where query = ?`, [`LISTEN "mud_events_${one.schema}"`]);
      // Both instances listen on the schema's channel.
      expect(listeners.rows).to.have.length(2);
      // Said while the bus is down or coming back: live delivery may miss these.
      const said = ['during one', 'during two', 'during three'];
      for (const text of said) await okCmd(b, `say ${text}`);
      let heard = false;
      for (let attempt = 0; attempt < 20 && !heard; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        await okCmd(b, `say again ${attempt}`);
        said.push(`again ${attempt}`);
        heard = await stream.nextOf('chat', 250).then(
          () => true,
          () => false,
        );
      }
      expect(heard).to.equal(true);
      stream.close();
      // The client reconnects from the last chat it saw: every message after it, in order.
      const resumed = await openStream(`${one.url}/events/${a.sessionId}`, { 'last-event-id': last.id! });
      try {
        const replayed: string[] = [];
        for (let i = 0; i < said.length; i++) replayed.push((await resumed.nextOf('chat')).data.text);
        expect(replayed).to.deep.equal(said);
      } finally {
        resumed.close();
      }
    } finally {
      stream.close();
    }
  });

  it('after the bus reconnects, a stream follows the move its character made while LISTEN was down', async () => {
    const [one, two] = servers();
    await resetGame(one);
    const a = await newPlayer(one, 'Anna');
    const stream = await openStream(`${one.url}/events/${a.sessionId}`);
    try {
      await one.db.raw('select pg_terminate_backend(pid) from pg_stat_activity where query = ?', [`LISTEN "mud_events_${one.schema}"`]);
      for (let waited = 0; one.services.events.connected() && waited < 2000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      // The move is made on the other instance while this one cannot hear it.
      const moved = await two.post('/command', { session_id: a.sessionId, command: 'north' });
      expect(moved.body.success, moved.text).to.equal(true);
      expect(one.services.events.connected(), 'the move was made while the bus was down').to.equal(false);
      const room = await stream.nextOf('room', 5000);
      expect(room.data.room_id).to.equal((await one.db('characters').where({ id: a.characterId }).first('room_id')).room_id);
      expect(room.data.look).to.include('===');
    } finally {
      stream.close();
    }
  });
});
