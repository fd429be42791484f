/**
 * SQL of world building: the builders' rooms (`world_rooms`) and NPCs (`world_npcs`), the
 * history of changes (`world_changes`) and the builder's side of item rows (`item_instances`).
 * Writes take the transaction of the change they belong to. A `script` column holds the
 * builder's script; null means the package's, and '' none (docs/decisions.md, "Scripts").
 */
import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import { insertedId } from '../inserted-id.ts';
import { chunks } from '../row-chunks.ts';
import { nameKey, nameSkeleton } from '../../shared/names.ts';

/** A room as a builder left it: it wins over the package's room of the same id; a deleted one hides it. */
export interface StoredRoom {
  roomId: string;
  zoneId: string;
  name: string;
  description: string;
  /** Direction → room id. */
  exits: Record<string, string>;
  /** The builder's script; null: the package's; '': none. */
  script: string | null;
  deleted: boolean;
  version: number;
  /** The world's revision when the row was written: every row of one change shares it. */
  revision: number;
}

/** An NPC as a builder left it, as a stored room is kept: it wins over the package's NPC of the same id. */
export interface StoredNpc {
  npcId: string;
  name: string;
  description: string;
  /** Its home room. */
  roomId: string;
  script: string | null;
  deleted: boolean;
  version: number;
  revision: number;
}

/** The rows of one or more changes of a world. */
export interface StoredRows {
  rooms: StoredRoom[];
  npcs: StoredNpc[];
}

export type Runner = Db | Knex.Transaction;

/** An item row as builders see it: where it is, its own name and description (null: the package's). */
export interface ItemRow {
  id: number;
  worldId: string;
  itemId: string;
  roomId: string | null;
  characterId: number | null;
  name: string | null;
  description: string | null;
  /** The builder's script; null: the package item's; '': none. */
  script: string | null;
  version: number;
}

export interface NewChange {
  actor: string;
  /** Scripts' exits are no builder's change and stay out of the history ("Building worlds"). */
  via: 'api' | 'game';
  action: string;
  targetType: 'room' | 'item' | 'npc';
  targetId: string;
  before: unknown;
  after: unknown;
  createdAt: Date;
}

export interface ChangeRow extends Omit<NewChange, 'createdAt'> {
  id: number;
  worldId: string;
  createdAt: string;
}

const ITEM_COLUMNS = ['id', 'world_id', 'item_id', 'room_id', 'character_id', 'name', 'description', 'script', 'version'];

function storedRoom(r: Record<string, unknown>): StoredRoom {
  return {
    roomId: String(r.room_id),
    zoneId: String(r.zone_id),
    name: String(r.name),
    description: String(r.description),
    exits: JSON.parse(String(r.exits)) as Record<string, string>,
    script: (r.script as string | null) ?? null,
    deleted: Boolean(r.deleted),
    version: Number(r.version),
    revision: Number(r.revision),
  };
}

function storedNpc(r: Record<string, unknown>): StoredNpc {
  return {
    npcId: String(r.npc_id),
    name: String(r.name),
    description: String(r.description),
    roomId: String(r.room_id),
    script: (r.script as string | null) ?? null,
    deleted: Boolean(r.deleted),
    version: Number(r.version),
    revision: Number(r.revision),
  };
}

function itemRow(r: Record<string, unknown>): ItemRow {
  return {
    id: Number(r.id),
    worldId: String(r.world_id),
    itemId: String(r.item_id),
    roomId: (r.room_id as string | null) ?? null,
    characterId: r.character_id === null ? null : Number(r.character_id),
    name: (r.name as string | null) ?? null,
    description: (r.description as string | null) ?? null,
    script: (r.script as string | null) ?? null,
    version: Number(r.version),
  };
}

const parsed = (text: unknown): unknown => (text === null || text === undefined ? null : JSON.parse(String(text)));

