/**
 * The hostile-script corpus (issue 32): scripts written to hurt the server, saved through the
 * building API like any builder's and woken by a player's `say` in their room. Each is contained:
 * its run is dropped and its error recorded for builders, nothing it asked for happens, the
 * server keeps answering, and neither the host process nor the next run sees anything it did.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, okCmd, type Player } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';

interface ScriptErrorView {
  owner: string;
  hook: string;
  kind: string;
  message: string;
  line: number | null;
}

describe(`hostile scripts are contained (${DB_NAME})`, function () {
  this.timeout(120_000);
  let server: TestServer;
  let builder: string;
  let cells = 0;
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> => server.request(method, path, body, bearer(builder));

  before(async () => {
    // A few timers per world, so the storm meets the limit soon.
    server = await startTestServer({ env: { MUD_SCRIPTS_TIMERS_PER_WORLD: '30', MUD_METRICS_MODE: 'open' } });
    builder = await sessionFor(server, 'warden', 'worldbuilder');
  });
  after(async () => {
    await server?.close();
  });

  /** A room of its own with NPCs scripted as given, and a player standing in it. */
  const cell = async (scripts: Record<string, string>): Promise<{ roomId: string; player: Player }> => {
    const room = await call('POST', `${W}/rooms`, { name: `Cell ${++cells}`, description: 'Bare stone.' });
    expect(room.status, room.text).to.equal(201);
    for (const [id, script] of Object.entries(scripts)) {
      const npc = await call('POST', `${W}/npcs`, { id, name: id, description: 'A prisoner.', room_id: room.body.id, script });
      expect(npc.status, npc.text).to.equal(201);
    }
    return { roomId: room.body.id, player: await newPlayer(server, `Visitor ${'abcdefghijklmnop'[cells]}`, room.body.id) };
  };

  const errorsOf = async (owner: string): Promise<ScriptErrorView[]> => {
    const res = await call('GET', `${W}/script-errors?owner=${owner}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.errors;
  };

  /** Waits for the NPC's first recorded error and returns it. */
  const firstError = async (npcId: string): Promise<ScriptErrorView> => {
    let found: ScriptErrorView | undefined;
    await eventually(async () => {
      found = (await errorsOf(`npc:${npcId}`)).at(-1);
      expect(found, `an error of ${npcId}`).to.not.equal(undefined);
    }, 15_000);
    return found!;
  };

  const linesBy = async (npcId: string): Promise<string[]> => (await server.db('chat_messages').where({ npc_id: npcId }).select('message')).map((r: { message: string }) => r.message);

  /** The server still plays: a command is answered at once. */
  const stillPlays = async (player: Player): Promise<void> => {
    await okCmd(player, 'look');
  };

  it('a busy loop is stopped at its CPU limit', async () => {
    const { player } = await cell({ looper: 'function onSay() {\n  while (true) {}\n}' });
    await okCmd(player, 'say hello');
    expect(await firstError('looper')).to.deep.include({ hook: 'onSay', kind: 'timeout' });
    await stillPlays(player);
    // Operators see it in /metrics.
    expect((await server.get('/metrics')).text).to.match(/^mud_script_runs_total\{outcome="timeout"\} 1$/m);
  });

  it('a memory bomb is stopped at its memory limit, and the world\u2019s other scripts run on', async () => {
    const { player } = await cell({
      bomb: 'function onSay() {\n  const hoard = [];\n  for (let i = 0; ; i++) hoard.push(new Array(1000000).fill(i));\n}',
      echo: 'function onSay(actor, text) { if (text === "after") self.say("still here"); }',
    });
    await okCmd(player, 'say hello');
    expect(await firstError('bomb')).to.deep.include({ hook: 'onSay', kind: 'memory' });
    await okCmd(player, 'say after');
    await eventually(async () => expect(await linesBy('echo')).to.deep.equal(['still here']), 10_000);
  });

  it('deep recursion is stopped as a stack overflow', async () => {
    const { player } = await cell({ deep: 'function down(n) { return down(n + 1) + 1; }\nfunction onSay() { down(0); }' });
    await okCmd(player, 'say hello');
    expect(await firstError('deep')).to.deep.include({ hook: 'onSay', kind: 'limit', message: 'The script recursed too deeply (stack overflow)' });
    await stillPlays(player);
  });

  it('a say flood breaks the actions limit: the run is dropped and nothing of it is said', async () => {
    const { player } = await cell({ flood: 'function onSay() {\n  for (;;) self.say("spam");\n}' });
    await okCmd(player, 'say hello');
    const error = await firstError('flood');
    expect(error).to.deep.include({ hook: 'onSay', kind: 'limit' });
    expect(error.message).to.contain('actions_per_run');
    expect(await linesBy('flood')).to.deep.equal([]);
  });

  it('a timer storm meets the shortest period and the timers per world, and stores no timer past them', async () => {
    const { player } = await cell({
      fast: 'function onSay() { every(0.01, "spin"); }\nfunction spin() {}',
      storm: 'function onSay() { for (let i = 0; i < 15; i++) every(5, "t" + state.n + "_" + i); state.n = (state.n || 0) + 1; }\nfunction t() {}',
    });
    await okCmd(player, 'say one');
    const fast = await firstError('fast');
    expect(fast).to.deep.include({ kind: 'limit' });
    expect(fast.message).to.contain('min_period_seconds');
    for (let i = 0; i < 3; i++) await okCmd(player, `say again ${i}`);
    await eventually(async () => expect((await errorsOf('npc:storm')).map((e) => e.message).join('\n')).to.contain('timers_per_world'), 15_000);
    const timers = await server.db('script_timers').where({ world_id: 'emberwick' }).select('name');
    expect(timers.length).to.be.at.most(30);
    expect(await server.db('script_timers').where({ owner: 'npc:fast' })).to.deep.equal([]);
  });

  it('two NPCs answering each other stop at the chain depth', async () => {
    const { player } = await cell({
      ping: 'function onSay(actor, text) { self.say("ping"); }',
      pong: 'function onSay(actor, text) { self.say("pong"); }',
    });
    await okCmd(player, 'say serve');
    // Each answer wakes the other one level deeper, up to [scripts] chain_depth (4): then it stops.
    await eventually(async () => expect((await linesBy('ping')).length + (await linesBy('pong')).length).to.be.at.least(4), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const total = (await linesBy('ping')).length + (await linesBy('pong')).length;
    expect(total).to.be.at.most(2 * 4);
    await stillPlays(player);
  });

  it('state past its cap is refused and the stored state stays as it was', async () => {
    const { player } = await cell({ hoarder: 'function onSay(actor, text) {\n  state.visits = (state.visits || 0) + 1;\n  if (text === "grow") state.big = "x".repeat(20000);\n}' });
    await okCmd(player, 'say small');
    await eventually(async () => expect(JSON.parse((await server.db('script_state').where({ owner: 'npc:hoarder' }).first())?.state ?? '{}')).to.deep.equal({ visits: 1 }), 10_000);
    await okCmd(player, 'say grow');
    expect(await firstError('hoarder')).to.deep.include({ kind: 'state_too_large' });
    expect(JSON.parse((await server.db('script_state').where({ owner: 'npc:hoarder' }).first()).state)).to.deep.equal({ visits: 1 });
  });

  it('escapes find nothing: no host globals through constructors, no pollution of the host or of the next run, no huge strings', async () => {
    const { player } = await cell({
      prober: [
        'function onSay(actor, text) {',
        '  if (text !== "probe") return;',
        '  const g = (function () {}).constructor("return this")();',
        '  const viaSay = self.say.constructor("return typeof process")();',
        '  const seen = [typeof g.process, typeof g.require, typeof g.fetch, typeof g.setTimeout, typeof globalThis.WebAssembly, viaSay, typeof Object.prototype.polluted].join(",");',
        '  Object.prototype.polluted = "yes";',
        '  self.__proto__.polluted = "yes";',
        '  self.say.__proto__.polluted = "yes";',
        '  Array.prototype.join = function () { return "hijacked"; };',
        '  self.say(seen);',
        '}',
      ].join('\n'),
      shouter: 'function onSay(actor, text) { if (text === "shout") self.say("x".repeat(5000000)); }',
      caller: 'function onSay(actor, text) { if (text === "trick") self.say({ toString() { for (;;) {} } }); }',
    });
    await okCmd(player, 'say probe');
    await eventually(async () => expect(await linesBy('prober')).to.have.length(1), 10_000);
    expect((await linesBy('prober'))[0]).to.equal('undefined,undefined,undefined,undefined,undefined,undefined,undefined');
    // The host (this process: the test server runs in it) saw none of it, nor does the next run.
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect([1, 2].join('-')).to.equal('1-2');
    await okCmd(player, 'say probe');
    await eventually(async () => expect(await linesBy('prober')).to.have.length(2), 10_000);
    expect((await linesBy('prober'))[1]).to.equal('undefined,undefined,undefined,undefined,undefined,undefined,undefined');

    await okCmd(player, 'say shout');
    // Building five million characters takes a while: its CPU time (cpu_ms) may run out before
    // the memory or the text limit is met.
    expect((await firstError('shouter')).kind).to.be.oneOf(['limit', 'memory', 'timeout']);
    expect(await linesBy('shouter')).to.deep.equal([]);
    await okCmd(player, 'say trick');
    // Only text crosses to the host: an object's own toString never runs there.
    expect(await firstError('caller')).to.deep.include({ kind: 'thrown', message: "TypeError: self.say's text must be text, not object" });
    expect(await linesBy('caller')).to.deep.equal([]);
    await stillPlays(player);
  });

  it('players never see a script\u2019s errors', async () => {
    const player = await sessionFor(server, 'curious', 'player');
    const res = await server.get(`${W}/script-errors?session_id=${player}`);
    expect(res.status).to.equal(403);
    expect(JSON.stringify(res.body)).to.not.contain('npc:');
  });
});
