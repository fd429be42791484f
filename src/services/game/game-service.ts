/**
 * The game: one text command per request, looked up in the command table (movement, look,
 * inventory, get/drop, say/yell/whisper, recall, who, help, and the social verbs of
 * social-commands.ts), plus status and room chat. Texts
 * follow the reference server with the changes in docs/decisions.md ("The game"): items are
 * real objects, yell reaches each distinct adjoining room, `who` lists the other players.
 * Chat, moves and items are announced on the event bus once written, for the live event
 * streams.
 */
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import type { ActiveCharacter, ChatRow, GameRepository, ItemInstance, MessageChannel, NewChatMessage } from '../../db/repositories/game-repository.ts';
import type { EventBus, MoveCause } from '../../db/event-bus.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { DIRECTIONS, SHORT_DIRECTIONS, type Direction, type World } from '../worlds/world-loader.ts';
import { itemName } from '../worlds/world-overlay.ts';
import type { Limit } from '../limits/limits.ts';
import { ChatHistory } from './chat-history.ts';
import { ChatMechanics, type ChatDependencies } from './chat-mechanics.ts';
import { CommandTable, fail, ok, type Command, type CommandResult, type Player } from './command-table.ts';
import { GameStateCache } from './game-state-cache.ts';
import { escapeHtml, parseCommand, plainText } from './plain-text.ts';
import { LINKDEAD, NOT_IN_ROOM, SocialCommands, type GameCore } from './social-commands.ts';
import type { AuthenticatedSession } from '../accounts/session-service.ts';
import { Conflict } from '../errors.ts';

type Schemas = components['schemas'];

export type { CommandResult, Player };

/** A character as lists show it: its name, marked while its player is away (docs/decisions.md, "Presence means connected"). */
const listed = (c: ActiveCharacter): string => (c.linkdead ? `${c.name} (${LINKDEAD})` : c.name);
/**
 * Entries of a room's item or player list that `look` names; the rest are counted. A room's
 * text, and so its `room` event, stays bounded however much lies or stands there.
 */
export const LOOK_LIST_MAX = 50;

/** `  - entry` lines, at most LOOK_LIST_MAX of them, then `  (and 1,150 more)`. */
function listLines<T>(entries: readonly T[], name: (entry: T) => string): string {
  const shown = entries.slice(0, LOOK_LIST_MAX).map((entry) => `  - ${name(entry)}\n`).join('');
  const more = entries.length - LOOK_LIST_MAX;
  return more > 0 ? `${shown}  (and ${more.toLocaleString('en-US')} more)\n` : shown;
}

/** Messages GET /chat returns at most (and a resuming event stream replays). */
export const CHAT_HISTORY = 20;
/** Rows of chat this instance wrote that it keeps for its streams: far more than are ever in flight. */
const WRITTEN_KEPT = 1000;
const WHISPER_USAGE = 'Usage: /whisper <player> <message>';

/** A message as a line of GET /chat's text: an emote reads as the action, the others after the sender's name. */
function chatTextLine(r: ChatRow): string {
  return r.channel === 'emote' ? `${r.text}\n` : `${r.sender}: ${r.text}\n`;
}

/** One message as GET /chat and the `chat` event show it. */
export function chatMessage(r: ChatRow): Schemas['ChatMessage'] {
  return { id: r.id, sender: r.sender, text: r.text, channel: r.channel, recipient: r.recipient, created_at: r.createdAt };
}

/** The character a session plays, for every front door: a Conflict when the session plays none. */
export function sessionPlayer(session: AuthenticatedSession): Player {
  const { characterId, characterName, worldId, roomId, role } = session;
  if (characterId === null) throw new Conflict('No character selected for session. Select a character first.');
  if (characterName === null || worldId === null) throw new Conflict('Selected character not found');
  return { characterId, name: characterName, worldId, roomId, role };
}

export class GameService implements GameCore {
  private readonly repo: GameRepository;
  private readonly worlds: WorldCatalog;
  private readonly clock: Clock;
  private readonly bus: EventBus;
  private readonly history: ChatHistory;
  private readonly state: GameStateCache;
  private readonly maxItemsPerRoom: number;

