/**
 * A world as it now is: its read-only package with the builders' rooms and NPCs over it
 * (docs/decisions.md, "Building worlds"). A stored room or NPC wins over the package's of the
 * same id; a deleted one hides it.
 *
 * A LiveWorld is composed once, at start, and then patched with the rows each change wrote
 * (every row carries the world's revision at its change), so a change costs what it touched,
 * whatever the size of the world. A WorldDraft is one change in the making over a LiveWorld: it
 * holds the rooms the change writes, and checks only those against what the loader demands of a
 * package, so that a builder's change is refused before it could make the world unloadable.
 */
import type { StoredNpc, StoredRoom, StoredRows } from '../../db/repositories/build-repository.ts';
import { WORLD_LIMITS, type Npc, type Room, type Script, type World, type Zone } from './world-loader.ts';

/** An item row's own name (a builder's), else its package item's, else its id. */
export function itemName(world: World, item: { itemId: string; name?: string | null }): string {
  return item.name ?? world.items.get(item.itemId)?.name ?? item.itemId;
}

export function itemDescription(world: World, item: { itemId: string; description?: string | null }): string {
  return item.description ?? world.items.get(item.itemId)?.description ?? '';
}

/** Length in characters (code points), as the loader counts. */
const length = (text: string): number => [...text].length;

/** A stored `script` column as the script in force: null keeps the package's, '' has none. */
export function storedScript(stored: string | null, packaged: Script | null | undefined): Script | null {
  if (stored === null) return packaged ?? null;
  return stored === '' ? null : { source: stored, file: null };
}

/** An item row's script: its builder's, else its package item's. */
export function itemScript(world: World, item: { itemId: string; script?: string | null }): Script | null {
  return storedScript(item.script ?? null, world.items.get(item.itemId)?.script);
}

/** A stored row as the room players walk in; the package's seed items stay with its id. Null when it is gone. */
function roomOf(pkg: World, row: StoredRoom): Room | null {
  // A room of a zone the package no longer has is left out (a package changed under its builders' rooms).
  if (row.deleted || !pkg.zones.has(row.zoneId)) return null;
  return {
    id: row.roomId,
    zoneId: row.zoneId,
    name: row.name,
    description: row.description,
    exits: { ...row.exits } as Room['exits'],
    items: pkg.rooms.get(row.roomId)?.items ?? [],
    script: storedScript(row.script, pkg.rooms.get(row.roomId)?.script),
    version: row.version,
  };
}

/** A stored NPC row as the NPC; null when it is gone. */
function npcOf(pkg: World, row: StoredNpc): Npc | null {
  if (row.deleted) return null;
  return { id: row.npcId, name: row.name, description: row.description, roomId: row.roomId, script: storedScript(row.script, pkg.npcs.get(row.npcId)?.script), version: row.version };
}

/**
 * A zone of a live world. Its room list is the package's rooms in package order, then the
 * others by id, the same on every instance and after every restart; it is sorted when read
 * after a change, so a change costs nothing here.
 */
class LiveZone implements Zone {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly spawnRoom: string;
  private readonly packageOrder: ReadonlyMap<string, number>;
  private readonly members: Set<string>;
  private ordered: string[] | null = null;

  constructor(zone: Zone) {
    this.id = zone.id;
    this.name = zone.name;
    this.description = zone.description;
    this.spawnRoom = zone.spawnRoom;
    this.packageOrder = new Map(zone.roomIds.map((id, i) => [id, i]));
    this.members = new Set(zone.roomIds);
  }

  get roomIds(): string[] {
    this.ordered ??= [...this.members].sort((a, b) => {
      const pa = this.packageOrder.get(a) ?? Infinity;
      const pb = this.packageOrder.get(b) ?? Infinity;
      return pa !== pb ? pa - pb : a < b ? -1 : a > b ? 1 : 0;
    });
    return this.ordered;
  }

  add(roomId: string): void {
    if (this.members.has(roomId)) return;
    this.members.add(roomId);
    this.ordered = null;
  }

