/**
 * Per-instance memory of what polls and `look` read most: each world's active characters (and
 * their rooms), each room's items, each character's inventory. Like the session cache
 * (docs/decisions.md, "The hot path"), entries change only through bus events, this instance's at
 * commit and other instances' as they arrive. A walk or recall moves the character within its
 * world's remembered list (and room index), so a move costs the same however many play; presence
 * (a character coming online or going offline) and connection (a character getting or losing its
 * streams, or requesting again after an idle gap) drop the world's list, which the next read loads
 * again. Items taken or dropped drop the room and the character; a builders' change
 * (`world.changed`) drops the rooms and holders whose items it names. An active list also lapses when
 * the first of its sessions could expire, or a character connected by its requests alone turns
 * link-dead (docs/decisions.md, "Presence means connected"). Nothing is served from memory while
 * the bus may miss events; everything is forgotten when it listens again. Writes (take, drop) read
 * the database themselves.
 */
import { fromDbTime } from '../../db/clock.ts';
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { ActiveCharacter, GameRepository, ItemInstance } from '../../db/repositories/game-repository.ts';

interface Entry<T> {
  value: T;
  /** Epoch milliseconds from which the value may be wrong without any event (null: never). */
  validUntil: number | null;
}

/** A world's active characters, sorted by name, with the same characters by id and by room. */
class ActiveWorld {
  readonly list: ActiveCharacter[];
  private readonly byId = new Map<number, ActiveCharacter>();
  private readonly byRoom = new Map<string | null, ActiveCharacter[]>();

  constructor(list: ActiveCharacter[]) {
    this.list = list;
    for (const c of list) {
      this.byId.set(c.id, c);
      this.roomList(c.roomId).push(c);
    }
  }

  inRoom(roomId: string): readonly ActiveCharacter[] {
    return this.byRoom.get(roomId) ?? [];
  }

  /** Moves a listed character to `to`, keeping its new room sorted by name; false when it is not listed. */
  move(characterId: number, to: string | null): boolean {
    const c = this.byId.get(characterId);
    if (!c) return false;
    const from = this.roomList(c.roomId);
    from.splice(from.indexOf(c), 1);
    if (from.length === 0) this.byRoom.delete(c.roomId);
    c.roomId = to;
    const into = this.roomList(to);
    let at = into.length;
    while (at > 0 && into[at - 1]!.name > c.name) at--;
    into.splice(at, 0, c);
    return true;
  }

  private roomList(roomId: string | null): ActiveCharacter[] {
    let list = this.byRoom.get(roomId);
    if (!list) this.byRoom.set(roomId, (list = []));
    return list;
  }
}

/** A load of a world's active list in flight, and what happened meanwhile. */
interface ActiveLoad {
  /** Walks and recalls heard during the load, replayed onto its result. */
  moves: Array<[characterId: number, to: string | null]>;
  /** Someone came or went during the load: its result may miss them and is not remembered. */
  stale: boolean;
}

export class GameStateCache {
  private readonly bus: EventBus;
  private readonly repo: GameRepository;
  private readonly active = new Map<string, Entry<ActiveWorld>>();
  /** One load per world at a time: after a drop, every poll of a crowded world awaits the same one. */
  private readonly activeLoads = new Map<string, { load: ActiveLoad; promise: Promise<ActiveWorld> }>();
  private readonly roomItems = new Map<string, Entry<ItemInstance[]>>();
  private readonly inventories = new Map<number, Entry<ItemInstance[]>>();
  /** activeNames by the list they were taken from, so a list read once is named once. */
  private readonly names = new WeakMap<readonly ActiveCharacter[], readonly string[]>();
  /** linkdeadNames likewise. */
  private readonly linkdeadNamesByList = new WeakMap<readonly ActiveCharacter[], readonly string[]>();
  /** Item loads in flight, by `room:`/`inventory:` key: one per key, and not remembered when its room or holder changed meanwhile. */
  private readonly itemLoads = new Map<string, { load: { stale: boolean }; promise: Promise<ItemInstance[]> }>();

  private readonly idleMs: number;

  /** `idleMs`: how long a request keeps a character connected ([presence] idle_seconds). */
  constructor(bus: EventBus, repo: GameRepository, idleMs: number) {
    this.bus = bus;
    this.repo = repo;
    this.idleMs = idleMs;
    const invalidate = (event: BusEvent): void => this.invalidate(event);
    bus.subscribe(invalidate);
    bus.onCommitted(invalidate);
  }

  /**
   * The world's active list from memory, or loaded. Moves heard while it loads are replayed
   * onto it, since in a busy world some always are: discarding such a load would reload every
   * active character on every read.
   */
  private activeWorld(worldId: string, now: Date): Promise<ActiveWorld> {
    const known = this.active.get(worldId);
    if (known && this.fresh(known, now)) return Promise.resolve(known.value);
    const inFlight = this.activeLoads.get(worldId);
    if (inFlight) return inFlight.promise;
    const load: ActiveLoad = { moves: [], stale: !this.bus.connected() };
    const promise = this.loadActive(worldId, now, load).finally(() => this.activeLoads.delete(worldId));
    this.activeLoads.set(worldId, { load, promise });
    return promise;
  }