  /** Chat this instance wrote lately, by id, so its own event streams need not read it back (see chatRows). */
  private readonly written = new Map<number, ChatRow>();
  /** `who`'s lines per list of active characters (see who). */
  private readonly whoLines = new WeakMap<readonly ActiveCharacter[], { text: string; ends: number[] }>();
  private readonly mechanics: ChatMechanics;
  private readonly commands: CommandTable;
  private readonly social: SocialCommands;

  /**
   * `idleMs`: how long a request keeps its character connected ([presence] idle_seconds);
   * `maxItemsPerRoom`: the most items a drop leaves lying in one room ([building]); `oocLimit`:
   * the ooc channel's own limit.
   */
  constructor(repo: GameRepository, worlds: WorldCatalog, clock: Clock, bus: EventBus, idleMs: number, maxItemsPerRoom: number, chat: ChatDependencies | null = null, oocLimit: Limit | null = null) {
    this.repo = repo;
    this.maxItemsPerRoom = maxItemsPerRoom;
    this.history = new ChatHistory(bus, repo, CHAT_HISTORY);
    this.state = new GameStateCache(bus, repo, idleMs);
    this.worlds = worlds;
    this.clock = clock;
    this.bus = bus;
    this.mechanics = new ChatMechanics(chat, repo, clock, (player) => this.world(player));
    this.social = new SocialCommands(this, oocLimit);
    this.commands = this.coreCommands().add(...this.social.commands());
  }

  /** Places each world's items in their rooms, once per database. */
  async seedItems(): Promise<void> {
    for (const world of this.worlds.list()) {
      const placements = [...world.rooms.values()].flatMap((room) => room.items.map((itemId) => ({ roomId: room.id, itemId })));
      await this.repo.seedWorldItems(world.id, placements, this.clock());
    }
  }

  world(player: Player): World {
    const world = this.worlds.get(player.worldId);
    if (!world) throw new Error(`World '${player.worldId}' of character ${player.characterId} is not loaded`);
    return world;
  }

  /** More verbs, from the modules that own them (the builders' `@` commands). */
  addCommands(...commands: Command[]): void {
    this.commands.add(...commands);
  }

  async command(player: Player, text: string): Promise<CommandResult> {
    // Chat is stored and shown to others, so it is plain text from the start.
    let parsed = parseCommand(plainText(text));
    if (!parsed) return fail('Enter a command.');
    // `:waves` is `emote waves`.
    if (parsed.verb.startsWith(':')) parsed = { verb: 'emote', args: `${parsed.verb.slice(1)} ${parsed.args}`.trim() };
    const command = this.commands.find(parsed.verb, player.role);
    if (!command) return fail(`Unknown command: ${parsed.verb}. Type 'help' for available commands.`);
    return command.run(player, parsed.args, parsed.verb);
  }

