/**
 * What every verb works with: the world an actor is in, the room it stands in shown as text and
 * as data, moving, the items of rooms and inventories, the world's characters, and chat stored
 * and announced. Reads that polls repeat come from the game state cache; writes go to the
 * database, then are announced on the event bus once they committed, for the live event streams
 * of every instance. The verbs themselves (src/services/game/verbs/) hold the game's rules and
 * texts (docs/decisions.md, "The game").
 */
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import type { ActiveCharacter, ChatReader, ChatRow, GameRepository, ItemInstance, MessageChannel, NewChatMessage } from '../../db/repositories/game-repository.ts';
import type { EventBus, MoveCause, ScriptCause } from '../../db/event-bus.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { Direction, Room, World } from '../worlds/world-loader.ts';
import { itemName } from '../worlds/world-overlay.ts';
import { resolveName, type Resolved } from '../../shared/name-match.ts';
import { ChatMechanics, type ChatDependencies } from './chat-mechanics.ts';
import { ok, type Actor, type CommandResult, type RoomData } from './command-table.ts';
import { GameStateCache } from './game-state-cache.ts';
import type { NpcPlaces } from './npc-places.ts';

type Schemas = components['schemas'];

/** A character of a world as a verb names it. */
export interface NamedCharacter {
  id: number;
  name: string;
  roomId: string | null;
}

/** How a link-dead character shows in lists (docs/decisions.md, "Presence means connected"). */
export const LINKDEAD = 'link-dead';
/** A character as lists show it: its name, marked while its player is away. */
export const listed = (c: ActiveCharacter): string => (c.linkdead ? `${c.name} (${LINKDEAD})` : c.name);

/**
 * Entries of a room's item or character list that `look` names, and its data carries; the rest
 * are counted. A room's text, and so its `room` event, stays bounded however much lies or stands
 * there.
 */
export const LOOK_LIST_MAX = 50;
/** Rows of chat this instance wrote that it keeps for its streams: far more than are ever in flight. */
const WRITTEN_KEPT = 1000;

/** `  - entry` lines, at most LOOK_LIST_MAX of them, then `  (and 1,150 more)`. */
function listLines(names: readonly string[], total: number): string {
  const shown = names.map((name) => `  - ${name}\n`).join('');
  const more = total - names.length;
  return more > 0 ? `${shown}  (and ${more.toLocaleString('en-US')} more)\n` : shown;
}

/** A room's exits with the names of the rooms they lead to. */
function exitsOf(world: World, room: Room): RoomData['exits'] {
  return Object.entries(room.exits).map(([direction, to]) => ({ direction: direction as Direction, to, name: world.rooms.get(to)?.name ?? 'Unknown' }));
}

/** A room's exits as `look` and `exits` list them: `  - north: Ropewalk Bridge`. */
export function exitLines(world: World, room: Room): string {
  return exitsOf(world, room).map((e) => `  - ${e.direction}: ${e.name}\n`).join('');
}

/**
 * Whether a reader is shown a message: whispers and tells only to their sender and recipient,
 * and nothing from a character its account ignores (GameRepository.recentMessages reads by the
 * same rule). The event streams and GET /chat show chat by it.
 */
export function readable(row: ChatRow, reader: ChatReader): boolean {
  if (row.recipientId !== null && row.recipientId !== reader.characterId && row.senderId !== reader.characterId) return false;
  return row.senderId === null || reader.ignored.size === 0 || !reader.ignored.has(row.senderId);
}

/** One message as GET /chat and the `chat` event show it. */
export function chatMessage(r: ChatRow): Schemas['ChatMessage'] {
  const message: Schemas['ChatMessage'] = { id: r.id, sender: r.sender, text: r.text, channel: r.channel, recipient: r.recipient, created_at: r.createdAt };
  return r.speaker === 'character' ? message : { ...message, speaker: r.speaker };
}

export class GameCore {
  readonly repo: GameRepository;
  readonly worlds: WorldCatalog;
  readonly clock: Clock;
  readonly bus: EventBus;
  readonly state: GameStateCache;
  readonly mechanics: ChatMechanics;
  /** Where the NPCs stand. */
  readonly npcs: NpcPlaces;
  /** The most items a drop leaves lying in one room ([building] max_items_per_room). */
  readonly maxItemsPerRoom: number;
  /** Chat this instance wrote lately, by id, so its own event streams need not read it back (see chatRows). */
  private readonly written = new Map<number, ChatRow>();

  /** `idleMs`: how long a request keeps its character connected ([presence] idle_seconds). */
  constructor(d: { repo: GameRepository; worlds: WorldCatalog; clock: Clock; bus: EventBus; npcs: NpcPlaces; idleMs: number; maxItemsPerRoom: number; chat: ChatDependencies | null }) {
    this.repo = d.repo;
    this.npcs = d.npcs;
    this.worlds = d.worlds;
    this.clock = d.clock;
    this.bus = d.bus;
    this.maxItemsPerRoom = d.maxItemsPerRoom;
    this.state = new GameStateCache(d.bus, d.repo, d.idleMs);
    this.mechanics = new ChatMechanics(d.chat, d.repo, d.clock, (actor) => this.world(actor));
  }

