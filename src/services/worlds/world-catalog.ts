/**
 * The loaded world packages, kept in memory (they are read-only data), each with the
 * builders' rooms over it (world-overlay.ts), and their sync into the `worlds` table so that
 * database queries can join on world ids. `get` and `list` give the worlds as they now are;
 * the overlay is set at start and again whenever a change is heard (building/world-sync.ts).
 */
import type { WorldRepository } from '../../db/repositories/world-repository.ts';
import type { StoredRoom } from '../../db/repositories/build-repository.ts';
import type { Clock } from '../../db/clock.ts';
import { loadWorlds, type World } from './world-loader.ts';
import { composeWorld } from './world-overlay.ts';

export class WorldCatalog {
  private readonly packages: ReadonlyMap<string, World>;
  private readonly worlds: Map<string, World>;

  constructor(worlds: readonly World[]) {
    this.packages = new Map(worlds.map((w) => [w.id, w]));
    this.worlds = new Map(this.packages);
  }

  static async load(root: string): Promise<WorldCatalog> {
    return new WorldCatalog(await loadWorlds(root));
  }

  get(id: string): World | undefined {
    return this.worlds.get(id);
  }

  list(): World[] {
    return [...this.worlds.values()];
  }

  /** The world as its package has it, without the builders' changes. */
  packageOf(id: string): World | undefined {
    return this.packages.get(id);
  }

  /** Replaces the builders' rooms of a loaded world (all of them: the stored rows as they now are). */
  setOverlay(id: string, stored: readonly StoredRoom[]): void {
    const pkg = this.packages.get(id);
    if (pkg) this.worlds.set(id, composeWorld(pkg, stored));
  }

  async syncTo(repository: WorldRepository, clock: Clock): Promise<void> {
    await repository.sync(
      this.list().map((w) => ({ id: w.id, name: w.name, description: w.description, active: w.active })),
      clock(),
    );
  }
}