  remove(roomId: string): void {
    if (this.members.delete(roomId)) this.ordered = null;
  }
}

export class LiveWorld {
  readonly pkg: World;
  /** The world as it now is: its maps change in place as changes are applied. */
  readonly world: World;
  private readonly rooms: Map<string, Room>;
  private readonly zones: Map<string, LiveZone>;
  private readonly npcs: Map<string, Npc>;
  /** Every stored row by room id, tombstones included (a deleted room's id goes on counting versions). */
  private readonly stored = new Map<string, StoredRoom>();
  private readonly storedNpcs = new Map<string, StoredNpc>();
  /** Room id → the rooms with an exit into it. */
  private readonly incoming = new Map<string, Set<string>>();
  private applied = 0;

  constructor(pkg: World, rows: StoredRows = { rooms: [], npcs: [] }) {
    this.pkg = pkg;
    this.rooms = new Map(pkg.rooms);
    this.zones = new Map([...pkg.zones.values()].map((zone) => [zone.id, new LiveZone(zone)]));
    this.npcs = new Map(pkg.npcs);
    for (const room of this.rooms.values()) this.link(room);
    this.world = { ...pkg, rooms: this.rooms, zones: this.zones, npcs: this.npcs };
    for (const row of rows.rooms) this.place(row);
    for (const row of rows.npcs) this.placeNpc(row);
    for (const row of [...rows.rooms, ...rows.npcs]) this.applied = Math.max(this.applied, row.revision);
    // A package changed under its builders' rooms may leave exits to rooms that no longer exist.
    for (const id of [...this.rooms.keys()]) this.dropDangling(id);
  }

  /** The revision of the last change applied. */
  get revision(): number {
    return this.applied;
  }

  storedRow(roomId: string): StoredRoom | undefined {
    return this.stored.get(roomId);
  }

  storedNpc(npcId: string): StoredNpc | undefined {
    return this.storedNpcs.get(npcId);
  }

  /** The rooms with an exit into `roomId`. */
  roomsInto(roomId: string): ReadonlySet<string> {
    return this.incoming.get(roomId) ?? NONE;
  }

  /**
   * Applies rows read from the database. Only rows of revisions after the last one applied count:
   * a read that started earlier but lands later holds nothing newer than what is here already,
   * since each read brings every row written after the revision it asked from.
   */
  apply(rows: StoredRows): void {
    const rooms = rows.rooms.filter((row) => row.revision > this.applied);
    const npcs = rows.npcs.filter((row) => row.revision > this.applied);
    for (const row of rooms) this.place(row);
    for (const row of rooms) this.dropDangling(row.roomId);
    for (const row of npcs) this.placeNpc(row);
    for (const row of [...rooms, ...npcs]) this.applied = Math.max(this.applied, row.revision);
  }

  private placeNpc(row: StoredNpc): void {
    this.storedNpcs.set(row.npcId, row);
    const npc = npcOf(this.pkg, row);
    if (npc) this.npcs.set(npc.id, npc);
    else this.npcs.delete(row.npcId);
  }

  private place(row: StoredRoom): void {
    this.stored.set(row.roomId, row);
    const before = this.rooms.get(row.roomId);
    if (before) this.unlink(before);
    const room = roomOf(this.pkg, row);
    if (room) {
      this.rooms.set(room.id, room);
      this.link(room);
    } else this.rooms.delete(row.roomId);
  }

  private dropDangling(roomId: string): void {
    const room = this.rooms.get(roomId);
    if (!room) return;
    const exits = Object.entries(room.exits).filter(([, target]) => this.rooms.has(target));
    if (exits.length === Object.keys(room.exits).length) return;
    this.unlink(room);
    const kept = { ...room, exits: Object.fromEntries(exits) as Room['exits'] };
    this.rooms.set(roomId, kept);
    this.link(kept);
  }

