/**
 * World building: every rule about changing a world while it is played, for the HTTP routes
 * and the in-game `@` commands alike (docs/decisions.md, "Building worlds"). A change runs in
 * one transaction under a per-world lock: it reads the builders' rooms, composes the world as
 * it now is, checks the version the builder last read, writes, records the change with its
 * before and after, and holds the result to what the loader demands of a package
 * (worldProblems) before it commits. The commit announces `world.changed`; this instance reads
 * the world again before it answers, the others as they hear the event.
 */
import type { Knex } from 'knex';
import { lockKey, type Db } from '../../db/database.ts';
import type { Clock } from '../../db/clock.ts';
import type { EventBus } from '../../db/event-bus.ts';
import type { BuildRepository, ChangeRow, ItemRow, NewChange, StoredRoom } from '../../db/repositories/build-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { hasPermission, rank, type Permission, type Role } from '../../shared/roles.ts';
import { insufficientPermission } from '../admin/user-admin-service.ts';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../errors.ts';
import type { WorldAccessService } from '../worlds/world-access.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { DIRECTIONS, isDirection, WORLD_ID, WORLD_LIMITS, type Direction, type Room, type World } from '../worlds/world-loader.ts';
import { composeWorld, itemDescription, itemName, worldProblems } from '../worlds/world-overlay.ts';
import type { WorldSync } from './world-sync.ts';
import { plainText } from '../game/plain-text.ts';

type Schemas = components['schemas'];
export type BuildRoom = Schemas['BuildRoom'];
export type BuildItem = Schemas['BuildItem'];
export type WorldChange = Schemas['WorldChange'];

/** Who asks: the session's role and account, the world it plays in, and the door it came through. */
export interface Builder {
  role: Role;
  userId: number;
  username: string;
  /** The world of the session's character; null when it plays none. */
  worldId: string | null;
  via: 'api' | 'game';
}

/** The version the builder last read; `current` for the game's commands, which act on the room as it is. */
export type Expected = number | 'current';

const OPPOSITE: Record<Direction, Direction> = { north: 'south', south: 'north', east: 'west', west: 'east', up: 'down', down: 'up' };
/** Room ids per `world.changed` event: ids are at most 64 characters (192 bytes in UTF-8), so 30 stay far under the bus limit. */
const ROOMS_PER_EVENT = 30;

/** Building needs EDIT_WORLD and the permission the change names; admins and superusers may do all of it. */
export function assertMayBuild(role: Role, permission: Permission = 'edit_world'): void {
  if (rank(role) >= rank('admin')) return;
  for (const needed of new Set<Permission>(['edit_world', permission])) if (!hasPermission(role, needed)) throw insufficientPermission(needed);
}

/** A room dug in the game has this description until its builder writes one. */
export const UNDESCRIBED = 'Nothing has been described here yet.';

/** Length in characters (code points), as the loader counts. */
const length = (text: string): number => [...text].length;

/**
 * A name or description as players will read it: plain text as the game makes chat (no
 * escapes, controls or invisible code points; one line), NFC, within the loader's bounds.
 */
function bounded(what: string, text: string, max: number): string {
  const trimmed = plainText(text).normalize('NFC');
  if (trimmed === '') throw new InvalidInput(`${what} must not be empty`);
  if (length(trimmed) > max) throw new InvalidInput(`${what} must be at most ${max} characters (it has ${length(trimmed)})`);
  return trimmed;
}

/** What a change of one world has done so far, written and announced at its end. */
interface Work {
  trx: Knex.Transaction;
  pkg: World;
  stored: Map<string, StoredRoom>;
  world: World;
  changes: Array<Omit<NewChange, 'actor' | 'via' | 'createdAt'>>;
  rooms: Set<string>;
  characters: Set<number>;
}

export class BuildService {
  private readonly db: Db;
  private readonly repo: BuildRepository;
  private readonly worlds: WorldCatalog;
  private readonly access: WorldAccessService;
  private readonly sync: WorldSync;
  private readonly bus: EventBus;
  private readonly clock: Clock;

