import type { Db } from '../database.ts';
import { toDbTime } from '../clock.ts';

export interface WorldCatalogEntry {
  id: string;
  name: string;
  description: string;
  active: boolean;
}

/** SQL for the `worlds` catalog table. */
export class WorldRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Makes the table match the loaded packages in one transaction: upserts each world and
   * marks worlds whose package is gone as inactive (rows stay: characters may point at them).
   */
  async sync(worlds: readonly WorldCatalogEntry[], now: Date): Promise<void> {
    const stamp = toDbTime(now);
    await this.db.transaction(async (trx) => {
      for (const w of worlds) {
        await trx('worlds')
          .insert({ id: w.id, name: w.name, description: w.description, is_active: w.active, created_at: stamp, updated_at: stamp })
          .onConflict('id')
          .merge(['name', 'description', 'is_active', 'updated_at']);
      }
      await trx('worlds')
        .whereNotIn('id', worlds.map((w) => w.id))
        .update({ is_active: false, updated_at: stamp });
    });
  }

  /** Whether the catalog has the world, active or not. */
  async exists(id: string): Promise<boolean> {
    return (await this.db('worlds').where({ id }).first('id')) !== undefined;
  }
}
