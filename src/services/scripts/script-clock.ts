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
import type { NpcRepository, Timer } from '../../db/repositories/npc-repository.ts';
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
  /** Each world's tick in progress: worlds tick side by side, so one loading for seconds delays no other's timers. */
  private readonly ticking = new Map<string, Promise<void>>();

  constructor(d: ScriptClock['d']) {
    this.d = d;
  }

  start(): void {
    this.timer = setInterval(() => {
      // A world still busy with its last tick (a long load renews its own lease) skips this one.
      for (const world of this.d.worlds.list()) if (!this.ticking.has(world.id)) void this.tickOnce(world.id);
    }, TICK_MS);
    this.timer.unref();
  }

  /**
   * One tick of every world, each once its tick in progress ended: keep or take its clock, and
   * fire what fell due if held. Each world on its own: whatever one throws is logged with its
   * id, and the others tick on (docs/decisions.md, "Scripts").
   */
  async tick(): Promise<void> {
    await Promise.all(this.d.worlds.list().map((world) => this.tickOnce(world.id)));
  }

  private tickOnce(worldId: string): Promise<void> {
    const work: Promise<void> = (this.ticking.get(worldId) ?? Promise.resolve())
      .then(() => this.tickWorld(worldId))
      .catch((err: Error) => {
        this.d.logger.error('Script clock tick failed', { world_id: worldId, error: err.message });
      })
      .finally(() => {
        if (this.ticking.get(worldId) === work) this.ticking.delete(worldId);
      });
    this.ticking.set(worldId, work);
    return work;
  }

  private async tickWorld(worldId: string): Promise<void> {
    if (!(await this.renew(worldId))) {
      this.held.delete(worldId);
      return;
    }
    if (!this.held.has(worldId)) {
      this.d.logger.info('Holding a world\u2019s clock', { world_id: worldId });
      // Loading runs every onLoad, which may take longer than the lease: it renews the lease as
      // it goes and stops once another instance holds the clock (the world then starts there).
      const loaded = await this.d.scripts.loadWorld(worldId, () => this.renew(worldId)).catch((err: Error) => {
        // Held all the same: a load that failed again at every tick would run the world's
        // onLoads twice a second and fire none of its timers.
        this.d.logger.error('Loading a world\u2019s scripts failed', { world_id: worldId, error: err.message });
        return true;
      });
      if (!loaded) return;
      this.held.add(worldId);
    }
    const now = this.d.clock().getTime();
    const started = performance.now();
    for (const timer of await this.d.npcs.dueTimers(worldId, now, TIMERS_PER_TICK)) {
      if (performance.now() - started > FIRING_BUDGET_MS) break;
      await this.d.scripts.fire(worldId, timer, now).catch((err: Error) => this.fireFailed(worldId, timer, now, err));
    }
  }

  /** Takes or keeps a world's clock for LEASE_MS from now; whether this instance holds it. */
  private renew(worldId: string): Promise<boolean> {
    const now = this.d.clock().getTime();
    return this.d.npcs.holdClock(worldId, this.d.instanceId, now, now + LEASE_MS);
  }

  /**
   * A timer whose firing failed (not its script's run, which ScriptService keeps as the script's
   * fault, but the server around it) is the script's error for builders, and counts as fired:
   * tried again at every tick it would fill the world's errors twice a second.
   */
  private async fireFailed(worldId: string, timer: Timer, now: number, err: Error): Promise<void> {
    this.d.logger.error('Firing a script timer failed', { world_id: worldId, owner: timer.owner, timer: timer.name, error: err.message });
    const message = `The server failed to fire the timer '${timer.name}' (its log says why under this world); it counts as fired`;
    await this.d.npcs.recordError(worldId, { owner: timer.owner, hook: timer.name, kind: 'thrown', message, line: null }, this.d.clock());
    await this.d.npcs.passTimer(worldId, timer, now);
  }

  /** Stops ticking and lets go of the clocks, so another instance takes them at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(this.ticking.values());
    if (this.held.size > 0) await this.d.npcs.releaseClocks(this.d.instanceId).catch((err: Error) => this.d.logger.warn('Script clocks not released at shutdown', { error: err.message }));
    this.held.clear();
  }
}