  /** The verbs of the specification. */
  private coreCommands(): CommandTable {
    const table = new CommandTable();
    const look = async (player: Player, args: string) => {
      if (args) return this.examine(player, args);
      return ok(player.roomId && this.world(player).rooms.has(player.roomId) ? await this.describeRoom(player, player.roomId) : NOT_IN_ROOM);
    };
    const moveLines = ['/north, /n, /south, /s, /east, /e, /west, /w - Move in a direction', '/up, /u, /down, /d - Move up or down'];
    for (const direction of DIRECTIONS) {
      const short = Object.keys(SHORT_DIRECTIONS).find((s) => SHORT_DIRECTIONS[s] === direction)!;
      table.add({
        verbs: [direction, short],
        help: direction === DIRECTIONS[0] ? { section: 'Movement', lines: moveLines } : undefined,
        run: (player) => this.move(player, direction),
      });
    }
    return table.add(
      { verbs: ['look', 'l'], help: { section: 'Actions', lines: ['/look, /l - Examine the current room'] }, run: look },
      { verbs: ['inventory', 'inv', 'i'], help: { section: 'Actions', lines: ['/inventory, /inv, /i - View your inventory'] }, run: async (player) => ok(await this.inventoryText(player)) },
      { verbs: ['get', 'take'], help: { section: 'Actions', lines: ['/get <item>, /take <item> - Pick up an item'] }, run: (player, args) => (args ? this.get(player, args) : Promise.resolve(fail('Get what?'))) },
      { verbs: ['drop'], help: { section: 'Actions', lines: ['/drop <item> - Drop an item'] }, run: (player, args) => (args ? this.drop(player, args) : Promise.resolve(fail('Drop what?'))) },
      { verbs: ['recall', 'flee', 'scurry'], help: { section: 'Actions', lines: ['/recall, /flee, /scurry - Return to zone spawn point'] }, run: (player) => this.recall(player) },
      { verbs: ['say', 'chat'], help: { section: 'Communication', lines: ['/say <message>, /chat <message> - Send a message to the current room'] }, run: (player, args) => (args ? this.say(player, args) : Promise.resolve(fail('Say what?'))) },
      { verbs: ['yell'], help: { section: 'Communication', lines: ['/yell <message> - Yell to current room and adjoining rooms'] }, run: (player, args) => (args ? this.yell(player, args) : Promise.resolve(fail('Yell what?'))) },
      {
        verbs: ['whisper'],
        help: { section: 'Communication', lines: ['/whisper <player> <message> - Send private message to a player in this room (same-room only)'] },
        run: (player, args) => this.whisper(player, args),
      },
      { verbs: ['who'], help: { section: 'Other', lines: ['/who - List active players'] }, run: async (player) => ok(await this.who(player)) },
      { verbs: ['help', '?'], help: { section: 'Other', lines: ['/help, /? - Show this help message'] }, run: async (player) => ok(this.commands.help(player.role)) },
    );
  }

  async describeRoom(player: Player, roomId: string): Promise<string> {
    const world = this.world(player);
    const room = world.rooms.get(roomId);
    if (!room) return 'Unknown room.';
    const now = this.clock();
    const [items, present] = await Promise.all([this.state.roomItemsOf(world.id, roomId, now), this.state.activeInRoom(world.id, roomId, now)]);
    let text = `\n=== ${room.name} ===\n${room.description}\n`;
    if (items.length > 0) text += `\n[Items here]:\n${listLines(items, (i) => itemName(world, i))}`;
    const others = present.filter((p) => p.id !== player.characterId);
    if (others.length > 0) text += `\n[Players here]:\n${listLines(others, listed)}`;
    const exits = Object.entries(room.exits);
    if (exits.length > 0) text += `\n[Exits]:\n${exits.map(([dir, target]) => `  - ${dir}: ${world.rooms.get(target)?.name ?? 'Unknown'}\n`).join('')}`;
    return text;
  }

  async move(player: Player, direction: Direction): Promise<CommandResult> {
    const room = player.roomId ? this.world(player).rooms.get(player.roomId) : undefined;
    if (!room) return fail(NOT_IN_ROOM);
    const target = room.exits[direction];
    if (!target) return fail(`You cannot move ${direction} from here.`);
    await this.repo.setRoom(player.characterId, target, this.clock());
    await this.moved(player, player.roomId, target, direction, 'walk');
    return ok(`You move ${direction}.\n${await this.describeRoom({ ...player, roomId: target }, target)}`);
  }

  private async recall(player: Player): Promise<CommandResult> {
    const world = this.world(player);
    const room = player.roomId ? world.rooms.get(player.roomId) : undefined;
    const zone = room ? world.zones.get(room.zoneId) : undefined;
    const destination = zone ? zone.spawnRoom : world.defaultSpawn.room;
    const label = zone ? zone.name : 'the world';
    if (player.roomId === destination) return ok('You are already at the spawn point.');
    await this.repo.setRoom(player.characterId, destination, this.clock());
    await this.moved(player, player.roomId, destination, null, 'recall');
    return ok(`You recall to ${label}'s spawn point.\n${await this.describeRoom({ ...player, roomId: destination }, destination)}`);
  }

  private async inventoryText(player: Player): Promise<string> {
    const world = this.world(player);
    const held = await this.state.inventory(player.characterId, this.clock());
    if (held.length === 0) return 'Your inventory is empty.';
    return `Your inventory:\n${held.map((i) => `  - ${itemName(world, i)}\n`).join('')}`;
  }

  private itemNamed(world: World, item: ItemInstance, wanted: string): string | null {
    const name = itemName(world, item);
    return name.toLowerCase() === wanted.toLowerCase() ? name : null;
  }

