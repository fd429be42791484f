/**
 * The worlds' clock on one instance (docs/decisions.md, "Scripts"; README, "Time across
 * instances"), with the TestClock for time: periods missed fire once, a one-off fires once and is
 * gone, a suspended script leaves no timer behind, and a world whose tick throws stops neither
 * its own timers nor another world's. Scripts are given to NPCs through the building API.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
/** A room of each shipped world to stand NPCs in. */
const ROOMS: Record<string, string> = { emberwick: 'lockkeepers_square', hollow_spire: 'spire_threshold' };
/** An NPC that emotes a count kept in `state` every 2 s. */
const COUNTER = 'function onLoad() { every(2, "tick"); }\nfunction tick() { state.n = (state.n || 0) + 1; self.emote("counts " + state.n + "."); }\n';

describe(`the worlds' clock on one instance (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let builder: string;
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> => server.request(method, path, body, bearer(builder));

  before(async () => {
    server = await startTestServer();
    // Both shipped worlds, one of them invite-only.
    builder = await sessionFor(server, 'clockmaker', 'superuser');
  });
  after(async () => {
    await server?.close();
  });

  /** An NPC built online with a script; its onLoad runs once it is saved. */
  const npc = async (worldId: string, id: string, script: string): Promise<void> => {
    const made = await call('POST', `/api/worlds/${worldId}/npcs`, { id, name: id, description: 'Keeps time.', room_id: ROOMS[worldId], script });
    expect(made.status, made.text).to.equal(201);
  };
  const timerOf = (worldId: string, id: string) => server.db('script_timers').where({ world_id: worldId, owner: `npc:${id}` }).first();
  /** Waits for the timer an NPC's onLoad sets. */
  const timerSet = async (worldId: string, id: string): Promise<{ due_at: string | number }> => {
    await eventually(async () => expect(await timerOf(worldId, id), `npc:${id}'s timer`).to.not.equal(undefined), 15_000);
    return timerOf(worldId, id);
  };
  const linesBy = async (worldId: string, id: string): Promise<string[]> =>
    (await server.db('chat_messages').where({ world_id: worldId, npc_id: id }).orderBy('id').select('message')).map((r: { message: string }) => r.message);
  const errorsOf = async (worldId: string, id: string): Promise<Array<{ kind: string; hook: string; message: string }>> => {
    const res = await call('GET', `/api/worlds/${worldId}/script-errors?owner=npc:${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.errors;
  };
  /** Ticks that surely ran (besides the clock's own every 0.5 s), the TestClock moved on by `stepMs` before each. */
  const ticks = async (count: number, stepMs: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      server.clock.advance(stepMs);
      await server.services.scriptClock.tick();
    }
  };

  it('holds the clock on a lease of at most 5 s past its own time (README: taken over within 5.5 s)', async () => {
    await eventually(async () => expect(await server.db('world_clocks').where({ world_id: 'emberwick' }).first()).to.not.equal(undefined), 15_000);
    await server.services.scriptClock.tick();
    const now = server.clock.now().getTime();
    const row = await server.db('world_clocks').where({ world_id: 'emberwick' }).first();
    expect(Number(row.lease_until)).to.be.above(now).and.at.most(now + 5_000);
  });

  it('fires a periodic timer once for 20 missed periods, and moves it past now', async () => {
    await npc('emberwick', 'metronome', COUNTER);
    const due = Number((await timerSet('emberwick', 'metronome')).due_at);
    server.clock.advance(40_000);
    await eventually(async () => expect(await linesBy('emberwick', 'metronome')).to.have.length(1), 15_000);
    await ticks(4, 0);
    expect(await linesBy('emberwick', 'metronome')).to.deep.equal(['metronome counts 1.']);
    const next = Number((await timerOf('emberwick', 'metronome')).due_at);
    expect(next).to.be.above(server.clock.now().getTime());
    expect((next - due) % 2_000).to.equal(0);
  });

  it('fires an after() once and removes its timer', async () => {
    await npc('emberwick', 'bellringer', 'function onLoad() { after(1, "once"); }\nfunction once() { state.n = (state.n || 0) + 1; self.emote("rings " + state.n + "."); }\n');
    await timerSet('emberwick', 'bellringer');
    server.clock.advance(5_000);
    await eventually(async () => expect(await linesBy('emberwick', 'bellringer')).to.have.length(1), 15_000);
    // Well past it, over several ticks: a one-off that came back would ring again.
    await ticks(4, 2_000);
    expect(await linesBy('emberwick', 'bellringer')).to.deep.equal(['bellringer rings 1.']);
    expect(await timerOf('emberwick', 'bellringer')).to.equal(undefined);
  });

  it('a suspended script keeps no timer, and saving it again sets its timers again', async () => {
    await npc('emberwick', 'faulty', 'function onLoad() { every(1, "boom"); }\nfunction boom() { nothing(); }\n');
    await timerSet('emberwick', 'faulty');
    // A fault a second: five in a row, then suspended.
    for (let second = 0; second < 10 && !(await errorsOf('emberwick', 'faulty')).some((e) => e.kind === 'suspended'); second++) await ticks(1, 1_000);
    expect((await errorsOf('emberwick', 'faulty'))[0]).to.include({ kind: 'suspended' });
    expect(await timerOf('emberwick', 'faulty')).to.equal(undefined);
    const stored = await call('GET', '/api/worlds/emberwick/npcs/faulty');
    const saved = await call('PATCH', '/api/worlds/emberwick/npcs/faulty', { version: stored.body.version, script: 'function onLoad() { every(1, "boom"); }\nfunction boom() { state.fine = true; }\n' });
    expect(saved.status, saved.text).to.equal(200);
    await timerSet('emberwick', 'faulty');
  });

  it('a world whose tick throws, firing or loading, stops neither its other timers nor another world\u2019s', async () => {
    // The first world the clock ticks breaks: a later one would tick before it anyway.
    const [broken, healthy] = server.services.worlds.list().map((w) => w.id);
    expect(ROOMS).to.have.keys(broken!, healthy!);
    await npc(broken!, 'breaker', COUNTER);
    await npc(broken!, 'survivor', COUNTER);
    await npc(healthy!, 'keeper', COUNTER);
    for (const [world, id] of [[broken!, 'breaker'], [broken!, 'survivor'], [healthy!, 'keeper']] as const) await timerSet(world, id);
    // State no run can read (as a corrupted row would be): running the script throws in the server, not in the script.
    await server.db('script_state').where({ world_id: broken, owner: 'npc:breaker' }).update({ state: 'not json' });
    const said = async (): Promise<number[]> => [(await linesBy(broken!, 'survivor')).length, (await linesBy(healthy!, 'keeper')).length];

    server.clock.advance(2_500);
    await eventually(async () => expect(await said()).to.deep.equal([1, 1]), 15_000);
    // The breaker's builders read it among its errors.
    expect((await errorsOf(broken!, 'breaker'))[0]).to.include({ kind: 'thrown', hook: 'tick', message: "The server failed to fire the timer 'tick' (its log says why under this world); it counts as fired" });
    expect(server.logs.entries.some((e) => e.message === 'Firing a script timer failed' && e.world_id === broken && e.owner === 'npc:breaker')).to.equal(true);

    // The clock starts again (as on a new holder): loading the broken world fails at the breaker's onLoad.
    await server.services.scriptClock.stop();
    server.services.scriptClock.start();
    await eventually(async () => expect(server.logs.entries.some((e) => e.message === 'Loading a world\u2019s scripts failed' && e.world_id === broken)).to.equal(true), 15_000);
    server.clock.advance(2_000);
    await eventually(async () => expect(await said()).to.deep.equal([2, 2]), 15_000);

    // The broken world cannot even keep its clock: the database refuses its lease.
    const undo = await refuseLease(server, broken!);
    try {
      const failed = (): boolean => server.logs.entries.some((e) => e.message === 'Script clock tick failed' && e.world_id === broken);
      await eventually(async () => expect(failed()).to.equal(true), 15_000);
      server.clock.advance(2_000);
      await eventually(async () => expect((await said())[1]).to.equal(3), 15_000);
    } finally {
      await undo();
    }
  });

  it('a world loading for seconds delays no other world’s timers', async () => {
    // The first world the clock ticks loads slowly: a world ticked after it would wait for it if they took turns.
    const [slow, victim] = server.services.worlds.list().map((w) => w.id);
    const LOADERS = 100;
    for (let i = 0; i < LOADERS; i++) await npc(slow!, `loader_${i}`, 'function onLoad() { const until = Date.now() + 40; while (Date.now() < until) {} state.loads = (state.loads || 0) + 1; }');
    await npc(victim!, 'beater', 'function onLoad() { every(1, "beat"); }\nfunction beat() { state.n = (state.n || 0) + 1; }');
    await timerSet(victim!, 'beater');
    const loads = async (): Promise<number> => {
      const rows = await server.db('script_state').where({ world_id: slow }).andWhere('owner', 'like', 'npc:loader_%').select('state');
      return rows.reduce((sum: number, r: { state: string }) => sum + ((JSON.parse(r.state) as { loads?: number }).loads ?? 0), 0);
    };
    await eventually(async () => expect(await loads()).to.equal(LOADERS), 60_000);
    const beats = async (): Promise<number> => ((JSON.parse((await server.db('script_state').where({ world_id: victim, owner: 'npc:beater' }).first('state'))?.state ?? '{}') as { n?: number }).n ?? 0);

    // The clock starts again, as on a new holder: the slow world loads its hundred onLoads (4 s), the victim beats meanwhile.
    await server.services.scriptClock.stop();
    server.services.scriptClock.start();
    for (let beat = 1; beat <= 2; beat++) {
      const before = await beats();
      server.clock.advance(1_000);
      await eventually(async () => expect(await beats()).to.be.greaterThan(before), 15_000);
    }
    expect(await loads(), 'onLoads run again when the victim had beaten twice').to.be.lessThan(2 * LOADERS);
  });
});

/** Makes renewing a world's clock fail in the database itself, until the returned function undoes it. */
async function refuseLease(server: TestServer, worldId: string): Promise<() => Promise<void>> {
  // The world refused is a row of a table of the test's, so no statement carries it as text.
  await server.db.schema.createTable('refused_leases', (t) => t.string('world_id', 64));
  await server.db('refused_leases').insert({ world_id: worldId });
  const refused = 'EXISTS (SELECT 1 FROM refused_leases r WHERE r.world_id = NEW.world_id)';
  if (usePostgres) {
    await server.db.raw(`CREATE FUNCTION refuse_lease() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF ${refused} THEN RAISE EXCEPTION 'lease refused'; END IF; RETURN NEW; END $$`);
    await server.db.raw('CREATE TRIGGER refuse_lease BEFORE UPDATE ON world_clocks FOR EACH ROW EXECUTE FUNCTION refuse_lease()');
  } else {
    await server.db.raw(`CREATE TRIGGER refuse_lease BEFORE UPDATE ON world_clocks WHEN ${refused} BEGIN SELECT RAISE(ABORT, 'lease refused'); END`);
  }
  return async () => {
    await server.db.raw(usePostgres ? 'DROP TRIGGER refuse_lease ON world_clocks' : 'DROP TRIGGER refuse_lease');
    if (usePostgres) await server.db.raw('DROP FUNCTION refuse_lease()');
    await server.db.schema.dropTable('refused_leases');
  };
}