  private async loadActive(worldId: string, now: Date, load: ActiveLoad): Promise<ActiveWorld> {
    const list = await this.repo.activeCharacters(worldId, now, new Date(now.getTime() - this.idleMs));
    let validUntil: number | null = null;
    const until = (end: number): void => {
      if (validUntil === null || end < validUntil) validUntil = end;
    };
    for (const c of list) {
      if (c.expiresAt !== null) until(fromDbTime(c.expiresAt).getTime());
      // Connected by a request only: link-dead once it is idle_seconds old, without any event.
      // (A stream's lease lapsing, which only an instance's death leaves to time, is not
      // watched: the link-dead sweep tells of it.)
      if (!c.linkdead && !c.streaming && c.activeAt !== null) {
        const idleAt = fromDbTime(c.activeAt).getTime() + this.idleMs;
        if (idleAt > now.getTime()) until(idleAt);
      }
    }
    const world = new ActiveWorld(list);
    for (const [characterId, to] of load.moves) if (!world.move(characterId, to)) load.stale = true;
    if (!load.stale && this.bus.connected()) this.active.set(worldId, { value: world, validUntil });
    return world;
  }

  /** How long a request keeps a character connected ([presence] idle_seconds). */
  get idleWindowMs(): number {
    return this.idleMs;
  }

  /** The world's active characters, sorted by name (GameRepository.activeCharacters). */
  async activeCharacters(worldId: string, now: Date): Promise<readonly ActiveCharacter[]> {
    return (await this.activeWorld(worldId, now)).list;
  }

  /** The names of activeCharacters, in order: the same array until the list changes. */
  async activeNames(worldId: string, now: Date): Promise<readonly string[]> {
    return this.namesOf(await this.activeCharacters(worldId, now));
  }

  /** The names of the world's link-dead characters, in order: the same array until the list changes. */
  async linkdeadNames(worldId: string, now: Date): Promise<readonly string[]> {
    const list = await this.activeCharacters(worldId, now);
    let names = this.linkdeadNamesByList.get(list);
    if (!names) this.linkdeadNamesByList.set(list, (names = Object.freeze(list.filter((c) => c.linkdead).map((c) => c.name))));
    return names;
  }

  /** The names of a list activeCharacters gave, in order: the same array until the list changes. */
  namesOf(list: readonly ActiveCharacter[]): readonly string[] {
    let names = this.names.get(list);
    if (!names) this.names.set(list, (names = Object.freeze(list.map((c) => c.name))));
    return names;
  }

  /** The active characters in a room, sorted by name. */
  async activeInRoom(worldId: string, roomId: string, now: Date): Promise<readonly ActiveCharacter[]> {
    return (await this.activeWorld(worldId, now)).inRoom(roomId);
  }

  roomItemsOf(worldId: string, roomId: string, now: Date): Promise<ItemInstance[]> {
    const key = `${worldId}\n${roomId}`;
    return this.rememberedItems(this.roomItems, key, `room:${key}`, now, () => this.repo.roomItems(worldId, roomId));
  }

  inventory(characterId: number, now: Date): Promise<ItemInstance[]> {
    return this.rememberedItems(this.inventories, characterId, `inventory:${characterId}`, now, () => this.repo.inventory(characterId));
  }

  private fresh<T>(entry: Entry<T>, now: Date): boolean {
    return this.bus.connected() && (entry.validUntil === null || now.getTime() < entry.validUntil);
  }

  private rememberedItems<K>(map: Map<K, Entry<ItemInstance[]>>, key: K, loadKey: string, now: Date, read: () => Promise<ItemInstance[]>): Promise<ItemInstance[]> {
    const known = map.get(key);
    if (known && this.fresh(known, now)) return Promise.resolve(known.value);
    const inFlight = this.itemLoads.get(loadKey);
    if (inFlight) return inFlight.promise;
    const load = { stale: !this.bus.connected() };
    const promise = read()
      .then((value) => {
        if (!load.stale && this.bus.connected()) map.set(key, { value, validUntil: null });
        return value;
      })
      .finally(() => this.itemLoads.delete(loadKey));
    this.itemLoads.set(loadKey, { load, promise });
    return promise;
  }

  private invalidate(event: BusEvent): void {
    switch (event.type) {
      case 'move': {
        // A walk or recall moves a listed character; arrivals and departures come with presence.
        if (event.cause === 'walk' || event.cause === 'recall') {
          this.activeLoads.get(event.worldId)?.load.moves.push([event.characterId, event.to]);
          const known = this.active.get(event.worldId)?.value;
          if (!known || known.move(event.characterId, event.to)) return;
        }
        this.dropActive(event.worldId);
        return;
      }
      case 'presence':
      case 'connection':
        this.dropActive(event.worldId);
        return;
      case 'item':
        this.dropItems([`${event.worldId}\n${event.roomId}`], event.characterId === null ? [] : [event.characterId]);
        return;
      case 'world.changed':
        // Builders created, changed, moved or deleted items there.
        this.dropItems(event.itemRoomIds.map((roomId) => `${event.worldId}\n${roomId}`), event.characterIds);
        return;
      case 'reconnected':
        for (const { load } of this.activeLoads.values()) load.stale = true;
        for (const { load } of this.itemLoads.values()) load.stale = true;
        this.active.clear();
        this.roomItems.clear();
        this.inventories.clear();
        return;
      default:
        return;
    }
  }

  private dropItems(rooms: readonly string[], characterIds: readonly number[]): void {
    for (const room of rooms) this.roomItems.delete(room);
    for (const id of characterIds) this.inventories.delete(id);
    for (const loadKey of [...rooms.map((room) => `room:${room}`), ...characterIds.map((id) => `inventory:${id}`)]) {
      const loading = this.itemLoads.get(loadKey);
      if (loading) loading.load.stale = true;
    }
  }

  private dropActive(worldId: string): void {
    this.active.delete(worldId);
    const loading = this.activeLoads.get(worldId);
    if (loading) loading.load.stale = true;
  }
}
