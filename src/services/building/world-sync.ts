/**
 * Keeps this instance's worlds as the database has them: the builders' rooms of every world
 * are read at start; afterwards an instance reads only the rows written since the revision it
 * has, whenever any instance announces a change (`world.changed`, src/db/event-bus.ts), when
 * the bus listens again after missing events, and at the start of each change it makes. Reads
 * may land in any order: a world applies only what is newer than what it has (LiveWorld.apply).
 * Once a heard change is applied, listeners (the event streams) learn which rooms changed.
 */
import type { BuildRepository, Runner } from '../../db/repositories/build-repository.ts';
import type { EventBus } from '../../db/event-bus.ts';
import type { Logger } from '../../logging/logger.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { LiveWorld } from '../worlds/world-overlay.ts';

export type RoomsChanged = (worldId: string, roomIds: readonly string[]) => Promise<void>;

export class WorldSync {
  private readonly worlds: WorldCatalog;
  private readonly repo: BuildRepository;
  private readonly logger: Logger;
  private readonly listeners: RoomsChanged[] = [];

  constructor(worlds: WorldCatalog, repo: BuildRepository, bus: EventBus, logger: Logger) {
    this.worlds = worlds;
    this.repo = repo;
    this.logger = logger;
    bus.subscribe((event) => {
      if (event.type === 'world.changed') void this.heard(event.worldId, event.roomIds);
      else if (event.type === 'reconnected') for (const world of this.worlds.list()) void this.catchUp(world.id).catch((err: Error) => this.failed(world.id, err));
    });
  }

  /** Every world's builders' rooms and NPCs, at start. */
  async loadAll(): Promise<void> {
    for (const [worldId, rows] of await this.repo.allStored()) this.worlds.setStored(worldId, rows);
  }

  onRoomsChanged(listener: RoomsChanged): void {
    this.listeners.push(listener);
  }

  /**
   * Applies the rows written since this instance's revision of the world: through `runner`, the
   * transaction of a change that holds the world's lock (then the world is exactly as stored).
   */
  async catchUp(worldId: string, runner?: Runner): Promise<LiveWorld> {
    const live = this.worlds.live(worldId);
    if (!live) throw new Error(`World '${worldId}' is not loaded`);
    live.apply(await this.repo.storedSince(worldId, live.revision, runner));
    return live;
  }

  private async heard(worldId: string, roomIds: readonly string[]): Promise<void> {
    try {
      if (!this.worlds.live(worldId)) return;
      await this.catchUp(worldId);
      for (const listener of this.listeners) await listener(worldId, roomIds);
    } catch (err) {
      this.failed(worldId, err as Error);
    }
  }

  private failed(worldId: string, err: Error): void {
    this.logger.error('Reading the builders\u2019 rooms failed', { world_id: worldId, error: err.message });
  }
}
