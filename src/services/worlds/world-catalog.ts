/**
 * The loaded world packages, kept in memory (they are read-only data), and their sync into
 * the `worlds` table so that database queries can join on world ids.
 */
import type { WorldRepository } from '../../db/repositories/world-repository.ts';
import type { Clock } from '../../db/clock.ts';
import { loadWorlds, type World } from './world-loader.ts';

export class WorldCatalog {
  private readonly worlds: ReadonlyMap<string, World>;

  constructor(worlds: readonly World[]) {
    this.worlds = new Map(worlds.map((w) => [w.id, w]));
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

  async syncTo(repository: WorldRepository, clock: Clock): Promise<void> {
    await repository.sync(
      this.list().map((w) => ({ id: w.id, name: w.name, description: w.description, active: w.active })),
      clock(),
    );
  }
}
