/**
 * The loaded world packages, kept in memory (they are read-only data), each with the
 * builders' rooms over it (world-overlay.ts), and their sync into the `worlds` table so that
 * database queries can join on world ids. `get` and `list` give the worlds as they now are; the
 * builders' rooms are laid over them at start and patched whenever a change is heard
 * (building/world-sync.ts).
 */
import type { WorldRepository } from '../../db/repositories/world-repository.ts';
import type { StoredRows } from '../../db/repositories/build-repository.ts';
import type { Clock } from '../../db/clock.ts';
import { loadWorlds, type World } from './world-loader.ts';
import { LiveWorld } from './world-overlay.ts';

export class WorldCatalog {
  private readonly packages: ReadonlyMap<string, World>;
  private readonly worlds: Map<string, LiveWorld>;

  constructor(worlds: readonly World[]) {
    this.packages = new Map(worlds.map((w) => [w.id, w]));
    this.worlds = new Map(worlds.map((w) => [w.id, new LiveWorld(w)]));
  }

  static async load(root: string): Promise<WorldCatalog> {
    return new WorldCatalog(await loadWorlds(root));
  }

  get(id: string): World | undefined {
    return this.worlds.get(id)?.world;
  }

  list(): World[] {
    return [...this.worlds.values()].map((live) => live.world);
  }

  /** The world as its package has it, without the builders' changes. */
  packageOf(id: string): World | undefined {
    return this.packages.get(id);
  }

  /** The world being changed by builders (undefined for a world not loaded). */
  live(id: string): LiveWorld | undefined {
    return this.worlds.get(id);
  }

  /** Lays all of a loaded world's stored rows over its package (at start). */
  setStored(id: string, stored: StoredRows): void {
    const pkg = this.packages.get(id);
    if (pkg) this.worlds.set(id, new LiveWorld(pkg, stored));
  }

  async syncTo(repository: WorldRepository, clock: Clock): Promise<void> {
    await repository.sync(
      this.list().map((w) => ({ id: w.id, name: w.name, description: w.description, active: w.active })),
      clock(),
    );
  }
}
