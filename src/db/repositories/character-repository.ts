import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { insertedId } from '../inserted-id.ts';
import { nameKey, nameSkeleton } from '../../shared/names.ts';
import type { components } from '../../../generated/openapi.d.ts';

/** The row shape is the API's character summary. */
export type CharacterSummary = components['schemas']['CharacterSummary'];

export interface CharacterRecord {
  id: number;
  userId: number | null;
  name: string;
  worldId: string;
  roomId: string | null;
  stateSeed: number;
  stateVersion: string | null;
  baseStateJson: string | null;
  currentStateJson: string | null;
  stateUpdatedAt: string | null;
}

export interface NewCharacter {
  userId: number;
  name: string;
  worldId: string;
  roomId: string;
  isGuestCreated: boolean;
  stateSeed: number;
  createdAt: string;
}

const SUMMARY_COLUMNS = ['id', 'name', 'user_id', 'world_id', 'is_guest_created', 'created_at', 'updated_at'];

function toRecord(r: Record<string, unknown>): CharacterRecord {
  return {
    id: Number(r.id),
    userId: r.user_id === null ? null : Number(r.user_id),
    name: String(r.name),
    worldId: String(r.world_id),
    roomId: (r.room_id as string | null) ?? null,
    stateSeed: Number(r.state_seed),
    stateVersion: (r.state_version as string | null) ?? null,
    baseStateJson: (r.base_state_json as string | null) ?? null,
    currentStateJson: (r.current_state_json as string | null) ?? null,
    stateUpdatedAt: (r.state_updated_at as string | null) ?? null,
  };
}

/** SQL for the `characters` table. */
export class CharacterRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async listSummaries(userId: number, worldId: string): Promise<CharacterSummary[]> {
    const rows = await this.db('characters')
      .where({ user_id: userId, world_id: worldId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select(SUMMARY_COLUMNS);
    return rows.map((r) => ({ ...r, is_guest_created: Boolean(r.is_guest_created) }));
  }

  /** Characters the account owns, per world. */
  async countByWorld(userId: number, trx: Knex = this.db): Promise<Map<string, number>> {
    const rows: Array<{ world_id: string; n: number | string }> = await trx('characters')
      .where({ user_id: userId })
      .groupBy('world_id')
      .select('world_id')
      .count({ n: '*' });
    return new Map(rows.map((r) => [r.world_id, Number(r.n)]));
  }

  async countInWorld(userId: number, worldId: string, trx: Knex = this.db): Promise<number> {
    const row = await trx('characters').where({ user_id: userId, world_id: worldId }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  async findById(id: number, trx: Knex = this.db): Promise<CharacterRecord | undefined> {
    const row = await trx('characters').where({ id }).first();
    return row && toRecord(row);
  }

  /** The characters of these ids that exist (callers pass at most a few hundred). */
  async findByIds(ids: readonly number[], trx: Knex = this.db): Promise<CharacterRecord[]> {
    if (ids.length === 0) return [];
    return (await trx('characters').whereIn('id', ids).orderBy('id')).map(toRecord);
  }

  /** The name of a character of the world that looks like `name` (the same skeleton), if any. */
  async findLookalike(worldId: string, name: string): Promise<string | undefined> {
    const row = await this.db('characters').where({ world_id: worldId, name_skeleton: nameSkeleton(name) }).first('name');
    return row?.name;
  }

  async findByName(name: string): Promise<CharacterRecord | undefined> {
    const row = await this.db('characters').where({ name_key: nameKey(name) }).first();
    return row && toRecord(row);
  }

  /** Inserts and returns the id; a taken name surfaces as a unique violation. */
  async insert(c: NewCharacter, trx: Knex): Promise<number> {
    const [row] = await trx('characters')
      .insert({
        user_id: c.userId,
        name: c.name,
        name_key: nameKey(c.name),
        name_skeleton: nameSkeleton(c.name),
        world_id: c.worldId,
        room_id: c.roomId,
        is_guest_created: c.isGuestCreated,
        state_seed: c.stateSeed,
        created_at: c.createdAt,
        updated_at: c.createdAt,
      })
      .returning('id');
    return insertedId(row);
  }

  /**
   * Tombstones the character: no owner, and `name`, which frees its old name; the row, its
   * place, items and history stay. False when it is gone.
   */
  async tombstone(id: number, name: string, now: string, trx: Knex): Promise<boolean> {
    const changed = await trx('characters')
      .where({ id })
      .update({ user_id: null, name, name_key: nameKey(name), name_skeleton: nameSkeleton(name), updated_at: now });
    return changed === 1;
  }

  /** Removes the character; its scores, axis events and ignores go with it (foreign keys). False when it is gone. */
  async delete(id: number, trx: Knex): Promise<boolean> {
    return (await trx('characters').where({ id }).delete()) === 1;
  }

  /** Stores a state snapshot; the base snapshot is written once, at creation. */
  async saveState(
    id: number,
    state: { version: string | null; currentJson: string; baseJson?: string; updatedAt: string },
    trx: Knex = this.db,
  ): Promise<void> {
    await trx('characters')
      .where({ id })
      .update({
        state_version: state.version,
        current_state_json: state.currentJson,
        state_updated_at: state.updatedAt,
        ...(state.baseJson === undefined ? {} : { base_state_json: state.baseJson }),
      });
  }
}