  /** Places each world's items in their rooms, once per database. */
  async seedItems(): Promise<void> {
    for (const world of this.worlds.list()) {
      const placements = [...world.rooms.values()].flatMap((room) => room.items.map((itemId) => ({ roomId: room.id, itemId })));
      await this.repo.seedWorldItems(world.id, placements, this.clock());
    }
  }

  world(actor: Actor): World {
    const world = this.worlds.get(actor.worldId);
    if (!world) throw new Error(`World '${actor.worldId}' of character ${actor.characterId} is not loaded`);
    return world;
  }

  /**
   * A room as the actor sees it: `look`'s text and the same room as data (the actor itself not
   * among its characters). Null when the room is not in the actor's world.
   */
  async showRoom(actor: Actor, roomId: string): Promise<{ look: string; room: RoomData } | null> {
    const world = this.world(actor);
    const room = world.rooms.get(roomId);
    if (!room) return null;
    const now = this.clock();
    const [items, present, npcs] = await Promise.all([this.state.roomItemsOf(world.id, roomId, now), this.state.activeInRoom(world.id, roomId, now), this.npcs.inRoom(world.id, roomId)]);
    const others = present.filter((p) => p.id !== actor.characterId);
    const itemNames = items.slice(0, LOOK_LIST_MAX).map((i) => itemName(world, i));
    const shownOthers = others.slice(0, LOOK_LIST_MAX);
    let look = `\n=== ${room.name} ===\n${room.description}\n`;
    if (items.length > 0) look += `\n[Items here]:\n${listLines(itemNames, items.length)}`;
    if (others.length > 0) look += `\n[Players here]:\n${listLines(shownOthers.map(listed), others.length)}`;
    const shownNpcs = npcs.slice(0, LOOK_LIST_MAX);
    if (npcs.length > 0) look += `\n[Also here]:\n${listLines(shownNpcs.map((npc) => npc.name), npcs.length)}`;
    const exits = exitLines(world, room);
    if (exits !== '') look += `\n[Exits]:\n${exits}`;
    return {
      look,
      room: {
        id: room.id,
        name: room.name,
        description: room.description,
        exits: exitsOf(world, room),
        items: itemNames.map((name) => ({ name })),
        more_items: items.length - itemNames.length,
        characters: shownOthers.map((c) => ({ name: c.name, linkdead: c.linkdead })),
        more_characters: others.length - shownOthers.length,
        npcs: shownNpcs.map((npc) => ({ id: npc.id, name: npc.name })),
        more_npcs: npcs.length - shownNpcs.length,
      },
    };
  }

  /** Moves the actor to `to` and answers with `lead` and the room it arrives in. */
  async moveTo(actor: Actor, to: string, direction: Direction | null, cause: MoveCause, lead: string): Promise<CommandResult> {
    await this.repo.setRoom(actor.characterId, to, this.clock());
    await this.bus.publish({ type: 'move', worldId: actor.worldId, characterId: actor.characterId, name: actor.name, from: actor.roomId, to, direction, cause });
    const shown = await this.showRoom({ ...actor, roomId: to }, to);
    return shown ? ok(`${lead}\n${shown.look}`, shown.room) : ok(lead);
  }

  /** The world's characters in its lists, sorted by name (link-dead ones marked). */
  present(worldId: string): Promise<readonly ActiveCharacter[]> {
    return this.state.activeCharacters(worldId, this.clock());
  }

  /**
   * The character of the world a typed name means (docs/decisions.md, "Names as players type
   * them"): its whole name in any letter case, wherever it is; else the one name that starts so
   * (or has a word that does), looked for among the characters standing in `roomId` when given,
   * then those in the world's lists, then all the world's characters.
   */
  async characterNamed(worldId: string, typed: string, roomId?: string): Promise<Resolved<NamedCharacter>> {
    const exact = await this.repo.findInWorldByName(worldId, typed);
    return exact ? { found: exact } : this.characterStarting(worldId, typed, roomId);
  }

  private async characterStarting(worldId: string, typed: string, roomId: string | undefined): Promise<Resolved<NamedCharacter>> {
    const present = await this.present(worldId);
    for (const among of roomId === undefined ? [present] : [present.filter((c) => c.roomId === roomId), present]) {
      const resolved = resolveName(among, (c) => c.name, typed);
      if (resolved) return resolved;
    }
    return resolveName(await this.repo.charactersNamedLike(worldId, typed), (c) => c.name, typed);
  }

  /** The character a typed name means when it means exactly one (characterNamed). */
  async findInWorld(worldId: string, typed: string): Promise<NamedCharacter | undefined> {
    const resolved = await this.characterNamed(worldId, typed);
    return resolved && 'found' in resolved ? resolved.found : undefined;
  }

