/**
 * Scripts that cannot stop a world by numbers (docs/decisions.md, "Scripts": happenings and the
 * worlds' queues): what one player's action causes is bounded in runs and lines whatever the
 * depth, a script is not woken by its own lines, a world's queue sheds past its bound, queued
 * runs of a script saved meanwhile do not run, a player's command does not wait behind the
 * backlog, and timers that fail or ask for too long a period neither repeat nor stop the clock.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, okCmd, type Player } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';
import { metricValue } from '../helpers/metrics-text.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';

/** A loop that spends about `ms` of the run's CPU time (the default limit is 50 ms). */
const busy = (ms: number): string => `const until = Date.now() + ${ms}; while (Date.now() < until) {}`;

describe(`scripts bounded per happening and per world (${DB_NAME})`, function () {
  this.timeout(240_000);
  let server: TestServer;
  let builder: string;
  /** Builds in every world, the invite-only one too. */
  let superuser: string;
  let rooms = 0;
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> => server.request(method, path, body, bearer(builder));

  before(async () => {
    server = await startTestServer({
      env: {
        MUD_METRICS_MODE: 'open',
        MUD_SCRIPTS_RUNS_PER_HAPPENING: '12',
        MUD_SCRIPTS_LINES_PER_HAPPENING: '30',
        MUD_SCRIPTS_QUEUE_PER_WORLD: '20',
        MUD_SCRIPTS_CHAIN_DEPTH: '6',
      },
    });
    builder = await sessionFor(server, 'overseer', 'worldbuilder');
    superuser = await sessionFor(server, 'steward', 'superuser');
  });
  after(async () => {
    await server?.close();
  });

  /** A room of its own (scripted as given), NPCs in it scripted as given, and a player standing in it. */
  const room = async (script: string | null, npcs: Record<string, string> = {}): Promise<{ roomId: string; player: Player }> => {
    const made = await call('POST', `${W}/rooms`, { name: `Echo Hall ${++rooms}`, description: 'Stone that answers.' });
    expect(made.status, made.text).to.equal(201);
    const roomId = made.body.id as string;
    if (script !== null) {
      const saved = await call('PATCH', `${W}/rooms/${roomId}`, { version: made.body.version, script });
      expect(saved.status, saved.text).to.equal(200);
    }
    for (const [id, npcScript] of Object.entries(npcs)) {
      const npc = await call('POST', `${W}/npcs`, { id, name: id.replace(/_/g, ' '), description: 'A listener.', room_id: roomId, script: npcScript });
      expect(npc.status, npc.text).to.equal(201);
    }
    return { roomId, player: await newPlayer(server, 'Caller', roomId) };
  };

  const linesIn = async (roomId: string): Promise<string[]> => (await server.db('chat_messages').where({ room_id: roomId }).orderBy('id').pluck('message')) as string[];
  const errorsOf = async (owner: string): Promise<Array<{ hook: string; kind: string; message: string }>> => {
    const res = await call('GET', `${W}/script-errors?owner=${encodeURIComponent(owner)}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.errors;
  };
  const stateOf = async (owner: string): Promise<Record<string, number>> => {
    const row = await server.db('script_state').where({ world_id: 'emberwick', owner }).first('state');
    return row ? (JSON.parse(String(row.state)) as Record<string, number>) : {};
  };
  const outcomes = async (outcome: string): Promise<number> => metricValue((await server.request('GET', '/metrics')).text, 'mud_script_runs_total', `outcome="${outcome}"`);

  it('a room does not hear its own echo: one say, one echo', async () => {
    const { roomId, player } = await room('function onSay(actor, text) { room.echo("The walls repeat: " + text); }');
    await okCmd(player, 'say hello');
    await eventually(async () => expect(await linesIn(roomId)).to.include('The walls repeat: hello'), 30_000);
    // A marker said afterwards and its echo: anything the first echo woke would be stored before them.
    await okCmd(player, 'say marker');
    await eventually(async () => expect(await linesIn(roomId)).to.include('The walls repeat: marker'), 30_000);
    expect((await linesIn(roomId)).filter((line) => line.startsWith('The walls repeat'))).to.deep.equal(['The walls repeat: hello', 'The walls repeat: marker']);
  });

  it('two scripts echoing each other stop at the happening\u2019s lines, with the limit recorded', async () => {
    const echo = 'function onSay(actor, text) { for (let i = 0; i < 10; i++) room.echo("echo " + i + " " + text.slice(0, 40)); }';
    const { roomId, player } = await room(echo, { answering_stone: echo.replace('room.echo', 'self.say') });
    await okCmd(player, 'say ping');
    // Without a budget: 10 lines each, each line waking the other: 10 + 100 + 1,000 + ... by depth 6.
    await eventually(async () => {
      const errors = [...(await errorsOf(`room:${roomId}`)), ...(await errorsOf('npc:answering_stone'))];
      expect(errors.map((e) => e.message).join('\n')).to.include('lines_per_happening');
    }, 30_000);
    await okCmd(player, 'say marker');
    await eventually(async () => expect((await linesIn(roomId)).some((line) => line.includes('marker'))).to.equal(true), 30_000);
    const lines = (await linesIn(roomId)).filter((line) => / ping$/.test(line) && !line.startsWith('ping'));
    expect(lines.length).to.equal(30);
  });

  it('thirty listeners: one say wakes runs_per_happening of them, and the refusal is recorded once', async () => {
    const counter = `function onSay() { state.heard = (state.heard || 0) + 1; }`;
    const npcs = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`listener_${i}`, counter]));
    const { player } = await room(null, npcs);
    const before = await outcomes('budget');
    await okCmd(player, 'say hush');
    let heard = 0;
    await eventually(async () => {
      heard = 0;
      for (let i = 0; i < 30; i++) heard += (await stateOf(`npc:listener_${i}`)).heard ?? 0;
      expect(heard).to.equal(12);
      expect(await outcomes('budget')).to.equal(before + 18);
    }, 30_000);
    const recorded = [];
    for (let i = 0; i < 30; i++) recorded.push(...(await errorsOf(`npc:listener_${i}`)));
    expect(recorded.filter((e) => e.message.includes('runs_per_happening'))).to.have.length(1);
  });

  it('a world\u2019s queue sheds past queue_per_world, recorded, and a command does not wait behind it', async () => {
    const slow = `function onSay() { ${busy(40)} state.heard = (state.heard || 0) + 1; }`;
    const npcs = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`slow_listener_${i}`, slow]));
    const { player } = await room('function onCommand(actor, verb) { if (verb !== "knock") return false; actor.tell("Someone knocks back."); return true; }', npcs);
    const shedBefore = await outcomes('shed');
    // Five says of six listeners each: thirty runs of 40 ms for a queue of twenty.
    for (let i = 0; i < 5; i++) await okCmd(player, `say one ${i}`);
    expect(await okCmd(player, 'knock')).to.equal('Someone knocks back.');
    // The command was answered before the backlog ran out: it did not queue behind it.
    let heardAtAnswer = 0;
    for (let i = 0; i < 6; i++) heardAtAnswer += (await stateOf(`npc:slow_listener_${i}`)).heard ?? 0;
    await eventually(async () => expect(await outcomes('shed')).to.be.greaterThan(shedBefore), 30_000);
    let heard = 0;
    await eventually(async () => {
      heard = 0;
      for (let i = 0; i < 6; i++) heard += (await stateOf(`npc:slow_listener_${i}`)).heard ?? 0;
      expect(await server.request('GET', '/metrics').then((r) => metricValue(r.text, 'mud_script_runs_queued'))).to.equal(0);
    }, 30_000);
    expect(heardAtAnswer, `runs made when the command answered, of ${heard}`).to.be.lessThan(heard);
    expect(heard).to.be.lessThan(30);
    const errors = [];
    for (let i = 0; i < 6; i++) errors.push(...(await errorsOf(`npc:slow_listener_${i}`)));
    expect(errors.map((e) => e.message).join('\n')).to.include('queue_per_world');
  });

  it('runs queued before their script was saved again do not run its old source', async () => {
    const old = `function onSay() { ${busy(40)} state.old = (state.old || 0) + 1; }`;
    const { player } = await room(null, { patient_listener: old });
    const changedBefore = await outcomes('changed');
    for (let i = 0; i < 5; i++) await okCmd(player, `say again ${i}`);
    const npc = await call('GET', `${W}/npcs/patient_listener`);
    const saved = await call('PATCH', `${W}/npcs/patient_listener`, { version: npc.body.version, script: 'function onSay() { state.fresh = (state.fresh || 0) + 1; }' });
    expect(saved.status, saved.text).to.equal(200);
    await okCmd(player, 'say after');
    await eventually(async () => expect((await stateOf('npc:patient_listener')).fresh).to.be.at.least(1), 30_000);
    const state = await stateOf('npc:patient_listener');
    expect(state.old ?? 0, JSON.stringify(state)).to.be.lessThan(5);
    expect(await outcomes('changed')).to.be.greaterThan(changedBefore);
  });

  it('a timer past max_period_seconds is the script\u2019s error and sets nothing', async () => {
    const { roomId } = await room('function onLoad() { every(2592000, "monthly"); }\nfunction monthly() {}');
    await eventually(async () => expect((await errorsOf(`room:${roomId}`)).map((e) => e.message).join('\n')).to.include('max_period_seconds'), 30_000);
    expect(await server.db('script_timers').where({ world_id: 'emberwick', owner: `room:${roomId}` }).count({ n: '*' }).first()).to.deep.include({ n: usePostgres ? '0' : 0 });
  });

  it('a timer whose run fails fires once per due time, not at every tick', async () => {
    const { roomId } = await room('function onLoad() { every(100, "boom"); every(1, "beat"); }\nfunction boom() { throw new Error("kaboom"); }\nfunction beat() { state.beats = (state.beats || 0) + 1; }');
    const owner = `room:${roomId}`;
    await eventually(async () => expect(await server.db('script_timers').where({ world_id: 'emberwick', owner }).count({ n: '*' }).first().then((r) => Number(r!.n)), JSON.stringify(await errorsOf(owner))).to.equal(2), 30_000);
    // Both come due; then the clock only moves by beats, so boom, due again in 100 s, must not fire again.
    server.clock.advance(101_000);
    await eventually(async () => expect((await errorsOf(owner)).filter((e) => e.hook === 'boom')).to.have.length(1), 30_000);
    for (let beat = 0; beat < 4; beat++) {
      const beats = (await stateOf(owner)).beats ?? 0;
      server.clock.advance(1_000);
      await eventually(async () => expect((await stateOf(owner)).beats ?? 0).to.be.greaterThan(beats), 30_000);
    }
    expect((await errorsOf(owner)).filter((e) => e.hook === 'boom')).to.have.length(1);
  });

  it('a save that breaks the compiler, or would, leaves saving working for every world', async () => {
    const { roomId } = await room(null);
    const save = async (script: string): Promise<HttpResponse> => {
      const current = await call('GET', `${W}/rooms/${roomId}`);
      return call('PATCH', `${W}/rooms/${roomId}`, { version: current.body.version, script });
    };
    const nested = await save('function a(){'.repeat(3000) + '}'.repeat(3000));
    expect(nested.status, nested.text).to.equal(400);
    expect(nested.body.detail).to.include('nests brackets more than 256 levels deep');
    // 3,000 Unicode classes exhaust the compiler's memory: that compiler is replaced.
    const classes = await save('const letters = /' + '[\\p{L}]'.repeat(3000) + '/u;');
    expect(classes.status, classes.text).to.equal(400);
    expect(classes.body.detail).to.include('memory');
    for (const world of ['emberwick', 'hollow_spire']) {
      const npc = await server.request('POST', `/api/worlds/${world}/npcs`, { name: `Clerk ${world === 'emberwick' ? 'Amber' : 'Hollis'}`, description: 'Keeps the ledger.', room_id: world === 'emberwick' ? roomId : 'spire_threshold', script: 'function onSay() { state.heard = true; }' }, bearer(superuser));
      expect(npc.status, npc.text).to.equal(201);
    }
    expect((await save('function onSay(actor, text) { room.echo(text); }')).status).to.equal(200);
  });

  it('items\u2019 scripts load when their world starts on an instance', async () => {
    const { roomId } = await room(null);
    const item = await call('POST', `${W}/rooms/${roomId}/items`, { name: 'Humming Bell', description: 'It hums.' });
    expect(item.status, item.text).to.equal(201);
    const saved = await call('PATCH', `${W}/items/${item.body.id}`, { version: item.body.version, script: 'function onLoad() { state.loads = (state.loads || 0) + 1; }' });
    expect(saved.status, saved.text).to.equal(200);
    const owner = `item:${item.body.id}`;
    await eventually(async () => expect((await stateOf(owner)).loads).to.equal(1), 30_000);
    // The world starts again elsewhere: this instance lets its clocks go, a second one takes them.
    await server.services.scriptClock.stop();
    const second = await startTestServer({ shareDatabaseWith: server, clock: server.clock });
    try {
      await eventually(async () => expect((await stateOf(owner)).loads).to.equal(2), 30_000);
    } finally {
      await second.close();
      server.services.scriptClock.start();
    }
  });
});