export class BuildRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** The world's stored rows written after `revision`, in revision order. */
  async storedSince(worldId: string, revision: number, runner: Runner = this.db): Promise<StoredRows> {
    const since = (table: string) => runner(table).where({ world_id: worldId }).andWhere('revision', '>', revision).orderBy('revision').select('*');
    const [rooms, npcs] = await Promise.all([since('world_rooms'), since('world_npcs')]);
    return { rooms: rooms.map(storedRoom), npcs: npcs.map(storedNpc) };
  }

  /** Every world's stored rows (at start). */
  async allStored(): Promise<Map<string, StoredRows>> {
    const byWorld = new Map<string, StoredRows>();
    const of = (worldId: unknown): StoredRows => byWorld.get(String(worldId)) ?? byWorld.set(String(worldId), { rooms: [], npcs: [] }).get(String(worldId))!;
    for (const r of await this.db('world_rooms').orderBy(['world_id', 'revision', 'room_id']).select('*')) of(r.world_id).rooms.push(storedRoom(r));
    for (const r of await this.db('world_npcs').orderBy(['world_id', 'revision', 'npc_id']).select('*')) of(r.world_id).npcs.push(storedNpc(r));
    return byWorld;
  }

  /** Writes the rooms of one change, whole (each carries the change's revision). */
  async putRooms(trx: Knex.Transaction, worldId: string, rooms: readonly StoredRoom[], now: Date): Promise<void> {
    for (const some of chunks(rooms)) {
      await trx('world_rooms')
        .insert(
          some.map((room) => ({
            world_id: worldId,
            room_id: room.roomId,
            zone_id: room.zoneId,
            name: room.name,
            description: room.description,
            exits: JSON.stringify(room.exits),
            script: room.script,
            deleted: room.deleted,
            version: room.version,
            revision: room.revision,
            updated_at: toDbTime(now),
          })),
        )
        .onConflict(['world_id', 'room_id'])
        .merge();
    }
  }

  /** Writes the NPCs of one change, whole. */
  async putNpcs(trx: Knex.Transaction, worldId: string, npcs: readonly StoredNpc[], now: Date): Promise<void> {
    for (const some of chunks(npcs)) {
      await trx('world_npcs')
        .insert(
          some.map((npc) => ({
            world_id: worldId,
            npc_id: npc.npcId,
            name: npc.name,
            description: npc.description,
            room_id: npc.roomId,
            script: npc.script,
            deleted: npc.deleted,
            version: npc.version,
            revision: npc.revision,
            updated_at: toDbTime(now),
          })),
        )
        .onConflict(['world_id', 'npc_id'])
        .merge();
    }
  }

  /**
   * Records changes of one world in its history and deletes what falls past the newest `keep`
   * (docs/decisions.md, "Building worlds"): one indexed probe at the bound, so the table holds
   * at most `keep` rows a world however long it is built.
   */
  async recordChanges(trx: Knex.Transaction, worldId: string, changes: readonly NewChange[], keep: number): Promise<void> {
    if (changes.length === 0) return;
    for (const some of chunks(changes)) {
      await trx('world_changes').insert(
        some.map((c) => ({
          world_id: worldId,
          actor: c.actor,
          via: c.via,
          action: c.action,
          target_type: c.targetType,
          target_id: c.targetId,
          before: c.before === null ? null : JSON.stringify(c.before),
          after: c.after === null ? null : JSON.stringify(c.after),
          created_at: toDbTime(c.createdAt),
        })),
      );
    }
    const cut = await trx('world_changes').where({ world_id: worldId }).orderBy('id', 'desc').offset(keep).first('id');
    if (cut) await trx('world_changes').where({ world_id: worldId }).andWhere('id', '<=', cut.id).del();
  }

  /** The world's changes, newest first; with `beforeId`, only older ones. */
  async changes(worldId: string, limit: number, beforeId: number | null): Promise<ChangeRow[]> {
    // Rows scripts wrote before their exits were kept out of the history are not shown either.
    const q = this.db('world_changes').where({ world_id: worldId }).andWhereNot('via', 'script').orderBy('id', 'desc').limit(limit);
    if (beforeId !== null) q.andWhere('id', '<', beforeId);
    return (await q.select('*')).map((r: Record<string, unknown>) => ({
      id: Number(r.id),
      worldId: String(r.world_id),
      actor: String(r.actor),
      via: r.via as ChangeRow['via'],
      action: String(r.action),
      targetType: r.target_type as ChangeRow['targetType'],
      targetId: String(r.target_id),
      before: parsed(r.before),
      after: parsed(r.after),
      createdAt: String(r.created_at),
    }));
  }

  /** Where each of these NPCs stands (a page of a list: callers pass at most a few hundred). */
  async positionsOf(worldId: string, npcIds: readonly string[], runner: Runner = this.db): Promise<Map<string, string>> {
    if (npcIds.length === 0) return new Map();
    const rows = await runner('npc_positions').where({ world_id: worldId }).whereIn('npc_id', npcIds).select('npc_id', 'room_id');
    return new Map(rows.map((r: { npc_id: string; room_id: string }) => [r.npc_id, r.room_id]));
  }

  /**
   * The owners (`npc:<id>`, `room:<id>`) among `owners` whose script is suspended after its
   * faults ([scripts] faults_to_suspend): for the builders' views.
   */
  async suspended(worldId: string, owners: readonly string[], runner: Runner = this.db): Promise<Set<string>> {
    if (owners.length === 0) return new Set();
    const rows = await runner('script_state').where({ world_id: worldId }).whereIn('owner', owners).whereNotNull('suspended_at').pluck('owner');
    return new Set(rows.map(String));
  }

  /**
   * A character of the world whose name is `name` as the game compares names: the same in any
   * letter case (`name_key`) or looking alike (`name_skeleton`, docs in src/shared/names.ts).
   */
  async characterNamedLike(worldId: string, name: string): Promise<string | undefined> {
    const row = await this.db('characters')
      .where({ world_id: worldId })
      .andWhere((q) => q.where({ name_key: nameKey(name) }).orWhere({ name_skeleton: nameSkeleton(name) }))
      .first('name');
    return row ? String(row.name) : undefined;
  }

  /** Names of the characters (any, online or not) standing in a room. */
  async charactersIn(trx: Knex.Transaction, worldId: string, roomId: string): Promise<string[]> {
    return trx('characters').where({ world_id: worldId, room_id: roomId }).orderBy('name').pluck('name');
  }

  /** The account a character belongs to. */
  async accountOf(characterId: number): Promise<{ userId: number; username: string } | undefined> {
    const row = await this.db('characters as c').join('users as u', 'u.id', 'c.user_id').where('c.id', characterId).first('u.id', 'u.username');
    return row ? { userId: Number(row.id), username: String(row.username) } : undefined;
  }

  async item(worldId: string, id: number, runner: Runner = this.db): Promise<ItemRow | undefined> {
    const row = await runner('item_instances').where({ world_id: worldId, id }).first(ITEM_COLUMNS);
    return row ? itemRow(row) : undefined;
  }

  async itemsIn(worldId: string, roomId: string, runner: Runner = this.db): Promise<ItemRow[]> {
    return (await runner('item_instances').where({ world_id: worldId, room_id: roomId }).orderBy('id').select(ITEM_COLUMNS)).map(itemRow);
  }

  /** How many items lie in a room. */
  async countItemsIn(worldId: string, roomId: string, runner: Runner = this.db): Promise<number> {
    const row = await runner('item_instances').where({ world_id: worldId, room_id: roomId }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** Every item row of the world, in id order (for export). */
  async worldItems(worldId: string): Promise<ItemRow[]> {
    return (await this.db('item_instances').where({ world_id: worldId }).orderBy('id').select(ITEM_COLUMNS)).map(itemRow);
  }

  /**
   * The item rows of the world that have a script: their own (a builder's), or their package
   * item's (`packageScripted`) where the row keeps the package's ('' removes it). For a world's
   * start, which loads every script: reading every item of a large world would cost its clock.
   */
  async scriptedItems(worldId: string, packageScripted: readonly string[]): Promise<ItemRow[]> {
    const q = this.db('item_instances')
      .where({ world_id: worldId })
      .andWhere((w) => {
        w.where((own) => own.whereNotNull('script').andWhereNot('script', ''));
        if (packageScripted.length > 0) w.orWhere((pkg) => pkg.whereNull('script').whereIn('item_id', [...packageScripted]));
      })
      .orderBy('id')
      .select(ITEM_COLUMNS);
    return (await q).map(itemRow);
  }

  /** A new item in a room; its item id is made from its row id, so it never meets a package's. */
  async insertItem(trx: Knex.Transaction, worldId: string, roomId: string, name: string, description: string): Promise<ItemRow> {
    const [row] = await trx('item_instances').insert({ world_id: worldId, item_id: 'pending', room_id: roomId, character_id: null, name, description, version: 1 }, 'id');
    const id = insertedId(row);
    await trx('item_instances').where({ id }).update({ item_id: `item-${id}` });
    return { id, worldId, itemId: `item-${id}`, roomId, characterId: null, name, description, script: null, version: 1 };
  }

  /**
   * Writes a builder's edit of an item row, when the row is still at `version` (and, for a
   * move, still lies in a room): false when it changed meanwhile.
   */
  async updateItem(trx: Knex.Transaction, item: ItemRow, version: number): Promise<boolean> {
    const q = trx('item_instances').where({ id: item.id, version });
    if (item.roomId !== null) q.whereNull('character_id');
    const updated = await q.update({ room_id: item.roomId, name: item.name, description: item.description, script: item.script, version: item.version });
    return updated === 1;
  }

  /** Deletes an item row still at `version` and lying in a room: false when it changed or was taken meanwhile. */
  async deleteItem(trx: Knex.Transaction, id: number, version: number): Promise<boolean> {
    return (await trx('item_instances').where({ id, version }).whereNull('character_id').del()) === 1;
  }

  async deleteItemsIn(trx: Knex.Transaction, worldId: string, roomId: string): Promise<void> {
    await trx('item_instances').where({ world_id: worldId, room_id: roomId }).whereNull('character_id').del();
  }
}
