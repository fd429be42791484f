import type { Knex } from 'knex';
import type { Db } from '../database.ts';

/** SQL for the `world_permissions` table (explicit world grants). */
export class WorldPermissionRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async grantedWorlds(userId: number): Promise<Set<string>> {
    const rows = await this.db('world_permissions').where({ user_id: userId, can_access: true }).select('world_id');
    return new Set(rows.map((r) => String(r.world_id)));
  }

  async set(userId: number, worldId: string, canAccess: boolean, now: string, trx: Knex = this.db): Promise<void> {
    await trx('world_permissions')
      .insert({ user_id: userId, world_id: worldId, can_access: canAccess, created_at: now })
      .onConflict(['user_id', 'world_id'])
      .merge(['can_access']);
  }
}
