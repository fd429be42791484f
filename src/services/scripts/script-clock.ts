/**
 * Time in the worlds (docs/decisions.md, "Scripts"): each world's clock is held by one instance
 * at a time through a lease in the database (`world_clocks`), renewed at every tick. The holder
 * fires the world's timers that fell due; a timer fires by moving its due time on, only while it
 * is still the one read, so it fires once whichever instance tries, and once for all the periods
 * it missed while nobody held the clock. An instance that dies lets its lease run out: another
 * takes the clock within LEASE_MS and a tick, and loads the world's scripts (`onLoad`) as the
 * world starts there. On SQLite the one instance holds every clock.
 */
import type { Clock } from '../../db/clock.ts';
import type { NpcRepository } from '../../db/repositories/npc-repository.ts';
import type { Logger } from '../../logging/logger.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { ScriptService } from './script-service.ts';

/** How often the clocks tick: timers fire within this of their due time. */
const TICK_MS = 500;
/** How long a clock's lease lasts unrenewed: an instance that died hands its worlds on within this. */
export const LEASE_MS = 5_000;
/** Timers read per world per tick, at most. */
const TIMERS_PER_TICK = 500;
/**
 * Time a tick spends firing one world's timers before it moves on (the rest fire at the next
 * tick): well inside the lease, so a world with many timers due never costs its clock.
 */
const FIRING_BUDGET_MS = 250;

export class ScriptClock {
  private readonly d: { worlds: WorldCatalog; npcs: NpcRepository; scripts: ScriptService; clock: Clock; logger: Logger; instanceId: string };
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();

  constructor(d: ScriptClock['d']) {
    this.d = d;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.ticking = this.ticking
        .then(() => this.tick())
        .catch((err: Error) => {
          this.d.logger.error('Script clock tick failed', { error: err.message });
        });
    }, TICK_MS);
    this.timer.unref();
  }

  /** One tick: keep or take each world's clock, and fire what fell due in those held. */
  async tick(): Promise<void> {
    for (const world of this.d.worlds.list()) {
      const now = this.d.clock().getTime();
      if (!(await this.d.npcs.holdClock(world.id, this.d.instanceId, now, now + LEASE_MS))) {
        this.held.delete(world.id);
        continue;
      }
      if (!this.held.has(world.id)) {
        this.d.logger.info('Holding a world\u2019s clock', { world_id: world.id });
        // Held once loaded: a load that failed is tried again at the next tick.
        await this.d.scripts.loadWorld(world.id);
        this.held.add(world.id);
      }
      const started = performance.now();
      for (const timer of await this.d.npcs.dueTimers(world.id, now, TIMERS_PER_TICK)) {
        if (performance.now() - started > FIRING_BUDGET_MS) break;
        await this.d.scripts.fire(world.id, timer, now);
      }
    }
  }

  /** Stops ticking and lets go of the clocks, so another instance takes them at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    if (this.held.size > 0) await this.d.npcs.releaseClocks(this.d.instanceId).catch((err: Error) => this.d.logger.warn('Script clocks not released at shutdown', { error: err.message }));
    this.held.clear();
  }
}
