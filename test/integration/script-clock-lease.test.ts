/**
 * The worlds' clock across instances on one PostgreSQL database (docs/decisions.md, "Scripts";
 * README, "Time across instances"): one instance holds a world's clock at a time, on a lease of
 * at most 5 s past its own time, and each due time fires once; a world whose scripts take longer
 * than the lease to load settles on one holder; when the holder is killed another takes the
 * clock once the lease has run out and a couple of ticks (0.5 s each) have passed.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { instancesOn, type CliServer, type Instances, type LogLine } from '../helpers/cli-server.ts';
import { withScriptedNpcs, worldsCopy } from '../helpers/worlds.ts';
import { eventually } from '../helpers/eventually.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

/** The README's promise: a lease of 5 s, renewed every tick of 0.5 s. */
const PROMISED_LEASE_MS = 5_000;
const TICK_MS = 500;
const holding = (line: LogLine | Record<string, unknown>): boolean => line.message === 'Holding a world\u2019s clock' && line.world_id === 'emberwick';

describe('one holder per world clock (PostgreSQL)', function () {
  this.timeout(60_000);
  let a: TestServer;
  let b: TestServer;
  let worlds = '';

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    worlds = worldsCopy({});
    withScriptedNpcs(worlds, { tally: 'Tally' }, 'tally.js', 'function onLoad() { every(2, "tick"); }\nfunction tick() { state.n = (state.n || 0) + 1; self.emote("counts " + state.n + "."); }\n');
    a = await startTestServer({ env: { MUD_WORLDS_ROOT: worlds } });
    // A second instance on the same database and the same (test) time.
    b = await startTestServer({ env: { MUD_WORLDS_ROOT: worlds }, shareDatabaseWith: a, clock: a.clock });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    if (worlds) rmSync(worlds, { recursive: true, force: true });
  });

  const clockRow = async (): Promise<{ holder: string; lease_until: number }> => {
    const row = await a.db('world_clocks').where({ world_id: 'emberwick' }).first('holder', 'lease_until');
    return { holder: String(row.holder), lease_until: Number(row.lease_until) };
  };
  const lines = async (): Promise<string[]> => (await a.db('chat_messages').where({ world_id: 'emberwick', npc_id: 'tally' }).orderBy('id').select('message')).map((r: { message: string }) => r.message);

  it('names one holder, on a lease of at most 5 s past its time, and fires each due time once', async () => {
    await eventually(async () => expect(await a.db('script_timers').where({ owner: 'npc:tally' }).first()).to.not.equal(undefined), 15_000);
    // Both instances tick, in turn: the row names the same holder after each.
    const holders = new Set<string>();
    for (let i = 0; i < 3; i++) {
      for (const server of [a, b]) {
        await server.services.scriptClock.tick();
        const row = await clockRow();
        holders.add(row.holder);
        const now = a.clock.now().getTime();
        expect(row.lease_until).to.be.above(now).and.at.most(now + PROMISED_LEASE_MS);
      }
    }
    expect([...holders]).to.have.length(1);
    expect([...a.logs.entries, ...b.logs.entries].filter(holding), 'instances that took the clock').to.have.length(1);
    for (let n = 1; n <= 5; n++) {
      a.clock.advance(2_000);
      await eventually(async () => expect(await lines()).to.have.length(n), 15_000);
    }
    for (const server of [a, b, a, b]) await server.services.scriptClock.tick();
    expect(await lines()).to.deep.equal([1, 2, 3, 4, 5].map((n) => `Tally counts ${n}.`));
  });
});

describe('a slow world and a dead holder, with mud-server processes (PostgreSQL)', function () {
  this.timeout(240_000);
  const SLOW = 150;
  let worlds = '';
  let instances: Instances | null = null;

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    worlds = worldsCopy({});
    // 40 ms of busy waiting, within the 50 ms of CPU a run may take: 150 of them outlast the 5 s lease.
    withScriptedNpcs(worlds, Object.fromEntries(Array.from({ length: SLOW }, (_, i) => [`slow_${i}`, `Slow ${i}`])), 'slow.js', 'function onLoad() {\n  const end = Date.now() + 40;\n  while (Date.now() < end) {}\n  state.loads = (state.loads || 0) + 1;\n}\n');
    instances = await instancesOn(worlds);
  });
  after(async () => {
    await instances?.close();
    if (worlds) rmSync(worlds, { recursive: true, force: true });
  });

  const serve = (): Promise<CliServer> => instances!.serve();
  const servers = (): CliServer[] => instances!.servers;
  const clockRow = async (): Promise<{ holder: string; lease_until: number }> => {
    const row = await instances!.reader('world_clocks').where({ world_id: 'emberwick' }).first('holder', 'lease_until');
    return { holder: String(row.holder), lease_until: Number(row.lease_until) };
  };
  const loads = async (): Promise<number[]> =>
    (await instances!.reader('script_state').where({ world_id: 'emberwick' }).andWhere('owner', 'like', 'npc:slow_%').select('state')).map((r: { state: string }) => Number(JSON.parse(r.state).loads));
  const until = (epochMs: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())));

  it('loads a world whose onLoads outlast the lease once, on one holder', async () => {
    await serve();
    await serve();
    await eventually(async () => expect(await loads()).to.have.length(SLOW), 120_000);
    // Loaded: had the holder lost its lease meanwhile, another would take it within the lease and a couple of ticks.
    await until((await clockRow()).lease_until + 2 * TICK_MS);
    expect(servers().flatMap((s) => s.lines.filter(holding)), 'instances that took the clock').to.have.length(1);
    expect(new Set(await loads())).to.deep.equal(new Set([1]));
  });

  it('hands the clock on once a killed holder\u2019s lease has run out, and a couple of ticks', async () => {
    const held = servers().find((s) => s.lines.some(holding))!;
    const live = await clockRow();
    expect(live.lease_until - Date.now(), 'lease past the holder\u2019s time').to.be.at.most(PROMISED_LEASE_MS);
    held.kill();
    await held.exited;
    const dead = await clockRow();
    await until(dead.lease_until + 2 * TICK_MS);
    const next = await clockRow();
    expect(next.holder, 'the clock\u2019s holder').to.not.equal(dead.holder);
    expect(next.lease_until).to.be.above(dead.lease_until);
    expect(servers().find((s) => s !== held)!.lines.some(holding)).to.equal(true);
  });
});