  private async get(player: Player, wanted: string): Promise<CommandResult> {
    const world = this.world(player);
    if (!player.roomId || !world.rooms.has(player.roomId)) return fail(NOT_IN_ROOM);
    for (const item of await this.repo.roomItems(world.id, player.roomId)) {
      const name = this.itemNamed(world, item, wanted);
      // A conditional move: of two players racing for one item, exactly one gets it.
      if (name && (await this.repo.take(item.id, player.roomId, player.characterId))) {
        await this.bus.publish({ type: 'item', worldId: world.id, roomId: player.roomId, characterId: player.characterId, name: player.name, item: name, action: 'take' });
        return ok(`You picked up the ${name}.`);
      }
    }
    return fail(`There is no '${wanted}' here.`);
  }

  private async drop(player: Player, wanted: string): Promise<CommandResult> {
    const world = this.world(player);
    if (!player.roomId || !world.rooms.has(player.roomId)) return fail(NOT_IN_ROOM);
    // What lies in one room is bounded, as builders' items are: `get` and the room's lists read it all.
    if ((await this.state.roomItemsOf(world.id, player.roomId, this.clock())).length >= this.maxItemsPerRoom) return fail('There is no room to drop anything more here.');
    for (const item of await this.repo.inventory(player.characterId)) {
      const name = this.itemNamed(world, item, wanted);
      if (name && (await this.repo.drop(item.id, player.characterId, player.roomId))) {
        await this.bus.publish({ type: 'item', worldId: world.id, roomId: player.roomId, characterId: player.characterId, name: player.name, item: name, action: 'drop' });
        return ok(`You dropped the ${name}.`);
      }
    }
    return fail(`You don't have a '${wanted}'.`);
  }

  message(player: Player, roomId: string, channel: MessageChannel, text: string, recipient: number | null = null): NewChatMessage {
    return {
      worldId: player.worldId,
      roomId,
      characterId: player.characterId,
      senderName: player.name,
      channel,
      recipientCharacterId: recipient,
      message: text,
      createdAt: toDbTime(this.clock()),
    };
  }

