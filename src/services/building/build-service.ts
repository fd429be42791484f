/**
 * World building: every rule about changing a world while it is played, for the HTTP routes
 * and the in-game `@` commands alike (docs/decisions.md, "Building worlds"). A change is
 * counted by the account's building limit, then runs in one transaction under a per-world lock:
 * it brings this instance's world up to the stored revision, drafts its rooms over it, checks
 * the version the builder last read and the world's bounds, holds what it touched to what the
 * loader demands of a package (WorldDraft.problems), writes, and records the change with its
 * before and after. The commit announces `world.changed` (and an `item` event for each item
 * that appears in or vanishes from a room); this instance applies the change before it
 * answers, the others as they hear the event. A change costs what it touches, not the world.
 */
import type { Knex } from 'knex';
import type { Config } from '../../config/config.ts';
import { lockKey, type Db } from '../../db/database.ts';
import type { Clock } from '../../db/clock.ts';
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { BuildRepository, ChangeRow, ItemRow, NewChange } from '../../db/repositories/build-repository.ts';
import type { NpcRepository } from '../../db/repositories/npc-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { hasPermission, rank, type Permission, type Role } from '../../shared/roles.ts';
import { insufficientPermission } from '../admin/user-admin-service.ts';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../../shared/errors.ts';
import { nameSkeleton } from '../../shared/names.ts';
import { RESERVED_WORDS } from '../accounts/reserved-names.ts';
import type { WorldAccessService } from '../worlds/world-access.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { DIRECTIONS, isDirection, WORLD_ID, WORLD_LIMITS, type Direction, type Npc, type Room, type World } from '../worlds/world-loader.ts';
import { itemDescription, itemName, itemScript, unreachableRooms, WorldDraft, type NpcWrite, type RoomWrite } from '../worlds/world-overlay.ts';
import type { Limit } from '../limits/limits.ts';
import type { WorldSync } from './world-sync.ts';
import { plainText } from '../../shared/plain-text.ts';

type Schemas = components['schemas'];
export type BuildRoom = Schemas['BuildRoom'];
export type BuildItem = Schemas['BuildItem'];
export type WorldChange = Schemas['WorldChange'];
export type BuildNpc = Schemas['BuildNpc'];
export type BuildNpcSummary = Schemas['BuildNpcSummary'];

/** Whether a script compiles: null when it does, else the first error and its line (src/services/scripts/). */
export type ScriptCheck = (source: string) => Promise<{ message: string; line: number | null } | null>;

/** Who asks: the session's role and account, the world it plays in, and the door it came through. */
export interface Builder {
  role: Role;
  userId: number;
  username: string;
  /** The world of the session's character; null when it plays none. */
  worldId: string | null;
  /** The door the change came through; `script` for a room's script opening or closing an exit. */
  via: 'api' | 'game' | 'script';
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

/**
 * Words an NPC's name may not carry, by their look-alike key (`nameSkeleton`): those players'
 * names may not (reserved-names.ts) and those of the game's own lines (`[Staff announcement]`,
 * `(OOC)`).
 */
const STAFF_WORDS: ReadonlyMap<string, string> = new Map([...RESERVED_WORDS, 'announcement', 'announcements', 'ooc'].map((word) => [nameSkeleton(word), word]));

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

type ItemSeen = Extract<BusEvent, { type: 'item' }>;

const NOTHING_SAVED: ReadonlySet<string> = new Set();

/** What a change of one world has done so far, written and announced at its end. */
interface Work {
  trx: Knex.Transaction;
  draft: WorldDraft;
  changes: Array<Omit<NewChange, 'actor' | 'via' | 'createdAt'>>;
  /** Rooms whose own name, description, zone or exits changed: those standing there see the room again. */
  rooms: Set<string>;
  /** Rooms and holders whose items changed (the caches of every instance drop them). */
  itemRooms: Set<string>;
  characters: Set<number>;
  /** Items that appear in or vanish from a room, as its players see them. */
  seen: ItemSeen[];
  /** Scripts saved by this change, by owner (`npc:<id>`, `room:<id>`, `item:<row id>`): they load again. */
  scripts: Set<string>;
  /** NPCs placed or removed. */
  npcMoves: Array<Extract<BusEvent, { type: 'npc.move' }>>;
}

export class BuildService {
  private readonly db: Db;
  private readonly repo: BuildRepository;
  private readonly worlds: WorldCatalog;
  private readonly access: WorldAccessService;
  private readonly sync: WorldSync;
  private readonly bus: EventBus;
  private readonly clock: Clock;
  private readonly limit: Limit;
  private readonly bounds: Config['building'];
  private readonly checkScript: ScriptCheck;
  private readonly npcs: NpcRepository;
  private readonly scriptExits: Limit;