  private link(room: Room): void {
    this.zones.get(room.zoneId)?.add(room.id);
    for (const target of Object.values(room.exits)) {
      let from = this.incoming.get(target);
      if (!from) this.incoming.set(target, (from = new Set()));
      from.add(room.id);
    }
  }

  private unlink(room: Room): void {
    this.zones.get(room.zoneId)?.remove(room.id);
    for (const target of Object.values(room.exits)) {
      const from = this.incoming.get(target);
      if (from?.delete(room.id) && from.size === 0) this.incoming.delete(target);
    }
  }
}

const NONE: ReadonlySet<string> = new Set();

/**
 * A room as a change writes it: whole, with the version and revision the draft gives it, and
 * its script column as it was unless the change names one.
 */
export type RoomWrite = Omit<StoredRoom, 'version' | 'revision' | 'script'> & { script?: string | null };
export type NpcWrite = Omit<StoredNpc, 'version' | 'revision' | 'script'> & { script?: string | null };

/** One change of a world in the making: the rooms and NPCs it writes, over the live world it started from. */
export class WorldDraft {
  private readonly live: LiveWorld;
  private readonly written = new Map<string, { row: StoredRoom; room: Room | null }>();
  private readonly writtenNpcs = new Map<string, { row: StoredNpc; npc: Npc | null }>();
  /** The revision this change's rows carry. */
  readonly revision: number;

  constructor(live: LiveWorld) {
    this.live = live;
    this.revision = live.revision + 1;
  }

  /** The world the change started from: its id, zones and spawn (a change moves rooms, never zones). */
  get world(): World {
    return this.live.world;
  }

  get pkg(): World {
    return this.live.pkg;
  }

  room(roomId: string): Room | undefined {
    const written = this.written.get(roomId);
    return written ? (written.room ?? undefined) : this.live.world.rooms.get(roomId);
  }

  /** Whether an id was ever used in the world: by a room, a deleted room, or the package. */
  taken(roomId: string): boolean {
    return this.written.has(roomId) || this.live.storedRow(roomId) !== undefined || this.live.world.rooms.has(roomId) || this.live.pkg.rooms.has(roomId);
  }

  /** Rooms the world has with this change. */
  roomCount(): number {
    let count = this.live.world.rooms.size;
    for (const [id, { room }] of this.written) count += (room ? 1 : 0) - (this.live.world.rooms.has(id) ? 1 : 0);
    return count;
  }

  /** The rooms with an exit into `roomId` with this change. */
  roomsInto(roomId: string): Room[] {
    const from = new Set(this.live.roomsInto(roomId));
    for (const [id, { room }] of this.written) if (room && Object.values(room.exits).includes(roomId)) from.add(id);
    return [...from].map((id) => this.room(id)).filter((room): room is Room => room !== undefined && Object.values(room.exits).includes(roomId));
  }

  /** The last version of a room id: its stored row's (a deleted room's tombstone counts), else 1 for a package room, else 0. */
  lastVersion(roomId: string): number {
    return this.written.get(roomId)?.row.version ?? this.live.storedRow(roomId)?.version ?? (this.live.pkg.rooms.has(roomId) ? 1 : 0);
  }

  /**
   * Writes a room whole, one version above the last (a deleted room's id, used again, goes on
   * counting, so no write read before can apply): the room as it now reads, null once deleted.
   */
  put(next: RoomWrite): { row: StoredRoom; room: Room | null } {
    const script = next.script !== undefined ? next.script : (this.written.get(next.roomId)?.row.script ?? this.live.storedRow(next.roomId)?.script ?? null);
    const row: StoredRoom = { ...next, script, version: this.lastVersion(next.roomId) + 1, revision: this.revision };
    const written = { row, room: roomOf(this.live.pkg, row) };
    this.written.set(row.roomId, written);
    return written;
  }

  npc(npcId: string): Npc | undefined {
    const written = this.writtenNpcs.get(npcId);
    return written ? (written.npc ?? undefined) : this.live.world.npcs.get(npcId);
  }

