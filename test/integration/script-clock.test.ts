/**
 * Time across instances (issue 32): three `mud-server serve` processes on one PostgreSQL
 * database, an NPC whose script emotes a counter kept in `state` every 2 s. The instance holding
 * the world's clock is killed with SIGKILL, then the next one: the clock moves on to a live
 * instance each time, and the counter the NPC says never repeats or goes back. Every instance
 * killed and a new one started, the counter goes on from where it stood (timers and state kept).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { usePostgres } from '../helpers/test-server.ts';
import { instancesOn, type CliServer, type Instances } from '../helpers/cli-server.ts';
import { withScriptedNpcs, worldsCopy } from '../helpers/worlds.ts';
import { eventually } from '../helpers/eventually.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

const COUNTER = 'function onLoad() { every(2, "tick"); }\nfunction tick() { state.n = (state.n || 0) + 1; self.emote("counts " + state.n + "."); }\n';

describe('script timers across instances killed one by one (PostgreSQL)', function () {
  this.timeout(180_000);
  let worlds = '';
  let instances: Instances | null = null;

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    worlds = worldsCopy({});
    withScriptedNpcs(worlds, { counter: 'The Counter' }, 'counter.js', COUNTER);
    instances = await instancesOn(worlds);
  });
  after(async () => {
    await instances?.close();
    if (worlds) rmSync(worlds, { recursive: true, force: true });
  });

  const serve = (): Promise<CliServer> => instances!.serve();

  /** The counts the NPC has said, in the order they were stored, and when. */
  const said = async (): Promise<Array<{ n: number; at: number }>> => {
    const rows = await instances!.reader('chat_messages').where({ npc_id: 'counter' }).orderBy('id').select('message', 'created_at');
    return rows.map((r: { message: string; created_at: string | Date }) => ({ n: Number(/counts (\d+)\./.exec(r.message)?.[1]), at: new Date(r.created_at).getTime() }));
  };
  const counts = async (): Promise<number[]> => (await said()).map((s) => s.n);

  /** Which of the live servers logged taking the clock of emberwick last (at or after `from` lines of each). */
  const holder = async (live: CliServer[], timeoutMs: number): Promise<CliServer> => {
    let found: CliServer | undefined;
    await eventually(async () => {
      found = live.find((s) => s.lines.some((l) => l.message === 'Holding a world\u2019s clock' && l.world_id === 'emberwick'));
      expect(found, 'a live instance holding the clock').to.not.equal(undefined);
    }, timeoutMs);
    return found!;
  };

  const advance = async (by: number): Promise<void> => {
    const start = (await counts()).length;
    await eventually(async () => expect((await counts()).length).to.be.at.least(start + by), 20_000);
  };

  it('fires each due time once: the counter never repeats or goes back, and a new instance takes the clock when its holder dies', async () => {
    const live = [await serve(), await serve(), await serve()];
    await advance(2);
    for (let round = 0; round < 2; round++) {
      const held = await holder(live, 15_000);
      held.kill();
      await held.exited;
      live.splice(live.indexOf(held), 1);
      // Another instance takes over within the lease (5 s) and a tick, then the counter goes on.
      await holder(live, 15_000);
      await advance(2);
    }
    // The last one dies too; a new instance starts on the database and the counter goes on from its state.
    for (const s of live) s.kill();
    await Promise.all(live.map((s) => s.exited));
    const before = await counts();
    await serve();
    await advance(2);
    const all = await counts();
    expect(all.every((n) => Number.isInteger(n))).to.equal(true);
    for (let i = 1; i < all.length; i++) expect(all[i], `count ${i} of ${all.join(', ')}`).to.be.greaterThan(all[i - 1]!);
    // A count is lost only when its instance died between storing the state and saying it: at most once per kill.
    const skips = all.filter((n, i) => i > 0 && n !== all[i - 1]! + 1).length;
    expect(skips, all.join(', ')).to.be.at.most(4);
    expect(all[before.length], 'after the restart').to.be.greaterThan(before.at(-1)!);
    // Periods missed while nobody held the clock fire once, not once each: no more firings than 2 s periods passed (times are stored to the second).
    const timeline = await said();
    const seconds = (timeline.at(-1)!.at - timeline[0]!.at) / 1000;
    expect(timeline.at(-1)!.n - timeline[0]!.n, `${seconds} s`).to.be.at.most(Math.floor(seconds / 2) + 2);
    const state = await instances!.reader('script_state').where({ owner: 'npc:counter' }).first();
    expect(JSON.parse(state.state).n).to.be.at.least(all.at(-1)!);
  });
});