  constructor(d: {
    db: Db;
    repo: BuildRepository;
    npcs: NpcRepository;
    worlds: WorldCatalog;
    access: WorldAccessService;
    sync: WorldSync;
    bus: EventBus;
    clock: Clock;
    limit: Limit;
    /** Scripts' exit changes per world ([scripts] exit_changes_per_minute), in the shared limits' store. */
    scriptExits: Limit;
    bounds: Config['building'];
    checkScript: ScriptCheck;
  }) {
    this.scriptExits = d.scriptExits;
    this.npcs = d.npcs;
    this.checkScript = d.checkScript;
    this.db = d.db;
    this.repo = d.repo;
    this.worlds = d.worlds;
    this.access = d.access;
    this.sync = d.sync;
    this.bus = d.bus;
    this.clock = d.clock;
    this.limit = d.limit;
    this.bounds = d.bounds;
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
    return this.roomWithItems(this.worlds.packageOf(worldId)!, world, this.found(world, world.rooms.get(roomId), roomId), this.db);
  }

  async getItem(builder: Builder, worldId: string, id: number): Promise<BuildItem> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    return this.itemView(world, await this.item(worldId, id, this.db));
  }

  async changes(builder: Builder, worldId: string, limit: number, before: number | null): Promise<Schemas['WorldChangeList']> {
    await this.allowed(builder, worldId, 'edit_world');
    return { world_id: worldId, changes: (await this.repo.changes(worldId, limit, before)).map(changeView) };
  }

  /** What went wrong in the world's scripts, newest first (players never see it). */
  async scriptErrors(builder: Builder, worldId: string, limit: number, before: number | null, owner: string | null): Promise<Schemas['ScriptErrorList']> {
    await this.allowed(builder, worldId, 'edit_world');
    const errors = await this.npcs.errors(worldId, limit, before, owner);
    return { world_id: worldId, errors: errors.map((e) => ({ id: e.id, owner: e.owner, hook: e.hook, kind: e.kind as Schemas['ScriptError']['kind'], message: e.message, line: e.line, created_at: e.createdAt })) };
  }

  // ---- rooms ---------------------------------------------------------------------------------