  /**
   * Splits `<name> <rest>`, where names have several words and may be typed in part: the
   * longest leading run of (up to four) words that is a whole name of the world's characters
   * is the name; else the shortest run that starts exactly one name (as characterNamed, with
   * `roomId` as there), so that `tell het see you` is for Hettie Webb. `target` is what the
   * name means: a character, the names a run could mean when none means one, or nothing (then
   * the first word is the name).
   */
  async namedTarget(worldId: string, args: string, roomId?: string): Promise<{ targetName: string; text: string; target: Resolved<NamedCharacter> }> {
    const words = Math.min(args.split(/\s+/).length, 4);
    const runs = Array.from({ length: words }, (_, i) => {
      const m = new RegExp(`^(\\S+(?:\\s+\\S+){${i}})\\s*(.*)$`, 's').exec(args)!;
      return { targetName: m[1]!, text: m[2]! };
    });
    for (const run of [...runs].reverse()) {
      const exact = await this.repo.findInWorldByName(worldId, run.targetName);
      if (exact) return { ...run, target: { found: exact } };
    }
    let unclear: { targetName: string; text: string; target: Resolved<NamedCharacter> } | null = null;
    for (const run of runs) {
      const target = await this.characterStarting(worldId, run.targetName, roomId);
      if (target && 'found' in target) return { ...run, target };
      unclear ??= target && { ...run, target };
    }
    return unclear ?? { ...runs[0]!, target: null };
  }

  /**
   * The item of `items` a typed name means, with its name as the world shows it now (builders
   * may rename items): as characterNamed, the whole name in any case, else the one name that
   * starts so or has a word that does.
   */
  itemNamed(world: World, items: readonly ItemInstance[], typed: string): Resolved<{ item: ItemInstance; name: string }> {
    return resolveName(items.map((item) => ({ item, name: itemName(world, item) })), (i) => i.name, typed);
  }

  itemsLyingIn(worldId: string, roomId: string): Promise<readonly ItemInstance[]> {
    return this.state.roomItemsOf(worldId, roomId, this.clock());
  }

  carried(characterId: number): Promise<readonly ItemInstance[]> {
    return this.state.inventory(characterId, this.clock());
  }

  async inventoryText(actor: Actor): Promise<string> {
    const world = this.world(actor);
    const held = await this.carried(actor.characterId);
    if (held.length === 0) return 'Your inventory is empty.';
    return `Your inventory:\n${held.map((i) => `  - ${itemName(world, i)}\n`).join('')}`;
  }

  message(actor: Actor, roomId: string, channel: MessageChannel, text: string, recipient: number | null = null): NewChatMessage {
    return {
      worldId: actor.worldId,
      roomId,
      characterId: actor.characterId,
      senderName: actor.name,
      channel,
      recipientCharacterId: recipient,
      message: text,
      createdAt: toDbTime(this.clock()),
    };
  }

  /**
   * Stores chat, then announces it by id: other instances read the rows back, this one keeps
   * them (`recipient` names a whisper's or tell's target; `worldWide` for WORLD_CHANNELS;
   * `cause`, for what a script said: which happening it belongs to).
   */
  async post(actor: Pick<Actor, 'worldId'>, messages: NewChatMessage[], recipient: string | null = null, worldWide = false, cause?: ScriptCause): Promise<void> {
    const messageIds = await this.repo.insertMessages(messages);
    // Ids grow in the order the rows were inserted, whatever order RETURNING lists them in.
    const ids = [...messageIds].sort((a, b) => a - b);
    messages.forEach((m, i) => this.remember({
      id: ids[i]!,
      roomId: m.roomId,
      senderId: m.characterId,
      recipientId: m.recipientCharacterId,
      sender: m.senderName,
      text: m.message,
      channel: m.channel,
      recipient,
      createdAt: m.createdAt,
      speaker: m.speaker ?? 'character',
      npcId: m.npcId ?? null,
    }));
    const roomIds = worldWide ? [] : [...new Set(messages.map((m) => m.roomId))];
    await this.bus.publish({ type: 'chat', worldId: actor.worldId, roomIds, messageIds, ...(worldWide ? { worldWide: true as const } : {}), ...(cause ? { cause } : {}) });
  }

  private remember(row: ChatRow): void {
    this.written.set(row.id, row);
    if (this.written.size > WRITTEN_KEPT) this.written.delete(this.written.keys().next().value!);
  }

  /**
   * Chat rows by id, in id order, as the event streams deliver them: those this instance wrote
   * lately from memory (a say in a busy world would otherwise cost a second query), the rest
   * from the database.
   */
  async chatRows(ids: readonly number[]): Promise<ChatRow[]> {
    const known = ids.map((id) => this.written.get(id));
    if (known.every((row) => row !== undefined)) return [...(known as ChatRow[])].sort((a, b) => a.id - b.id);
    return this.repo.messagesByIds(ids);
  }
}