  /**
   * Stores chat, then announces it by id: other instances read the rows back, this one keeps
   * them (`recipient` names a whisper's or tell's target; `worldWide` for WORLD_CHANNELS).
   */
  async post(player: Player, messages: NewChatMessage[], recipient: string | null = null, worldWide = false): Promise<void> {
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
    }));
    const roomIds = worldWide ? [] : [...new Set(messages.map((m) => m.roomId))];
    await this.bus.publish({ type: 'chat', worldId: player.worldId, roomIds, messageIds, ...(worldWide ? { worldWide: true as const } : {}) });
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

  private async moved(player: Player, from: string | null, to: string | null, direction: Direction | null, cause: MoveCause): Promise<void> {
    await this.bus.publish({ type: 'move', worldId: player.worldId, characterId: player.characterId, name: player.name, from, to, direction, cause });
  }

  private async say(player: Player, text: string): Promise<CommandResult> {
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const escaped = escapeHtml(await this.mechanics.interact(player, 'say', text, await this.mechanics.roomListener(player, player.roomId)));
    await this.post(player, [this.message(player, player.roomId, 'say', escaped)]);
    return ok(`You say: ${escaped}`);
  }

  private async yell(player: Player, text: string): Promise<CommandResult> {
    const room = player.roomId ? this.world(player).rooms.get(player.roomId) : undefined;
    if (!room) return fail(NOT_IN_ROOM);
    const escaped = escapeHtml(await this.mechanics.interact(player, 'yell', text, await this.mechanics.roomListener(player, room.id)));
    // The current room, then each distinct room an exit leads to.
    const rooms = [...new Set([room.id, ...Object.values(room.exits)])];
    await this.post(player, rooms.map((roomId) => this.message(player, roomId, 'yell', `[YELL] ${escaped}`)));
    return ok(`You yell: ${escaped}`);
  }

  /**
   * Splits whisper arguments into target and message. Names have several words, so the
   * longest leading run of words that names a character of the world is the target; when
   * none does, the first word is (and is reported as unknown).
   */
  async namedTarget(worldId: string, args: string): Promise<{ targetName: string; text: string }> {
    const split = (count: number) => {
      const m = new RegExp(`^(\\S+(?:\\s+\\S+){${count - 1}})\\s*(.*)$`, 's').exec(args)!;
      return { targetName: m[1]!, text: m[2]! };
    };
    for (let count = Math.min(args.split(/\s+/).length, 4); count > 1; count--) {
      const candidate = split(count);
      if (await this.repo.findInWorldByName(worldId, candidate.targetName)) return candidate;
    }
    return split(1);
  }

  private async whisper(player: Player, args: string): Promise<CommandResult> {
    if (!args) return fail(`Whisper to whom? ${WHISPER_USAGE}`);
    const { targetName, text } = await this.namedTarget(player.worldId, args);
    if (!text) return fail(`Whisper what? ${WHISPER_USAGE}`);
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const target = await this.repo.findInWorldByName(player.worldId, targetName);
    if (!target) return fail(`Player '${targetName}' does not exist.`);
    const active = await this.present(player.worldId);
    if (!active.some((a) => a.id === target.id)) return fail(`Player '${targetName}' is not online.`);
    if (target.roomId !== player.roomId) return fail(`Player '${targetName}' is not in this room.`);
    const escaped = escapeHtml(await this.mechanics.interact(player, 'whisper', text, target.id === player.characterId ? null : target.id));
    await this.post(player, [this.message(player, player.roomId, 'whisper', `[WHISPER: ${player.name} \u2192 ${target.name}] ${escaped}`, target.id)], target.name);
    return ok(`You whisper to ${target.name}: ${escaped}`);
  }

  /**
   * Every active player of the world but the caller, one line each. The lines of a list are
   * joined once (with where each ends), and each caller's answer leaves its own line out: in a
   * world of thousands, joining them per `who` was most of its cost.
   */
  private async who(player: Player): Promise<string> {
    const list = await this.state.activeCharacters(player.worldId, this.clock());
    let lines = this.whoLines.get(list);
    if (!lines) {
      const ends: number[] = [];
      let text = '';
      for (const c of list) ends.push((text += `\n - ${listed(c)}`).length);
      this.whoLines.set(list, (lines = { text, ends }));
    }
    const me = list.findIndex((c) => c.id === player.characterId);
    const others = me < 0 ? lines.text : lines.text.slice(0, me === 0 ? 0 : lines.ends[me - 1]) + lines.text.slice(lines.ends[me]);
    return others === '' ? 'No other players online.' : `Active players:${others}`;
  }

  /** The world's characters in its lists, sorted by name (link-dead ones marked). */
  present(worldId: string): Promise<readonly ActiveCharacter[]> {
    return this.state.activeCharacters(worldId, this.clock());
  }

  findInWorld(worldId: string, name: string): Promise<{ id: number; name: string; roomId: string | null } | undefined> {
    return this.repo.findInWorldByName(worldId, name);
  }

  async itemsHere(player: Player): Promise<readonly ItemInstance[]> {
    if (!player.roomId) return [];
    return this.state.roomItemsOf(player.worldId, player.roomId, this.clock());
  }

  carried(characterId: number): Promise<readonly ItemInstance[]> {
    return this.state.inventory(characterId, this.clock());
  }

  private examine(player: Player, wanted: string): Promise<CommandResult> {
    return this.social.examine(player, wanted);
  }

  async status(player: Player): Promise<Schemas['GameStatus']> {
    const activePlayers = await this.state.activeNames(player.worldId, this.clock());
    return { active_players: activePlayers as string[], current_room: player.roomId, inventory: await this.inventoryText(player) };
  }

  /** The room's recent chat; with `afterId`, only messages newer than that one. */
  async chat(player: Player, afterId = 0): Promise<Schemas['RoomChat']> {
    if (!player.roomId) return { chat: 'No messages.', messages: [] };
    const rows = await this.history.recent(player.worldId, player.roomId, player.characterId, CHAT_HISTORY, afterId);
    const chat = rows.length === 0 ? '[No messages in this room yet]' : `[Recent messages]:\n${rows.map(chatTextLine).join('')}`;
    return {
      chat,
      messages: rows.map(chatMessage),
    };
  }
}
