/**
 * Keeps this instance's worlds as the database has them: the builders' rooms of every world
 * are read at start, and a world's again whenever any instance announces a change to it
 * (`world.changed`, src/db/event-bus.ts) or the bus listens again after missing events. Reads
 * of one world run one after another, so a later read always lands last. Once a heard change
 * is applied, listeners (the event streams) learn which rooms changed.
 */
import type { BuildRepository } from '../../db/repositories/build-repository.ts';
import type { EventBus } from '../../db/event-bus.ts';
import type { Logger } from '../../logging/logger.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';

export type RoomsChanged = (worldId: string, roomIds: readonly string[]) => Promise<void>;

export class WorldSync {
  private readonly worlds: WorldCatalog;
  private readonly repo: BuildRepository;
  private readonly logger: Logger;
  private readonly reads = new Map<string, Promise<void>>();
  private readonly listeners: RoomsChanged[] = [];

  constructor(worlds: WorldCatalog, repo: BuildRepository, bus: EventBus, logger: Logger) {
    this.worlds = worlds;
    this.repo = repo;
    this.logger = logger;
    bus.subscribe((event) => {
      if (event.type === 'world.changed') void this.heard(event.worldId, event.roomIds);
      else if (event.type === 'reconnected') for (const world of this.worlds.list()) void this.refresh(world.id).catch((err: Error) => this.failed(world.id, err));
    });
  }

  /** Every world's builders' rooms, at start. */
  async loadAll(): Promise<void> {
    const stored = await this.repo.allStoredRooms();
    for (const [worldId, rooms] of stored) this.worlds.setOverlay(worldId, rooms);
  }

  onRoomsChanged(listener: RoomsChanged): void {
    this.listeners.push(listener);
  }

  /** Reads the world's builders' rooms again (after this instance's own change, before it answers). */
  refresh(worldId: string): Promise<void> {
    const read = (this.reads.get(worldId) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => this.worlds.setOverlay(worldId, await this.repo.storedRooms(worldId)));
    this.reads.set(worldId, read);
    void read.finally(() => {
      if (this.reads.get(worldId) === read) this.reads.delete(worldId);
    }).catch(() => undefined);
    return read;
  }

  private async heard(worldId: string, roomIds: readonly string[]): Promise<void> {
    try {
      await this.refresh(worldId);
      for (const listener of this.listeners) await listener(worldId, roomIds);
    } catch (err) {
      this.failed(worldId, err as Error);
    }
  }

  private failed(worldId: string, err: Error): void {
    this.logger.error('Reading the builders\u2019 rooms failed', { world_id: worldId, error: err.message });
  }
}
