/**
 * Per-instance memory of what polls and `look` read most: each world's active characters (and
 * their rooms), each room's items, each character's inventory. Like the session cache
 * (docs/decisions.md, "The hot path"), entries are only ever dropped by bus events, this
 * instance's at commit and other instances' as they arrive: presence and moves drop their
 * world's active list, items taken or dropped drop the room and the character. An active list
 * also lapses when the first of its sessions could expire. Nothing is served from memory while
 * the bus may miss events; everything is forgotten when it listens again. Writes (take, drop)
 * read the database themselves.
 */
import { fromDbTime } from '../../db/clock.ts';
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { ActiveCharacter, GameRepository, ItemInstance } from '../../db/repositories/game-repository.ts';

interface Entry<T> {
  value: T;
  /** Epoch milliseconds from which the value may be wrong without any event (null: never). */
  validUntil: number | null;
}

export class GameStateCache {
  private readonly bus: EventBus;
  private readonly repo: GameRepository;
  private readonly active = new Map<string, Entry<ActiveCharacter[]>>();
  private readonly roomItems = new Map<string, Entry<ItemInstance[]>>();
  private readonly inventories = new Map<number, Entry<ItemInstance[]>>();
  /** activeNames by the list they were taken from, so a list read once is named once. */
  private readonly names = new WeakMap<ActiveCharacter[], readonly string[]>();
  /** Counts invalidations: a value read before one may be stale and is not remembered. */
  private generation = 0;

  constructor(bus: EventBus, repo: GameRepository) {
    this.bus = bus;
    this.repo = repo;
    const invalidate = (event: BusEvent): void => this.invalidate(event);
    bus.subscribe(invalidate);
    bus.onCommitted(invalidate);
  }

  /** The world's active characters, sorted by name (GameRepository.activeCharacters). */
  activeCharacters(worldId: string, now: Date): Promise<ActiveCharacter[]> {
    return this.remembered(this.active, worldId, now, async () => {
      const list = await this.repo.activeCharacters(worldId, now);
      const ends = list.flatMap((c) => (c.expiresAt === null ? [] : [fromDbTime(c.expiresAt).getTime()]));
      return { value: list, validUntil: ends.length > 0 ? Math.min(...ends) : null };
    });
  }

  /** The names of activeCharacters, in order: the same array until the list changes. */
  async activeNames(worldId: string, now: Date): Promise<readonly string[]> {
    const list = await this.activeCharacters(worldId, now);
    let names = this.names.get(list);
    if (!names) this.names.set(list, (names = Object.freeze(list.map((c) => c.name))));
    return names;
  }

  async activeInRoom(worldId: string, roomId: string, now: Date): Promise<ActiveCharacter[]> {
    return (await this.activeCharacters(worldId, now)).filter((c) => c.roomId === roomId);
  }

  roomItemsOf(worldId: string, roomId: string, now: Date): Promise<ItemInstance[]> {
    return this.remembered(this.roomItems, `${worldId}\n${roomId}`, now, async () => ({ value: await this.repo.roomItems(worldId, roomId), validUntil: null }));
  }

  inventory(characterId: number, now: Date): Promise<ItemInstance[]> {
    return this.remembered(this.inventories, characterId, now, async () => ({ value: await this.repo.inventory(characterId), validUntil: null }));
  }

  private async remembered<K, T>(map: Map<K, Entry<T>>, key: K, now: Date, load: () => Promise<Entry<T>>): Promise<T> {
    const known = map.get(key);
    if (known && this.bus.connected() && (known.validUntil === null || now.getTime() < known.validUntil)) return known.value;
    const version = this.generation;
    const entry = await load();
    if (version === this.generation && this.bus.connected()) map.set(key, entry);
    else map.delete(key);
    return entry.value;
  }

  private invalidate(event: BusEvent): void {
    switch (event.type) {
      case 'presence':
      case 'move':
        this.generation++;
        this.active.delete(event.worldId);
        return;
      case 'item':
        this.generation++;
        this.roomItems.delete(`${event.worldId}\n${event.roomId}`);
        this.inventories.delete(event.characterId);
        return;
      case 'reconnected':
        this.generation++;
        this.active.clear();
        this.roomItems.clear();
        this.inventories.clear();
        return;
      default:
        return;
    }
  }
}