  async createRoom(builder: Builder, worldId: string, input: { id?: string; zone?: string; name: string; description: string }): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'create_rooms');
    const name = bounded('Room name', input.name, WORLD_LIMITS.name);
    const description = bounded('Room description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      const { world } = w.draft;
      const zone = input.zone ?? world.defaultSpawn.zone;
      if (!world.zones.has(zone)) throw new NotFound(`Zone '${zone}' not found in world '${worldId}' (zones: ${[...world.zones.keys()].join(', ')})`);
      const id = input.id ?? this.freshId(name, (id) => w.draft.taken(id));
      if (!WORLD_ID.test(id)) throw new InvalidInput(`Room id '${id}' must be lower-case letters, digits, _ and - (at most ${WORLD_LIMITS.id})`);
      if (w.draft.room(id)) throw new Conflict(`Room '${id}' already exists in world '${worldId}'`);
      this.roomToSpare(w);
      const room = this.putRoom(w, { roomId: id, zoneId: zone, name, description, exits: {}, deleted: false }, 'room.create', null);
      return this.roomWithItems(w.draft.pkg, world, room, w.trx);
    });
  }

  async updateRoom(builder: Builder, worldId: string, roomId: string, expected: Expected, input: { name?: string; description?: string; zone?: string; script?: string | null }): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'edit_world');
    const name = input.name === undefined ? undefined : bounded('Room name', input.name, WORLD_LIMITS.name);
    const description = input.description === undefined ? undefined : bounded('Room description', input.description, WORLD_LIMITS.description);
    const script = await this.script(input.script);
    return this.change(builder, worldId, async (w) => {
      const { world } = w.draft;
      const room = this.current(w, roomId, expected);
      const zone = input.zone ?? room.zoneId;
      if (zone !== room.zoneId) {
        if (!world.zones.has(zone)) throw new NotFound(`Zone '${zone}' not found in world '${worldId}'`);
        const spawnOf = this.spawnOf(world, roomId);
        if (spawnOf) throw new Conflict(`Room '${roomId}' is ${spawnOf}: it stays in zone '${room.zoneId}'`);
      }
      const next = this.putRoom(w, { ...stored(room), name: name ?? room.name, description: description ?? room.description, zoneId: zone, ...(script === undefined ? {} : { script }) }, 'room.update', room);
      if (script !== undefined) w.scripts.add(`room:${roomId}`);
      return this.roomWithItems(w.draft.pkg, world, next, w.trx, w.scripts);
    });
  }

  async deleteRoom(builder: Builder, worldId: string, roomId: string, expected: Expected): Promise<Schemas['SuccessMessage']> {
    await this.mayChange(builder, worldId, 'create_rooms');
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const spawnOf = this.spawnOf(w.draft.world, roomId);
      if (spawnOf) throw new Conflict(`Room '${roomId}' is ${spawnOf} and cannot be deleted`);
      const present = await this.repo.charactersIn(w.trx, worldId, roomId);
      if (present.length > 0) throw new Conflict(`Room '${roomId}' cannot be deleted while characters are in it: ${present.slice(0, 5).join(', ')}${present.length > 5 ? ', …' : ''}`);
      const living = [...new Set([...w.draft.npcsAt(roomId).map((npc) => npc.id), ...(await this.npcs.standingIn(worldId, roomId, w.trx))])];
      if (living.length > 0) throw new Conflict(`Room '${roomId}' cannot be deleted while NPCs live or stand in it: ${living.slice(0, 5).join(', ')}${living.length > 5 ? ', …' : ''}`);
      // Exits leading here go with the room, each such room's change recorded.
      for (const other of w.draft.roomsInto(roomId)) {
        if (other.id === roomId) continue;
        const exits = Object.fromEntries(Object.entries(other.exits).filter(([, target]) => target !== roomId));
        this.putRoom(w, { ...stored(other), exits }, 'exit.remove', other);
      }
      await this.repo.deleteItemsIn(w.trx, worldId, roomId);
      this.putRoom(w, { ...stored(room), exits: {}, deleted: true }, 'room.delete', room);
      return { success: true, message: `Room '${roomId}' deleted.` };
    });
  }

  async revertRoom(builder: Builder, worldId: string, roomId: string, expected: Expected): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'edit_world');
    return this.change(builder, worldId, async (w) => {
      const original = w.draft.pkg.rooms.get(roomId);
      const now = w.draft.room(roomId);
      if (!original) {
        if (!now) throw new NotFound(`Room '${roomId}' not found in world '${worldId}'`);
        throw new Conflict(`Room '${roomId}' is not in the package of world '${worldId}': there is nothing to revert to (delete it instead)`);
      }
      // A deleted package room comes back: its tombstone holds the version.
      const room = now ?? { ...original, version: w.draft.lastVersion(roomId) };
      this.checkVersion('Room', roomId, room.version, expected);
      if (!now) this.roomToSpare(w);
      const gone = Object.entries(original.exits).filter(([, target]) => !w.draft.room(target));
      if (gone.length > 0) throw new Conflict(`Room '${roomId}' cannot be reverted: its package exits lead to rooms that are gone (${gone.map(([d, t]) => `${d} → ${t}`).join(', ')})`);
      const next = this.putRoom(w, { ...stored(original), script: null }, 'room.revert', now ?? null);
      w.scripts.add(`room:${roomId}`);
      return this.roomWithItems(w.draft.pkg, w.draft.world, next, w.trx, w.scripts);
    });
  }

  /** A new room `direction` of `fromId`, in its zone, joined to it by a two-way exit (the game's `@dig`). */
  async dig(builder: Builder, worldId: string, fromId: string, rawDirection: string, rawName: string): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'create_rooms');
    const direction = this.direction(rawDirection);
    const name = bounded('Room name', rawName, WORLD_LIMITS.name);
    return this.change(builder, worldId, async (w) => {
      const from = this.draftRoom(w, fromId);
      if (from.exits[direction] !== undefined) throw new Conflict(`Room '${fromId}' already has an exit ${direction} (to '${from.exits[direction]}')`);
      this.roomToSpare(w);
      const id = this.freshId(name, (id) => w.draft.taken(id));
      const exits = { [OPPOSITE[direction]]: fromId };
      const room = this.putRoom(w, { roomId: id, zoneId: from.zoneId, name, description: UNDESCRIBED, exits, deleted: false }, 'room.create', null);
      this.putRoom(w, { ...stored(from), exits: { ...from.exits, [direction]: id } }, 'exit.add', from);
      return this.roomView(w.draft.pkg, room);
    });
  }

  // ---- exits ---------------------------------------------------------------------------------

  async addExit(builder: Builder, worldId: string, roomId: string, expected: Expected, input: { direction: string; to: string; twoWay: boolean }): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'edit_world');
    const direction = this.direction(input.direction);
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const target = w.draft.room(input.to);
      if (!target) throw new Conflict(`An exit must lead to a room of world '${worldId}': there is no room '${input.to}'`);
      const taken = room.exits[direction];
      if (taken !== undefined) throw new Conflict(`Room '${roomId}' already has an exit ${direction} (to '${taken}'); remove it first`);
      const back = OPPOSITE[direction];
      const theirs = target.exits[back];
      if (input.twoWay && theirs !== undefined && theirs !== room.id) throw new Conflict(`Room '${target.id}' already has an exit ${back} (to '${theirs}'); remove it first`);
      const next = this.putRoom(w, { ...stored(room), exits: { ...room.exits, [direction]: target.id } }, 'exit.add', room);
      if (input.twoWay && theirs === undefined) {
        // The target may be this room itself, just written.
        const there = w.draft.room(target.id)!;
        this.putRoom(w, { ...stored(there), exits: { ...there.exits, [back]: room.id } }, 'exit.add', there);
      }
      return this.roomWithItems(w.draft.pkg, w.draft.world, w.draft.room(roomId) ?? next, w.trx);
    });
  }

  async removeExit(builder: Builder, worldId: string, roomId: string, expected: Expected, rawDirection: string, twoWay: boolean): Promise<BuildRoom> {
    await this.mayChange(builder, worldId, 'edit_world');
    const direction = this.direction(rawDirection);
    return this.change(builder, worldId, async (w) => {
      const room = this.current(w, roomId, expected);
      const target = room.exits[direction];
      if (target === undefined) throw new NotFound(`Room '${roomId}' has no exit ${direction}`);
      const exits = { ...room.exits };
      delete exits[direction];
      const next = this.putRoom(w, { ...stored(room), exits }, 'exit.remove', room);
      const back = OPPOSITE[direction];
      const there = w.draft.room(target);
      if (twoWay && there && there.exits[back] === roomId) {
        const theirs = { ...there.exits };
        delete theirs[back];
        this.putRoom(w, { ...stored(there), exits: theirs }, 'exit.remove', there);
      }
      // Allowed, as the package check allows it (a warning): builders hear which rooms no walk reaches since this change.
      const before = new Set(unreachableRooms(w.draft.world));
      const rooms = new Map([...w.draft.world.rooms.keys()].flatMap((id) => (w.draft.room(id) ? [[id, w.draft.room(id)!] as const] : [])));
      const unreachable = unreachableRooms({ ...w.draft.world, rooms }).filter((id) => !before.has(id));
      return { ...(await this.roomWithItems(w.draft.pkg, w.draft.world, w.draft.room(roomId) ?? next, w.trx)), unreachable };
    });
  }

  // ---- items ---------------------------------------------------------------------------------

  async createItem(builder: Builder, worldId: string, roomId: string, input: { name: string; description: string }): Promise<BuildItem> {
    await this.mayChange(builder, worldId, 'create_items');
    const name = bounded('Item name', input.name, WORLD_LIMITS.name);
    const description = bounded('Item description', input.description, WORLD_LIMITS.description);
    return this.change(builder, worldId, async (w) => {
      this.draftRoom(w, roomId);
      await this.itemToSpare(w, roomId);
      const item = await this.repo.insertItem(w.trx, worldId, roomId, name, description);
      const view = this.itemView(w.draft.world, item);
      this.record(w, 'item.create', 'item', String(item.id), null, view);
      this.touchItem(w, item);
      this.itemSeen(w, roomId, view.name, 'appear');
      return view;
    });
  }

  async updateItem(builder: Builder, worldId: string, id: number, expected: Expected, input: { name?: string; description?: string; roomId?: string; script?: string | null }): Promise<BuildItem> {
    await this.mayChange(builder, worldId, 'edit_world');
    const name = input.name === undefined ? undefined : bounded('Item name', input.name, WORLD_LIMITS.name);
    const description = input.description === undefined ? undefined : bounded('Item description', input.description, WORLD_LIMITS.description);
    const script = await this.script(input.script);
    return this.change(builder, worldId, async (w) => {
      const item = await this.item(worldId, id, w.trx);
      const version = this.checkVersion('Item', String(id), item.version, expected);
      const moving = input.roomId !== undefined && input.roomId !== item.roomId;
      if (moving) {
        this.draftRoom(w, input.roomId!);
        if (item.characterId !== null) throw new Conflict(`Item ${id} is held by a character and cannot be moved`);
        await this.itemToSpare(w, input.roomId!);
      }
      const next: ItemRow = { ...item, name: name ?? item.name, description: description ?? item.description, roomId: moving ? input.roomId! : item.roomId, script: script === undefined ? item.script : script, version: item.version + 1 };
      if (script !== undefined) w.scripts.add(`item:${id}`);
      if (!(await this.repo.updateItem(w.trx, next, version))) throw new Conflict(`Item ${id} changed meanwhile (it was taken or edited); read it again`);
      const before = this.itemView(w.draft.world, item);
      const view = this.itemView(w.draft.world, next);
      this.record(w, 'item.update', 'item', String(id), before, view);
      this.touchItem(w, item);
      this.touchItem(w, next);
      // What players there see: an item leaving, arriving, or lying there under its new name.
      if (moving || before.name !== view.name) {
        if (item.roomId !== null) this.itemSeen(w, item.roomId, before.name, 'vanish');
        if (next.roomId !== null) this.itemSeen(w, next.roomId, view.name, 'appear');
      }
      return view;
    });
  }

  async deleteItem(builder: Builder, worldId: string, id: number, expected: Expected): Promise<Schemas['SuccessMessage']> {
    await this.mayChange(builder, worldId, 'create_items');
    return this.change(builder, worldId, async (w) => {
      const item = await this.item(worldId, id, w.trx);
      const version = this.checkVersion('Item', String(id), item.version, expected);
      if (item.characterId !== null) throw new Conflict(`Item ${id} is held by a character and cannot be deleted`);
      if (!(await this.repo.deleteItem(w.trx, id, version))) throw new Conflict(`Item ${id} changed meanwhile (it was taken or edited); read it again`);
      const view = this.itemView(w.draft.world, item);
      this.record(w, 'item.delete', 'item', String(id), view, null);
      this.touchItem(w, item);
      if (item.roomId !== null) this.itemSeen(w, item.roomId, view.name, 'vanish');
      return { success: true, message: `Item ${id} (${view.name}) deleted.` };
    });
  }

  /** A room's name as the world now has it (its id when it has none). */
  roomName(worldId: string, roomId: string): string {
    return this.worlds.get(worldId)?.rooms.get(roomId)?.name ?? roomId;
  }

  /** The items lying in a room, as builders see them (the game's `@idesc` and `@destroy` pick among them by name). */
  async itemsLyingIn(worldId: string, roomId: string): Promise<BuildItem[]> {
    const world = this.worlds.get(worldId);
    if (!world) return [];
    return (await this.repo.itemsIn(worldId, roomId)).map((i) => this.itemView(world, i));
  }

  /** Every item row of the world, for an export. */
  exportItems(worldId: string): Promise<ItemRow[]> {
    return this.repo.worldItems(worldId);
  }

  /**
   * A script opens an exit of the room it runs in (to a room of the world) or closes one, as a
   * builder would, seen by every instance; counted against the world's own limit
   * ([scripts] exit_changes_per_minute, in the shared limits, so it holds across instances) and
   * kept out of the history ("Building worlds"). A refusal is a DomainError, the script's fault.
   */
  async scriptExit(worldId: string, owner: string, roomId: string, direction: string, to: string | null): Promise<void> {
    const builder: Builder = { role: 'superuser', userId: 0, username: owner.slice(0, 64), worldId, via: 'script' };
    // Opening an exit already open there, or closing one already closed, changes nothing.
    const now = this.worlds.get(worldId)?.rooms.get(roomId)?.exits[direction as Direction];
    const changes = to !== null ? now !== to : now !== undefined;
    if (!changes) return;
    const refused = await this.scriptExits.hit(worldId);
    if (refused) throw refused;
    if (to !== null) await this.addExit(builder, worldId, roomId, 'current', { direction, to, twoWay: false });
    else await this.removeExit(builder, worldId, roomId, 'current', direction, false);
  }

  // ---- NPCs ----------------------------------------------------------------------------------

  /**
   * A page of the world's NPCs in id order, after the id `after`; with `standingIn`, only those
   * standing in that room now. Without their scripts (read one NPC for its script): 600 NPCs
   * with long scripts made a 39 MB answer.
   */
  async listNpcs(builder: Builder, worldId: string, page: { limit: number; after: string | null; standingIn: string | null }): Promise<Schemas['BuildNpcList']> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    const ids = page.standingIn === null ? [...world.npcs.keys()].sort() : await this.npcs.standingIn(worldId, page.standingIn);
    const chosen = ids.filter((id) => (page.after === null || id > page.after) && world.npcs.has(id)).slice(0, page.limit);
    const places = await this.repo.positionsOf(worldId, chosen);
    const suspended = await this.repo.suspended(worldId, chosen.map((id) => `npc:${id}`));
    const pkg = this.worlds.packageOf(worldId)!;
    const npcs = chosen.map((id) => {
      const npc = world.npcs.get(id)!;
      return this.npcSummary(pkg, npc, places.get(id) ?? npc.roomId, suspended.has(`npc:${id}`));
    });
    return { world_id: worldId, npcs };
  }

  async getNpc(builder: Builder, worldId: string, npcId: string): Promise<BuildNpc> {
    const world = await this.allowed(builder, worldId, 'edit_world');
    const npc = this.foundNpc(worldId, world.npcs.get(npcId), npcId);
    const suspended = await this.repo.suspended(worldId, [`npc:${npcId}`]);
    return this.npcView(this.worlds.packageOf(worldId)!, npc, (await this.npcs.standingAt(worldId, npcId)) ?? npc.roomId, suspended.size > 0);
  }

  async createNpc(builder: Builder, worldId: string, input: { id?: string; name: string; description: string; roomId: string; script?: string | null }): Promise<BuildNpc> {
    await this.mayChange(builder, worldId, 'create_rooms');
    const name = await this.npcName(worldId, input.name);
    const description = bounded('NPC description', input.description, WORLD_LIMITS.description);
    const script = await this.script(input.script);
    return this.change(builder, worldId, async (w) => {
      this.draftRoom(w, input.roomId);
      const id = input.id ?? this.freshId(name, (candidate) => w.draft.npcTaken(candidate));
      if (!WORLD_ID.test(id)) throw new InvalidInput(`NPC id '${id}' must be lower-case letters, digits, _ and - (at most ${WORLD_LIMITS.id})`);
      if (w.draft.npc(id)) throw new Conflict(`NPC '${id}' already exists in world '${worldId}'`);
      this.npcToSpare(w);
      const npc = this.putNpc(w, { npcId: id, name, description, roomId: input.roomId, deleted: false, script: script ?? null }, 'npc.create', null);
      await this.npcs.move(worldId, id, input.roomId, this.clock(), w.trx);
      w.npcMoves.push({ type: 'npc.move', worldId, npcId: id, name, from: null, to: input.roomId, direction: null });
      // Saved as a PATCH saves one: its onLoad runs now (ScriptService answers the event's `scripts`).
      if (script) w.scripts.add(`npc:${id}`);
      return this.npcView(w.draft.pkg, npc, input.roomId, false);
    });
  }

  async updateNpc(builder: Builder, worldId: string, npcId: string, expected: Expected, input: { name?: string; description?: string; roomId?: string; script?: string | null }): Promise<BuildNpc> {
    await this.mayChange(builder, worldId, 'edit_world');
    const name = input.name === undefined ? undefined : await this.npcName(worldId, input.name);
    const description = input.description === undefined ? undefined : bounded('NPC description', input.description, WORLD_LIMITS.description);
    const script = await this.script(input.script);
    return this.change(builder, worldId, async (w) => {
      const npc = this.currentNpc(w, npcId, expected);
      if (input.roomId !== undefined) this.draftRoom(w, input.roomId);
      const next = this.putNpc(w, { ...storedNpc(npc), name: name ?? npc.name, description: description ?? npc.description, roomId: input.roomId ?? npc.roomId, ...(script === undefined ? {} : { script }) }, 'npc.update', npc);
      const standing = (await this.npcs.standingAt(worldId, npcId, w.trx)) ?? npc.roomId;
      // A new home takes the NPC there at once; a rename shows in its room.
      if (input.roomId !== undefined && input.roomId !== standing) {
        await this.npcs.move(worldId, npcId, input.roomId, this.clock(), w.trx);
        w.npcMoves.push({ type: 'npc.move', worldId, npcId, name: next.name, from: standing, to: input.roomId, direction: null });
      } else w.rooms.add(standing);
      if (script !== undefined) w.scripts.add(`npc:${npcId}`);
      return this.npcView(w.draft.pkg, next, input.roomId ?? standing, await this.suspendedUnlessSaved(w, `npc:${npcId}`));
    });
  }

  async deleteNpc(builder: Builder, worldId: string, npcId: string, expected: Expected): Promise<Schemas['SuccessMessage']> {
    await this.mayChange(builder, worldId, 'create_rooms');
    return this.change(builder, worldId, async (w) => {
      const npc = this.currentNpc(w, npcId, expected);
      this.putNpc(w, { ...storedNpc(npc), deleted: true }, 'npc.delete', npc);
      const standing = (await this.npcs.standingAt(worldId, npcId, w.trx)) ?? npc.roomId;
      await this.npcs.forget(worldId, npcId, w.trx);
      await this.npcs.forgetOwner(w.trx, worldId, `npc:${npcId}`);
      w.npcMoves.push({ type: 'npc.move', worldId, npcId, name: npc.name, from: standing, to: null, direction: null });
      return { success: true, message: `NPC '${npcId}' deleted.` };
    });
  }

  /** Puts a package NPC back as its package has it (a deleted one comes back, at its home). */
  async revertNpc(builder: Builder, worldId: string, npcId: string, expected: Expected): Promise<BuildNpc> {
    await this.mayChange(builder, worldId, 'edit_world');
    return this.change(builder, worldId, async (w) => {
      const original = w.draft.pkg.npcs.get(npcId);
      const now = w.draft.npc(npcId);
      if (!original) {
        if (!now) throw new NotFound(`NPC '${npcId}' not found in world '${worldId}'`);
        throw new Conflict(`NPC '${npcId}' is not in the package of world '${worldId}': there is nothing to revert to (delete it instead)`);
      }
      const npc = now ?? { ...original, version: w.draft.lastNpcVersion(npcId) };
      this.checkVersion('NPC', npcId, npc.version, expected);
      if (!now) this.npcToSpare(w);
      if (!w.draft.room(original.roomId)) throw new Conflict(`NPC '${npcId}' cannot be reverted: its home room '${original.roomId}' is gone`);
      const next = this.putNpc(w, { ...storedNpc(original), script: null }, 'npc.revert', now ?? null);
      const standing = await this.npcs.standingAt(worldId, npcId, w.trx);
      if (standing === undefined) {
        await this.npcs.move(worldId, npcId, original.roomId, this.clock(), w.trx);
        w.npcMoves.push({ type: 'npc.move', worldId, npcId, name: next.name, from: null, to: original.roomId, direction: null });
      } else w.rooms.add(standing);
      w.scripts.add(`npc:${npcId}`);
      return this.npcView(w.draft.pkg, next, standing ?? original.roomId, false);
    });
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

  /**
   * The world, when the builder may change it with `permission` (as `allowed`), counted by the
   * account's building limit: before any script is compiled, so a refused save costs a count,
   * not a compile (docs/decisions.md, "Building worlds"). Scripts' exits have their own limit
   * (`scriptExit`).
   */
  private async mayChange(builder: Builder, worldId: string, permission: Permission): Promise<World> {
    const world = await this.allowed(builder, worldId, permission);
    const refused = builder.via === 'script' ? null : await this.limit.hit(String(builder.userId));
    if (refused) throw refused;
    return world;
  }

  /**
   * Runs one change of a world (counted by `mayChange` before) in a transaction under the
   * world's lock; then announces it and applies it here before answering.
   */
  private async change<T>(builder: Builder, worldId: string, work: (w: Work) => Promise<T>): Promise<T> {
    const result = await this.db.transaction(async (trx) => {
      await lockKey(trx, `world-build:${worldId}`);
      // Under the lock, the world read through the transaction is the world as stored.
      const draft = new WorldDraft(await this.sync.catchUp(worldId, trx));
      const w: Work = { trx, draft, changes: [], rooms: new Set(), itemRooms: new Set(), characters: new Set(), seen: [], scripts: new Set(), npcMoves: [] };
      const value = await work(w);
      const problems = draft.problems();
      // The rules above keep every world loadable; this is the last line, never the first.
      if (problems.length > 0) throw new Conflict(`The change would leave world '${worldId}' unloadable: ${problems.join('; ')}`);
      const now = this.clock();
      const rows = draft.rows();
      await this.repo.putRooms(trx, worldId, rows.rooms, now);
      await this.repo.putNpcs(trx, worldId, rows.npcs, now);
      // A script's exit is no builder's work: every instance learns of it from the rows above and
      // the event below; the history does not keep it ("Building worlds").
      if (builder.via !== 'script') {
        const via = builder.via;
        await this.repo.recordChanges(trx, worldId, w.changes.map((c) => ({ ...c, actor: builder.username, via, createdAt: now })), this.bounds.historyPerWorld);
      }
      // A saved script runs again from no fault (ScriptService clears them too, after the commit): the answer shows it so.
      for (const owner of w.scripts) await this.npcs.clearFaults(worldId, owner, trx);
      const rooms = [...w.rooms];
      for (let i = 0; i === 0 || i < rooms.length; i += ROOMS_PER_EVENT) {
        const first = i === 0;
        await this.bus.publish({ type: 'world.changed', worldId, roomIds: rooms.slice(i, i + ROOMS_PER_EVENT), itemRoomIds: first ? [...w.itemRooms] : [], characterIds: first ? [...w.characters] : [], scripts: first ? [...w.scripts] : [] }, trx);
      }
      for (const seen of w.seen) await this.bus.publish(seen, trx);
      for (const moved of w.npcMoves) await this.bus.publish(moved, trx);
      return value;
    });
    await this.sync.catchUp(worldId);
    return result;
  }

  /** Writes a room whole into the world being changed, and records the change. */
  private putRoom(w: Work, next: RoomWrite, action: string, before: Room | null): Room {
    const { row, room } = w.draft.put(next);
    this.record(w, action, 'room', row.roomId, before && roomRecord(before), room && roomRecord(room));
    w.rooms.add(row.roomId);
    return room ?? { ...before!, version: row.version };
  }

  private record(w: Work, action: string, targetType: 'room' | 'item' | 'npc', targetId: string, before: unknown, after: unknown): void {
    w.changes.push({ action, targetType, targetId, before, after });
  }

  private touchItem(w: Work, item: ItemRow): void {
    if (item.roomId !== null) w.itemRooms.add(item.roomId);
    if (item.characterId !== null) w.characters.add(item.characterId);
  }

  private itemSeen(w: Work, roomId: string, item: string, action: 'appear' | 'vanish'): void {
    w.seen.push({ type: 'item', worldId: w.draft.world.id, roomId, characterId: null, name: null, item, action });
  }

  /** A script as sent: compiled before anything is written (400 naming the line); '' and null remove it. */
  private async script(input: string | null | undefined): Promise<string | null | undefined> {
    if (input === undefined) return undefined;
    if (input === null || input.trim() === '') return '';
    if (Buffer.byteLength(input) > WORLD_LIMITS.scriptBytes) throw new InvalidInput(`A script must be at most ${WORLD_LIMITS.scriptBytes} bytes (it has ${Buffer.byteLength(input)})`);
    const error = await this.checkScript(input);
    if (error) throw new InvalidInput(`The script does not compile${error.line === null ? '' : ` (line ${error.line})`}: ${error.message}`);
    return input;
  }

  private putNpc(w: Work, next: NpcWrite, action: string, before: Npc | null): Npc {
    const { row, npc } = w.draft.putNpc(next);
    this.record(w, action, 'npc', row.npcId, before && npcRecord(before), npc && npcRecord(npc));
    return npc ?? { ...before!, version: row.version };
  }

  private currentNpc(w: Work, npcId: string, expected: Expected): Npc {
    const npc = this.foundNpc(w.draft.world.id, w.draft.npc(npcId), npcId);
    this.checkVersion('NPC', npcId, npc.version, expected);
    return npc;
  }

  private foundNpc(worldId: string, npc: Npc | undefined, npcId: string): Npc {
    if (!npc) throw new NotFound(`NPC '${npcId}' not found in world '${worldId}'`);
    return npc;
  }

  /** An NPC as lists show it: no script, whether it has one. */
  private npcSummary(pkg: World, npc: Npc, standing: string, suspended: boolean): BuildNpcSummary {
    const { script, ...record } = npcRecord(npc);
    return {
      ...record,
      scripted: script !== null,
      script_file: npc.script?.file ?? null,
      script_suspended: suspended,
      standing_in: standing,
      origin: pkg.npcs.has(npc.id) ? 'package' : 'builder',
      changed: npc !== pkg.npcs.get(npc.id),
    };
  }

  private npcView(pkg: World, npc: Npc, standing: string, suspended: boolean): BuildNpc {
    return { ...this.npcSummary(pkg, npc, standing, suspended), script: npc.script?.source ?? null };
  }

  /** Whether a script is suspended, as the change leaves it: one this change saves is not (`change` clears its faults). */
  private async suspendedUnlessSaved(w: Work, owner: string): Promise<boolean> {
    return !w.scripts.has(owner) && (await this.repo.suspended(w.draft.world.id, [owner], w.trx)).size > 0;
  }

  /**
   * An NPC's name as players will read it (`bounded`), refused when it could pass for someone
   * else: a character of the world (as the game compares names), or the server and its staff
   * (a `[` tag as the game's own lines carry, a reserved word).
   */
  private async npcName(worldId: string, raw: string): Promise<string> {
    const name = bounded('NPC name', raw, WORLD_LIMITS.name);
    // An opening bracket or a look-alike of one (the skeleton maps them to `(`), or a square one anywhere.
    if (/^\p{Ps}/u.test(name) || nameSkeleton(name).startsWith('(') || /[[\]]/.test(name.normalize('NFKC'))) {
      throw new InvalidInput(`NPC name '${name}' must not start with a bracket nor contain [ or ]: the game tags its own lines that way ([YELL], [Staff announcement])`);
    }
    const staff = name.split(/[^\p{L}]+/u).map((word) => STAFF_WORDS.get(nameSkeleton(word))).find((word) => word !== undefined);
    if (staff !== undefined) throw new InvalidInput(`NPC name '${name}' must not contain the word '${staff}': an NPC may not pass for the server or its staff`);
    const character = await this.repo.characterNamedLike(worldId, name);
    if (character !== undefined) throw new Conflict(`NPC name '${name}' is too like the name of ${character}, a character of world '${worldId}': an NPC may not pass for a player`);
    return name;
  }

  /** Refuses one more NPC past the world's bound. */
  private npcToSpare(w: Work): void {
    const max = this.bounds.maxNpcsPerWorld;
    if (w.draft.world.npcs.size >= max) throw new Conflict(`World '${w.draft.world.id}' has ${max} NPCs, the most it may have ([building] max_npcs_per_world)`);
  }

  /** Refuses a room past the world's bound. */
  private roomToSpare(w: Work): void {
    const max = this.bounds.maxRoomsPerWorld;
    if (w.draft.roomCount() >= max) throw new Conflict(`World '${w.draft.world.id}' has ${max} rooms, the most it may have ([building] max_rooms_per_world)`);
  }

  /** Refuses one more item lying in a room past the room's bound. */
  private async itemToSpare(w: Work, roomId: string): Promise<void> {
    const max = this.bounds.maxItemsPerRoom;
    if ((await this.repo.countItemsIn(w.draft.world.id, roomId, w.trx)) >= max) throw new Conflict(`Room '${roomId}' holds ${max} items, the most one room may hold ([building] max_items_per_room)`);
  }

  /** The room at the version the builder read. */
  private current(w: Work, roomId: string, expected: Expected): Room {
    const room = this.draftRoom(w, roomId);
    this.checkVersion('Room', roomId, room.version, expected);
    return room;
  }

  private checkVersion(what: 'Room' | 'Item' | 'NPC', id: string, version: number, expected: Expected): number {
    if (expected !== 'current' && expected !== version) {
      throw new Conflict(`${what} '${id}' is at version ${version}, not ${expected} as sent; read it again`, { extra: { current_version: version } });
    }
    return version;
  }

  private found(world: World, room: Room | undefined, roomId: string): Room {
    if (!room) throw new NotFound(`Room '${roomId}' not found in world '${world.id}'`);
    return room;
  }

  private draftRoom(w: Work, roomId: string): Room {
    return this.found(w.draft.world, w.draft.room(roomId), roomId);
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

  /** An id from the name (`Lamplit Cellar` → `lamplit_cellar`), with a number when `taken`, even by something deleted. */
  private freshId(name: string, taken: (id: string) => boolean): string {
    const base =
      name
        .normalize('NFKD')
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 48) || 'unnamed';
    let id = base;
    for (let n = 2; taken(id); n++) id = `${base}_${n}`;
    return id;
  }

  private roomView(pkg: World, room: Room): BuildRoom {
    return { ...roomRecord(room), origin: pkg.rooms.has(room.id) ? 'package' : 'builder', changed: room !== pkg.rooms.get(room.id) };
  }

  /** A single room: with its items and whether its script is suspended. */
  private async roomWithItems(pkg: World, world: World, room: Room, runner: Db | Knex.Transaction, saved: ReadonlySet<string> = NOTHING_SAVED): Promise<BuildRoom> {
    const items = (await this.repo.itemsIn(world.id, room.id, runner)).map((i) => this.itemView(world, i));
    const owner = `room:${room.id}`;
    const suspended = !saved.has(owner) && (await this.repo.suspended(world.id, [owner], runner)).size > 0;
    return { ...this.roomView(pkg, room), items, script_suspended: suspended };
  }

  private itemView(world: World, item: ItemRow): BuildItem {
    return {
      id: item.id,
      item_id: item.itemId,
      name: itemName(world, item),
      description: itemDescription(world, item),
      room_id: item.roomId,
      held: item.characterId !== null,
      script: itemScript(world, item)?.source ?? null,
      version: item.version,
    };
  }
}

/** A room as the history and the API show it. */
function roomRecord(room: Room): { id: string; zone: string; name: string; description: string; exits: Record<string, string>; script: string | null; version: number } {
  return { id: room.id, zone: room.zoneId, name: room.name, description: room.description, exits: { ...room.exits }, script: room.script?.source ?? null, version: room.version };
}

function stored(room: Room): RoomWrite {
  return { roomId: room.id, zoneId: room.zoneId, name: room.name, description: room.description, exits: { ...room.exits }, deleted: false };
}

/** An NPC as the history and the API show it. */
function npcRecord(npc: Npc): { id: string; name: string; description: string; room_id: string; script: string | null; version: number } {
  return { id: npc.id, name: npc.name, description: npc.description, room_id: npc.roomId, script: npc.script?.source ?? null, version: npc.version };
}

function storedNpc(npc: Npc): NpcWrite {
  return { npcId: npc.id, name: npc.name, description: npc.description, roomId: npc.roomId, deleted: false };
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