  constructor(d: { db: Db; repo: BuildRepository; worlds: WorldCatalog; access: WorldAccessService; sync: WorldSync; bus: EventBus; clock: Clock }) {
    this.db = d.db;
    this.repo = d.repo;
    this.worlds = d.worlds;
    this.access = d.access;
    this.sync = d.sync;
    this.bus = d.bus;
    this.clock = d.clock;
  }

  /** A character's account (the game's commands know the character; access and the history go by the account). */
  async accountOf(characterId: number): Promise<{ userId: number; username: string }> {
    const account = await this.repo.accountOf(characterId);
    if (!account) throw new NotFound(`Character ${characterId} not found`);
    return account;
  }

  // ---- reading -------------------------------------------------------------------------------

  async listRooms(builder: Builder, worldId: string): Promise<Schemas['BuildRoomList']> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    const pkg = this.worlds.packageOf(worldId)!;
    const rooms = [...world.zones.values()].flatMap((zone) => zone.roomIds.map((id) => this.roomView(pkg, world.rooms.get(id)!)));
    return { world_id: worldId, rooms };
  }

  async getRoom(builder: Builder, worldId: string, roomId: string): Promise<BuildRoom> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    return this.roomWithItems(this.worlds.packageOf(worldId)!, world, this.room(world, roomId), this.db);
  }

  async getItem(builder: Builder, worldId: string, id: number): Promise<BuildItem> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    return this.itemView(world, await this.item(worldId, id, this.db));
  }

  async changes(builder: Builder, worldId: string, limit: number, before: number | null): Promise<Schemas['WorldChangeList']> {
    await this.allowed(builder, worldId, 'edit_world');
    return { world_id: worldId, changes: (await this.repo.changes(worldId, limit, before)).map(changeView) };
  }

  // ---- rooms ---------------------------------------------------------------------------------

  async createRoom(builder: Builder, worldId: string, input: { id?: string; zone?: string; name: string; description: string }): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'create_rooms');
    const name = bounded('Room name', input.name, WORLD_LIMITS.name);
    const description = bounded('Room description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      const zone = input.zone ?? w.world.defaultSpawn.zone;
      if (!w.world.zones.has(zone)) throw new NotFound(`Zone '${zone}' not found in world '${worldId}' (zones: ${[...w.world.zones.keys()].join(', ')})`);
      const id = input.id ?? this.freshRoomId(w, name);
      if (!WORLD_ID.test(id)) throw new InvalidInput(`Room id '${id}' must be lower-case letters, digits, _ and - (at most ${WORLD_LIMITS.id})`);
      if (w.world.rooms.has(id)) throw new Conflict(`Room '${id}' already exists in world '${worldId}'`);
      const room = await this.putRoom(w, { roomId: id, zoneId: zone, name, description, exits: {}, deleted: false }, 'room.create', null);
      return this.roomWithItems(w.pkg, w.world, room, w.trx);
    });
  }

  async updateRoom(builder: Builder, worldId: string, roomId: string, expected: Expected, input: { name?: string; description?: string; zone?: string }): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'edit_world');
    const name = input.name === undefined ? undefined : bounded('Room name', input.name, WORLD_LIMITS.name);
    const description = input.description === undefined ? undefined : bounded('Room description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const zone = input.zone ?? room.zoneId;
      if (zone !== room.zoneId) {
        if (!w.world.zones.has(zone)) throw new NotFound(`Zone '${zone}' not found in world '${worldId}'`);
        const spawnOf = this.spawnOf(w.world, roomId);
        if (spawnOf) throw new Conflict(`Room '${roomId}' is ${spawnOf}: it stays in zone '${room.zoneId}'`);
      }
      const next = await this.putRoom(w, { ...stored(room), name: name ?? room.name, description: description ?? room.description, zoneId: zone }, 'room.update', room);
      return this.roomWithItems(w.pkg, w.world, next, w.trx);
    });
  }

  async deleteRoom(builder: Builder, worldId: string, roomId: string, expected: Expected): Promise<Schemas['SuccessMessage']> {
    await this.allowed(builder, worldId, 'create_rooms');
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const spawnOf = this.spawnOf(w.world, roomId);
      if (spawnOf) throw new Conflict(`Room '${roomId}' is ${spawnOf} and cannot be deleted`);
      const present = await this.repo.charactersIn(w.trx, worldId, roomId);
      if (present.length > 0) throw new Conflict(`Room '${roomId}' cannot be deleted while characters are in it: ${present.slice(0, 5).join(', ')}${present.length > 5 ? ', …' : ''}`);
      // Exits leading here go with the room, each such room's change recorded.
      for (const other of [...w.world.rooms.values()]) {
        const into = Object.entries(other.exits).filter(([, target]) => target === roomId && other.id !== roomId);
        if (into.length === 0) continue;
        const exits = { ...other.exits };
        for (const [direction] of into) delete exits[direction as Direction];
        await this.putRoom(w, { ...stored(other), exits }, 'exit.remove', other);
      }
      await this.repo.deleteItemsIn(w.trx, worldId, roomId);
      await this.putRoom(w, { ...stored(room), exits: {}, deleted: true }, 'room.delete', room);
      return { success: true, message: `Room '${roomId}' deleted.` };
    });
  }

  async revertRoom(builder: Builder, worldId: string, roomId: string, expected: Expected): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'edit_world');
    return this.change(builder, worldId, async (w) => {
      const original = w.pkg.rooms.get(roomId);
      const storedRow = w.stored.get(roomId);
      if (!original) {
        if (!w.world.rooms.has(roomId)) throw new NotFound(`Room '${roomId}' not found in world '${worldId}'`);
        throw new Conflict(`Room '${roomId}' is not in the package of world '${worldId}': there is nothing to revert to (delete it instead)`);
      }
      // A deleted package room comes back: its tombstone holds the version.
      const room = w.world.rooms.get(roomId) ?? { ...original, version: storedRow?.version ?? original.version };
      this.checkVersion('Room', roomId, room.version, expected);
      const gone = Object.entries(original.exits).filter(([, target]) => !w.world.rooms.has(target));
      if (gone.length > 0) throw new Conflict(`Room '${roomId}' cannot be reverted: its package exits lead to rooms that are gone (${gone.map(([d, t]) => `${d} → ${t}`).join(', ')})`);
      const next = await this.putRoom(w, stored(original), 'room.revert', w.world.rooms.has(roomId) ? room : null);
      return this.roomWithItems(w.pkg, w.world, next, w.trx);
    });
  }

  /** A new room `direction` of `fromId`, in its zone, joined to it by a two-way exit (the game's `@dig`). */
  async dig(builder: Builder, worldId: string, fromId: string, rawDirection: string, rawName: string): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'create_rooms');
    const direction = this.direction(rawDirection);
    const name = bounded('Room name', rawName, WORLD_LIMITS.name);
    return this.change(builder, worldId, async (w) => {
      const from = this.room(w.world, fromId);
      if (from.exits[direction] !== undefined) throw new Conflict(`Room '${fromId}' already has an exit ${direction} (to '${from.exits[direction]}')`);
      const id = this.freshRoomId(w, name);
      const exits = { [OPPOSITE[direction]]: fromId };
      const room = await this.putRoom(w, { roomId: id, zoneId: from.zoneId, name, description: UNDESCRIBED, exits, deleted: false }, 'room.create', null);
      await this.putRoom(w, { ...stored(from), exits: { ...from.exits, [direction]: id } }, 'exit.add', from);
      return this.roomView(w.pkg, room);
    });
  }

  // ---- exits ---------------------------------------------------------------------------------

  async addExit(builder: Builder, worldId: string, roomId: string, expected: Expected, input: { direction: string; to: string; twoWay: boolean }): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'edit_world');
    const direction = this.direction(input.direction);
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const target = w.world.rooms.get(input.to);
      if (!target) throw new Conflict(`An exit must lead to a room of world '${worldId}': there is no room '${input.to}'`);
      const taken = room.exits[direction];
      if (taken !== undefined) throw new Conflict(`Room '${roomId}' already has an exit ${direction} (to '${taken}'); remove it first`);
      const back = OPPOSITE[direction];
      const theirs = target.exits[back];
      if (input.twoWay && theirs !== undefined && theirs !== room.id) throw new Conflict(`Room '${target.id}' already has an exit ${back} (to '${theirs}'); remove it first`);
      await this.putRoom(w, { ...stored(room), exits: { ...room.exits, [direction]: target.id } }, 'exit.add', room);
      if (input.twoWay && theirs === undefined) {
        const there = w.world.rooms.get(target.id)!;
        await this.putRoom(w, { ...stored(there), exits: { ...there.exits, [back]: room.id } }, 'exit.add', there);
      }
      return this.roomWithItems(w.pkg, w.world, w.world.rooms.get(roomId)!, w.trx);
    });
  }

  async removeExit(builder: Builder, worldId: string, roomId: string, expected: Expected, rawDirection: string, twoWay: boolean): Promise<BuildRoom> {
    await this.allowed(builder, worldId, 'edit_world');
    const direction = this.direction(rawDirection);
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const target = room.exits[direction];
      if (target === undefined) throw new NotFound(`Room '${roomId}' has no exit ${direction}`);
      const exits = { ...room.exits };
      delete exits[direction];
      await this.putRoom(w, { ...stored(room), exits }, 'exit.remove', room);
      const back = OPPOSITE[direction];
      const there = w.world.rooms.get(target);
      if (twoWay && there && there.exits[back] === roomId) {
        const theirs = { ...there.exits };
        delete theirs[back];
        await this.putRoom(w, { ...stored(there), exits: theirs }, 'exit.remove', there);
      }
      return this.roomWithItems(w.pkg, w.world, w.world.rooms.get(roomId)!, w.trx);
    });
  }

  // ---- items ---------------------------------------------------------------------------------

  async createItem(builder: Builder, worldId: string, roomId: string, input: { name: string; description: string }): Promise<BuildItem> {
    await this.allowed(builder, worldId, 'create_items');
    const name = bounded('Item name', input.name, WORLD_LIMITS.name);
    const description = bounded('Item description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      this.room(w.world, roomId);
      const item = await this.repo.insertItem(w.trx, worldId, roomId, name, description);
      const view = this.itemView(w.world, item);
      this.record(w, 'item.create', 'item', String(item.id), null, view);
      w.rooms.add(roomId);
      return view;
    });
  }

  async updateItem(builder: Builder, worldId: string, id: number, expected: Expected, input: { name?: string; description?: string; roomId?: string }): Promise<BuildItem> {
    await this.allowed(builder, worldId, 'edit_world');
    const name = input.name === undefined ? undefined : bounded('Item name', input.name, WORLD_LIMITS.name);
    const description = input.description === undefined ? undefined : bounded('Item description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      const item = await this.item(worldId, id, w.trx);
      const version = this.checkVersion('Item', String(id), item.version, expected);
      const moving = input.roomId !== undefined && input.roomId !== item.roomId;
      if (moving) {
        this.room(w.world, input.roomId!);
        if (item.characterId !== null) throw new Conflict(`Item ${id} is held by a character and cannot be moved`);
      }
      const next: ItemRow = { ...item, name: name ?? item.name, description: description ?? item.description, roomId: moving ? input.roomId! : item.roomId, version: item.version + 1 };
      if (!(await this.repo.updateItem(w.trx, next, version))) throw new Conflict(`Item ${id} changed meanwhile (it was taken or edited); read it again`);
      const view = this.itemView(w.world, next);
      this.record(w, 'item.update', 'item', String(id), this.itemView(w.world, item), view);
      this.touchItem(w, item);
      this.touchItem(w, next);
      return view;
    });
  }

  async deleteItem(builder: Builder, worldId: string, id: number, expected: Expected): Promise<Schemas['SuccessMessage']> {
    await this.allowed(builder, worldId, 'create_items');
    return this.change(builder, worldId, async (w) => {
      const item = await this.item(worldId, id, w.trx);
      const version = this.checkVersion('Item', String(id), item.version, expected);
      if (item.characterId !== null) throw new Conflict(`Item ${id} is held by a character and cannot be deleted`);
      if (!(await this.repo.deleteItem(w.trx, id, version))) throw new Conflict(`Item ${id} changed meanwhile (it was taken or edited); read it again`);
      const view = this.itemView(w.world, item);
      this.record(w, 'item.delete', 'item', String(id), view, null);
      this.touchItem(w, item);
      return { success: true, message: `Item ${id} (${view.name}) deleted.` };
    });
  }

  /** Items lying in a room, by the name the game shows (the game's `@idesc` and `@destroy` name items so). */
  async itemInRoom(worldId: string, roomId: string, wanted: string): Promise<BuildItem | undefined> {
    const world = this.worlds.get(worldId);
    if (!world) return undefined;
    const items = (await this.repo.itemsIn(worldId, roomId)).map((i) => this.itemView(world, i));
    return items.find((i) => i.name.toLowerCase() === wanted.toLowerCase()) ?? items.find((i) => i.name.toLowerCase().startsWith(wanted.toLowerCase()));
  }

  /** Every item row of the world, for an export. */
  exportItems(worldId: string): Promise<ItemRow[]> {
    return this.repo.worldItems(worldId);
  }

  // ---- the machinery -------------------------------------------------------------------------

  /**
   * The world, when the builder may use `permission` there: the role's permission (admins and
   * superusers may do everything), a session not playing in another world, and access to the
   * world. Players are refused before anything about the world is told.
   */
  private async allowed(builder: Builder, worldId: string, permission: Permission): Promise<World> {
    assertMayBuild(builder.role, permission);
    if (builder.worldId !== null && builder.worldId !== worldId) {
      throw new Forbidden(`This session plays in world '${builder.worldId}' and cannot change world '${worldId}'`);
    }
    const world = this.worlds.get(worldId);
    if (!world) throw new NotFound(`World '${worldId}' not found`);
    // A session playing in the world was let in when it chose its character.
    if (builder.worldId === null) {
      const access = await this.access.forWorld(builder.userId, builder.role, worldId);
      if (!access?.decision.canAccess) throw new Forbidden(`This account has no access to world '${worldId}'`);
    }
    return world;
  }

  /** Runs one change of a world in a transaction under the world's lock, then announces and applies it. */
  private async change<T>(builder: Builder, worldId: string, work: (w: Work) => Promise<T>): Promise<T> {
    const pkg = this.worlds.packageOf(worldId)!;
    const result = await this.db.transaction(async (trx) => {
      await lockKey(trx, `world-build:${worldId}`);
      const rows = await this.repo.storedRooms(worldId, trx);
      const w: Work = {
        trx,
        pkg,
        stored: new Map(rows.map((r) => [r.roomId, r])),
        world: composeWorld(pkg, rows),
        changes: [],
        rooms: new Set(),
        characters: new Set(),
      };
      const value = await work(w);
      const problems = worldProblems(w.world);
      // The rules above keep every world loadable; this is the last line, never the first.
      if (problems.length > 0) throw new Conflict(`The change would leave world '${worldId}' unloadable: ${problems.join('; ')}`);
      const now = this.clock();
      await this.repo.recordChanges(trx, w.changes.map((c) => ({ ...c, actor: builder.username, via: builder.via, createdAt: now })));
      const rooms = [...w.rooms];
      for (let i = 0; i === 0 || i < rooms.length; i += ROOMS_PER_EVENT) {
        await this.bus.publish({ type: 'world.changed', worldId, roomIds: rooms.slice(i, i + ROOMS_PER_EVENT), characterIds: i === 0 ? [...w.characters] : [] }, trx);
      }
      return value;
    });
    await this.sync.refresh(worldId);
    return result;
  }

  /**
   * Writes a room whole into the world being changed, one version above the last (a deleted
   * room's id, used again, goes on counting, so no write read before can apply), and records
   * the change.
   */
  private async putRoom(w: Work, next: Omit<StoredRoom, 'version'>, action: string, before: Room | null): Promise<Room> {
    const version = (w.stored.get(next.roomId)?.version ?? (w.pkg.rooms.has(next.roomId) ? 1 : 0)) + 1;
    const row: StoredRoom = { ...next, version };
    await this.repo.putRoom(w.trx, w.pkg.id, row, this.clock());
    w.stored.set(row.roomId, row);
    w.world = composeWorld(w.pkg, [...w.stored.values()]);
    const after = row.deleted ? null : w.world.rooms.get(row.roomId)!;
    this.record(w, action, 'room', row.roomId, before && roomRecord(before), after && roomRecord(after));
    w.rooms.add(row.roomId);
    return after ?? { ...before!, version };
  }

  private record(w: Work, action: string, targetType: 'room' | 'item', targetId: string, before: unknown, after: unknown): void {
    w.changes.push({ worldId: w.pkg.id, action, targetType, targetId, before, after });
  }

  private touchItem(w: Work, item: ItemRow): void {
    if (item.roomId !== null) w.rooms.add(item.roomId);
    if (item.characterId !== null) w.characters.add(item.characterId);
  }

  /** The room at the version the builder read. */
  private current(w: Work, roomId: string, expected: Expected): Room {
    const room = this.room(w.world, roomId);
    this.checkVersion('Room', roomId, room.version, expected);
    return room;
  }

  private checkVersion(what: 'Room' | 'Item', id: string, version: number, expected: Expected): number {
    if (expected !== 'current' && expected !== version) {
      throw new Conflict(`${what} '${id}' is at version ${version}, not ${expected} as sent; read it again`, { extra: { current_version: version } });
    }
    return version;
  }

  private room(world: World, roomId: string): Room {
    const room = world.rooms.get(roomId);
    if (!room) throw new NotFound(`Room '${roomId}' not found in world '${world.id}'`);
    return room;
  }

  private async item(worldId: string, id: number, runner: Db | Knex.Transaction): Promise<ItemRow> {
    const item = await this.repo.item(worldId, id, runner);
    if (!item) throw new NotFound(`Item ${id} not found in world '${worldId}'`);
    return item;
  }

  private direction(value: string): Direction {
    if (!isDirection(value)) throw new InvalidInput(`Unknown direction '${value}' (one of ${DIRECTIONS.join(', ')})`);
    return value;
  }

  /** What makes a room unmovable and undeletable: being the world's or a zone's spawn room. */
  private spawnOf(world: World, roomId: string): string | null {
    if (world.defaultSpawn.room === roomId) return "the world's spawn room";
    const zone = [...world.zones.values()].find((z) => z.spawnRoom === roomId);
    return zone ? `the spawn room of zone '${zone.id}'` : null;
  }

  /** An id from the name (`Lamplit Cellar` → `lamplit_cellar`), with a number when taken, even by a deleted room. */
  private freshRoomId(w: Work, name: string): string {
    const base =
      name
        .normalize('NFKD')
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 48) || 'room';
    const taken = (id: string): boolean => w.world.rooms.has(id) || w.stored.has(id) || w.pkg.rooms.has(id);
    let id = base;
    for (let n = 2; taken(id); n++) id = `${base}_${n}`;
    return id;
  }

  private roomView(pkg: World, room: Room): BuildRoom {
    return { ...roomRecord(room), origin: pkg.rooms.has(room.id) ? 'package' : 'builder', changed: room !== pkg.rooms.get(room.id) };
  }

  private async roomWithItems(pkg: World, world: World, room: Room, runner: Db | Knex.Transaction): Promise<BuildRoom> {
    const items = (await this.repo.itemsIn(world.id, room.id, runner)).map((i) => this.itemView(world, i));
    return { ...this.roomView(pkg, room), items };
  }

  private itemView(world: World, item: ItemRow): BuildItem {
    return {
      id: item.id,
      item_id: item.itemId,
      name: itemName(world, item),
      description: itemDescription(world, item),
      room_id: item.roomId,
      held: item.characterId !== null,
      version: item.version,
    };
  }
}

/** A room as the history and the API show it. */
function roomRecord(room: Room): { id: string; zone: string; name: string; description: string; exits: Record<string, string>; version: number } {
  return { id: room.id, zone: room.zoneId, name: room.name, description: room.description, exits: { ...room.exits }, version: room.version };
}

function stored(room: Room): Omit<StoredRoom, 'version'> {
  return { roomId: room.id, zoneId: room.zoneId, name: room.name, description: room.description, exits: { ...room.exits }, deleted: false };
}

function changeView(c: ChangeRow): WorldChange {
  return {
    id: c.id,
    actor: c.actor,
    via: c.via,
    action: c.action as WorldChange['action'],
    target_type: c.targetType,
    target_id: c.targetId,
    before: c.before as WorldChange['before'],
    after: c.after as WorldChange['after'],
    created_at: c.createdAt,
  };
}