  /** The NPCs whose home is `roomId`, with this change. */
  npcsAt(roomId: string): Npc[] {
    const ids = new Set([...this.live.world.npcs.keys(), ...this.writtenNpcs.keys()]);
    return [...ids].map((id) => this.npc(id)).filter((npc): npc is Npc => npc?.roomId === roomId);
  }

  /** Whether an NPC id was ever used in the world. */
  npcTaken(npcId: string): boolean {
    return this.writtenNpcs.has(npcId) || this.live.storedNpc(npcId) !== undefined || this.live.pkg.npcs.has(npcId);
  }

  lastNpcVersion(npcId: string): number {
    return this.writtenNpcs.get(npcId)?.row.version ?? this.live.storedNpc(npcId)?.version ?? (this.live.pkg.npcs.has(npcId) ? 1 : 0);
  }

  /** Writes an NPC whole, one version above the last, as `put` writes a room. */
  putNpc(next: NpcWrite): { row: StoredNpc; npc: Npc | null } {
    const script = next.script !== undefined ? next.script : (this.writtenNpcs.get(next.npcId)?.row.script ?? this.live.storedNpc(next.npcId)?.script ?? null);
    const row: StoredNpc = { ...next, script, version: this.lastNpcVersion(next.npcId) + 1, revision: this.revision };
    const written = { row, npc: npcOf(this.live.pkg, row) };
    this.writtenNpcs.set(row.npcId, written);
    return written;
  }

  /** The rows to store. */
  rows(): StoredRows {
    return { rooms: [...this.written.values()].map(({ row }) => row), npcs: [...this.writtenNpcs.values()].map(({ row }) => row) };
  }

  /**
   * What the change would break, one message per problem (none: the world still loads): an exit
   * to no room, an NPC without its home room, a name or description out of bounds, a zone or the
   * world without its spawn room. Only what the change wrote is looked at, and the spawn rooms.
   */
  problems(): string[] {
    const problems: string[] = [];
    for (const [id, { room }] of this.written) {
      if (!room) {
        for (const from of this.roomsInto(id)) problems.push(`room '${from.id}' has an exit to '${id}', which is gone`);
        for (const npc of this.npcsAt(id)) problems.push(`NPC '${npc.id}' lives in room '${id}', which is gone`);
        continue;
      }
      for (const [direction, target] of Object.entries(room.exits)) {
        if (!this.room(target)) problems.push(`room '${id}' exit ${direction} leads to unknown room '${target}'`);
      }
      if (length(room.name) > WORLD_LIMITS.name || length(room.description) > WORLD_LIMITS.description) problems.push(`room '${id}' has a name or description out of bounds`);
    }
    for (const [id, { npc }] of this.writtenNpcs) {
      if (!npc) continue;
      if (!this.room(npc.roomId)) problems.push(`NPC '${id}' lives in unknown room '${npc.roomId}'`);
      if (length(npc.name) > WORLD_LIMITS.name || length(npc.description) > WORLD_LIMITS.description) problems.push(`NPC '${id}' has a name or description out of bounds`);
    }
    for (const zone of this.world.zones.values()) {
      if (this.room(zone.spawnRoom)?.zoneId !== zone.id) problems.push(`zone '${zone.id}' lost its spawn room '${zone.spawnRoom}'`);
    }
    const spawn = this.world.defaultSpawn;
    if (this.room(spawn.room)?.zoneId !== spawn.zone) problems.push(`the default spawn room '${spawn.room}' is missing`);
    return problems;
  }
}

/** Rooms no walk from the default spawn reaches (exits followed as they lead). */
export function unreachableRooms(world: World): string[] {
  const reached = new Set([world.defaultSpawn.room]);
  const queue = [world.defaultSpawn.room];
  for (let next = 0; next < queue.length; next++) {
    for (const target of Object.values(world.rooms.get(queue[next]!)?.exits ?? {})) {
      if (!reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  return [...world.rooms.keys()].filter((id) => !reached.has(id));
}
