/**
 * The game: one text command per request (movement, look, inventory, get/drop, say/yell/
 * whisper, recall, who, help), plus status and room chat. Texts follow the reference server
 * (ref-game-db.md §§4–11) with decisions.md §5's changes: items are real objects, yell
 * reaches each distinct adjoining room, `who` lists the other players. Chat, moves and items
 * are announced on the event bus once written, for the live event streams.
 */
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import { lockKey, type Db } from '../../db/database.ts';
import type { AxisStateRepository } from '../../db/repositories/axis-state-repository.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { ChatRow, GameRepository, NewChatMessage } from '../../db/repositories/game-repository.ts';
import type { EventBus, MoveCause } from '../../db/event-bus.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { Config } from '../../config/config.ts';
import type { Logger } from '../../logging/logger.ts';
import { DELTA_EPSILON, GrammarError, parseGrammar, resolveChat, seedFromIpcHash, type AxisChange, type ChatGrammar } from '../axis/axis-engine.ts';
import { parseSnapshot, type CharacterStateService } from '../characters/character-state.ts';
import type { LedgerService } from '../ledger/ledger-service.ts';
import { effectivePromptTemplate, translationLayer, type Translator } from '../lab/translation.ts';
import { resolveAxisBundle, type AxisBundle } from '../policy/axis-bundle.ts';
import { PyFloat } from '../policy/canonical-json.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { DIRECTIONS, type Direction, type World } from '../worlds/world-loader.ts';
import { ChatHistory } from './chat-history.ts';
import { GameStateCache } from './game-state-cache.ts';

type Schemas = components['schemas'];

export interface CommandResult {
  success: boolean;
  message: string;
}

/** The character a game session is bound to. */
export interface Player {
  characterId: number;
  name: string;
  worldId: string;
  roomId: string | null;
}

const SHORT_DIRECTIONS: Record<string, Direction> = { n: 'north', s: 'south', e: 'east', w: 'west', u: 'up', d: 'down' };
/** Messages GET /chat returns at most (and a resuming event stream replays). */
export const CHAT_HISTORY = 20;
const NOT_IN_ROOM = 'You are not in a valid room.';
const WHISPER_USAGE = 'Usage: /whisper <player> <message>';

export const HELP_TEXT = [
  '',
  '[Available Commands]',
  'Movement:',
  '  /north, /n, /south, /s, /east, /e, /west, /w - Move in a direction',
  '  /up, /u, /down, /d - Move up or down',
  '',
  'Actions:',
  '  /look, /l - Examine the current room',
  '  /inventory, /inv, /i - View your inventory',
  '  /get <item>, /take <item> - Pick up an item',
  '  /drop <item> - Drop an item',
  '  /recall, /flee, /scurry - Return to zone spawn point',
  '',
  'Communication:',
  '  /say <message>, /chat <message> - Send a message to the current room',
  '  /yell <message> - Yell to current room and adjoining rooms',
  '  /whisper <player> <message> - Send private message to a player in this room (same-room only)',
  '',
  'Other:',
  '  /who - List active players',
  '  /help, /? - Show this help message',
  '',
  'Note: Commands can be used with or without the / prefix',
  '',
].join('\n');

/** Python's html.escape(text, quote=True): chat is stored and echoed escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

/** Terminal escape sequences: CSI (`ESC [ … m`, or the one-byte C1 CSI), terminated OSC, other escapes. */
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])|\x9b[0-?]*[ -/]*[@-~]/g;
const LINE_BREAK = /[\t\n\v\f\r\x85\u2028\u2029]/g;
/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
const INVISIBLE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * One line of plain text, trimmed: escape sequences, control characters and bidirectional
 * controls removed (they can clear, recolour or reorder what other players' clients show, e.g.
 * U+202E makes a message read backwards), tabs and line breaks turned into spaces.
 */
export function plainText(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(LINE_BREAK, ' ').replace(INVISIBLE, '').trim();
}

/** Trimmed text → lower-cased verb and the rest (case kept); one leading `/` is dropped. */
export function parseCommand(text: string): { verb: string; args: string } | null {
  let trimmed = text.trim();
  if (trimmed.startsWith('/')) trimmed = trimmed.slice(1).trimStart();
  if (trimmed === '') return null;
  const match = /^(\S+)\s*(.*)$/s.exec(trimmed)!;
  return { verb: match[1]!.toLowerCase(), args: match[2]! };
}

/**
 * What chat needs beyond the game tables: the axis engine (ref-policy-lab §14) and the
 * OOC → IC translation layer (§12.6). Without it chat is plain text.
 */
export interface ChatDependencies {
  db: Db;
  policies: PolicyService;
  axisState: AxisStateRepository;
  characters: CharacterRepository;
  state: CharacterStateService;
  ledger: Pick<LedgerService, 'append'>;
  translator: Translator;
  translation: Config['translation'];
  logger: Logger;
}

type ChatChannel = 'say' | 'yell' | 'whisper';

const MECHANICAL_EVENT = 'chat.mechanical_resolution';
const MECHANICAL_DESCRIPTION = 'Axis mutation produced by a chat interaction.';
/** Temperature of an unseeded translation (a seed forces 0.0). */
const TRANSLATION_TEMPERATURE = 0.7;

const ok = (message: string): CommandResult => ({ success: true, message });
const fail = (message: string): CommandResult => ({ success: false, message });

/** One message as GET /chat and the `chat` event show it. */
export function chatMessage(r: ChatRow): Schemas['ChatMessage'] {
  return { id: r.id, sender: r.sender, text: r.text, channel: r.channel, recipient: r.recipient, created_at: r.createdAt };
}

export class GameService {
  private readonly repo: GameRepository;
  private readonly worlds: WorldCatalog;
  private readonly clock: Clock;
  private readonly bus: EventBus;
  private readonly history: ChatHistory;
  private readonly state: GameStateCache;

  private readonly chatDeps: ChatDependencies | null;
  /** Parsed grammar per axis bundle policy hash (null: invalid, engine off; logged once). */
  private readonly grammars = new Map<string, ChatGrammar | null>();

  constructor(repo: GameRepository, worlds: WorldCatalog, clock: Clock, bus: EventBus, chat: ChatDependencies | null = null) {
    this.repo = repo;
    this.history = new ChatHistory(bus, repo, CHAT_HISTORY);
    this.state = new GameStateCache(bus, repo);
    this.worlds = worlds;
    this.clock = clock;
    this.bus = bus;
    this.chatDeps = chat;
  }

  /** Places each world's items in their rooms, once per database. */
  async seedItems(): Promise<void> {
    for (const world of this.worlds.list()) {
      const placements = [...world.rooms.values()].flatMap((room) => room.items.map((itemId) => ({ roomId: room.id, itemId })));
      await this.repo.seedWorldItems(world.id, placements, this.clock());
    }
  }

  private world(player: Player): World {
    const world = this.worlds.get(player.worldId);
    if (!world) throw new Error(`World '${player.worldId}' of character ${player.characterId} is not loaded`);
    return world;
  }

  async command(player: Player, text: string): Promise<CommandResult> {
    // Chat is stored and shown to others, so it is plain text from the start.
    const parsed = parseCommand(plainText(text));
    if (!parsed) return fail('Enter a command.');
    const { verb, args } = parsed;
    const direction = SHORT_DIRECTIONS[verb] ?? ((DIRECTIONS as readonly string[]).includes(verb) ? (verb as Direction) : undefined);
    if (direction) return this.move(player, direction);
    switch (verb) {
      case 'look':
      case 'l':
        return ok(player.roomId && this.world(player).rooms.has(player.roomId) ? await this.describeRoom(player, player.roomId) : NOT_IN_ROOM);
      case 'inventory':
      case 'inv':
      case 'i':
        return ok(await this.inventoryText(player));
      case 'get':
      case 'take':
        return args ? this.get(player, args) : fail('Get what?');
      case 'drop':
        return args ? this.drop(player, args) : fail('Drop what?');
      case 'say':
      case 'chat':
        return args ? this.say(player, args) : fail('Say what?');
      case 'yell':
        return args ? this.yell(player, args) : fail('Yell what?');
      case 'whisper':
        return this.whisper(player, args);
      case 'recall':
      case 'flee':
      case 'scurry':
        return this.recall(player);
      case 'who':
        return ok(await this.who(player));
      case 'help':
      case '?':
        return ok(HELP_TEXT);
      default:
        return fail(`Unknown command: ${verb}. Type 'help' for available commands.`);
    }
  }

  async describeRoom(player: Player, roomId: string): Promise<string> {
    const world = this.world(player);
    const room = world.rooms.get(roomId);
    if (!room) return 'Unknown room.';
    const now = this.clock();
    const [items, present] = await Promise.all([this.state.roomItemsOf(world.id, roomId, now), this.state.activeInRoom(world.id, roomId, now)]);
    let text = `\n=== ${room.name} ===\n${room.description}\n`;
    if (items.length > 0) text += `\n[Items here]:\n${items.map((i) => `  - ${world.items.get(i.itemId)?.name ?? i.itemId}\n`).join('')}`;
    const others = present.filter((p) => p.id !== player.characterId);
    if (others.length > 0) text += `\n[Players here]:\n${others.map((p) => `  - ${p.name}\n`).join('')}`;
    const exits = Object.entries(room.exits);
    if (exits.length > 0) text += `\n[Exits]:\n${exits.map(([dir, target]) => `  - ${dir}: ${world.rooms.get(target)?.name ?? 'Unknown'}\n`).join('')}`;
    return text;
  }

  private async move(player: Player, direction: Direction): Promise<CommandResult> {
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
    return `Your inventory:\n${held.map((i) => `  - ${world.items.get(i.itemId)?.name ?? i.itemId}\n`).join('')}`;
  }

  private itemNamed(world: World, itemId: string, wanted: string): string | null {
    const name = world.items.get(itemId)?.name;
    return name !== undefined && name.toLowerCase() === wanted.toLowerCase() ? name : null;
  }

  private async get(player: Player, wanted: string): Promise<CommandResult> {
    const world = this.world(player);
    if (!player.roomId || !world.rooms.has(player.roomId)) return fail(NOT_IN_ROOM);
    for (const item of await this.repo.roomItems(world.id, player.roomId)) {
      const name = this.itemNamed(world, item.itemId, wanted);
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
    for (const item of await this.repo.inventory(player.characterId)) {
      const name = this.itemNamed(world, item.itemId, wanted);
      if (name && (await this.repo.drop(item.id, player.characterId, player.roomId))) {
        await this.bus.publish({ type: 'item', worldId: world.id, roomId: player.roomId, characterId: player.characterId, name: player.name, item: name, action: 'drop' });
        return ok(`You dropped the ${name}.`);
      }
    }
    return fail(`You don't have a '${wanted}'.`);
  }

  private message(player: Player, roomId: string, channel: NewChatMessage['channel'], text: string, recipient: number | null = null): NewChatMessage {
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

  /** Stores chat, then announces it (by id: each stream reads it back with its own visibility). */
  private async post(player: Player, messages: NewChatMessage[]): Promise<void> {
    const messageIds = await this.repo.insertMessages(messages);
    await this.bus.publish({ type: 'chat', worldId: player.worldId, roomIds: [...new Set(messages.map((m) => m.roomId))], messageIds });
  }

  private async moved(player: Player, from: string | null, to: string | null, direction: Direction | null, cause: MoveCause): Promise<void> {
    await this.bus.publish({ type: 'move', worldId: player.worldId, characterId: player.characterId, name: player.name, from, to, direction, cause });
  }

  private async say(player: Player, text: string): Promise<CommandResult> {
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const escaped = escapeHtml(await this.interact(player, 'say', text, await this.roomListener(player, player.roomId)));
    await this.post(player, [this.message(player, player.roomId, 'say', escaped)]);
    return ok(`You say: ${escaped}`);
  }

  private async yell(player: Player, text: string): Promise<CommandResult> {
    const room = player.roomId ? this.world(player).rooms.get(player.roomId) : undefined;
    if (!room) return fail(NOT_IN_ROOM);
    const escaped = escapeHtml(await this.interact(player, 'yell', text, await this.roomListener(player, room.id)));
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
  private async whisperTarget(worldId: string, args: string): Promise<{ targetName: string; text: string }> {
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
    const { targetName, text } = await this.whisperTarget(player.worldId, args);
    if (!text) return fail(`Whisper what? ${WHISPER_USAGE}`);
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const target = await this.repo.findInWorldByName(player.worldId, targetName);
    if (!target) return fail(`Player '${targetName}' does not exist.`);
    const active = await this.repo.activeCharacters(player.worldId, this.clock());
    if (!active.some((a) => a.id === target.id)) return fail(`Player '${targetName}' is not online.`);
    if (target.roomId !== player.roomId) return fail(`Player '${targetName}' is not in this room.`);
    const escaped = escapeHtml(await this.interact(player, 'whisper', text, target.id === player.characterId ? null : target.id));
    await this.post(player, [this.message(player, player.roomId, 'whisper', `[WHISPER: ${player.name} \u2192 ${target.name}] ${escaped}`, target.id)]);
    return ok(`You whisper to ${target.name}: ${escaped}`);
  }

  // -------------------------------------------------------------------------------------------
  // Chat mechanics: axis engine and translation. Neither may fail the command.

  /** The first other active character in the room, by id; null when the speaker is alone. */
  private async roomListener(player: Player, roomId: string): Promise<number | null> {
    if (!this.chatDeps) return null;
    try {
      if (!this.axisEngineEnabled(this.world(player))) return null;
      const present = await this.repo.activeInRoom(player.worldId, roomId, this.clock());
      const others = present.map((p) => p.id).filter((id) => id !== player.characterId);
      return others.length === 0 ? null : Math.min(...others);
    } catch (err) {
      this.chatDeps.logger.error('Chat listener lookup failed', { world_id: player.worldId, character_id: player.characterId, error: (err as Error).message });
      return null;
    }
  }

  private axisEngineEnabled(world: World): boolean {
    return world.axisEngine !== null && world.axisEngine.enabled === true;
  }

  /** Runs the axis engine (with a listener) and the translation; returns the plain text to store, unescaped. */
  private async interact(player: Player, channel: ChatChannel, text: string, listenerId: number | null): Promise<string> {
    const deps = this.chatDeps;
    if (!deps) return text;
    let ipcHash: string | null = null;
    if (listenerId !== null) {
      try {
        ipcHash = await this.resolveAxes(deps, player, listenerId, channel);
      } catch (err) {
        deps.logger.error('Axis engine chat resolution failed', { world_id: player.worldId, speaker_id: player.characterId, listener_id: listenerId, channel, error: (err as Error).message });
      }
    }
    try {
      // The model's text is as untrusted as the player's.
      return plainText(await this.translate(deps, player, channel, text, ipcHash));
    } catch (err) {
      deps.logger.error('Chat translation failed; using the OOC text', { world_id: player.worldId, character_id: player.characterId, channel, error: (err as Error).message });
      return text;
    }
  }

  /** The bundle's chat grammar, or null (logged once per bundle version) when it does not parse. */
  private grammarOf(deps: ChatDependencies, bundle: AxisBundle): ChatGrammar | null {
    if (this.grammars.has(bundle.policyHash)) return this.grammars.get(bundle.policyHash)!;
    let grammar: ChatGrammar | null = null;
    try {
      grammar = parseGrammar(bundle.content.resolution);
    } catch (err) {
      if (!(err instanceof GrammarError)) throw err;
      deps.logger.warn('Axis engine disabled for world: invalid resolution grammar', { world_id: bundle.worldId, bundle_id: bundle.bundleId, error: err.message });
    }
    this.grammars.set(bundle.policyHash, grammar);
    return grammar;
  }

  /**
   * §14.4 in one transaction: both characters locked in ascending id order, scores read,
   * deltas resolved, one axis event per changed character, scores and snapshots refreshed,
   * and the ledger event appended. Returns the ipc_hash, or null when the engine is off.
   */
  private async resolveAxes(deps: ChatDependencies, player: Player, listenerId: number, channel: ChatChannel): Promise<string | null> {
    const world = this.world(player);
    if (!this.axisEngineEnabled(world)) return null;
    const bundle = await resolveAxisBundle(deps.policies, world.id);
    const grammar = this.grammarOf(deps, bundle);
    if (!grammar) return null;
    return deps.db.transaction(async (trx) => {
      for (const id of [player.characterId, listenerId].sort((a, b) => a - b)) await lockKey(trx, `character:${id}`);
      const speaker = await deps.characters.findById(player.characterId, trx);
      const listener = await deps.characters.findById(listenerId, trx);
      if (!speaker || !listener || speaker.worldId !== world.id || listener.worldId !== world.id) {
        throw new Error(`Chat characters ${player.characterId}/${listenerId} not found in world '${world.id}'`);
      }
      const scoresOf = async (id: number): Promise<Record<string, number>> => Object.fromEntries((await deps.axisState.scores(id, trx)).map((s) => [s.axisName, s.score]));
      const result = resolveChat({
        worldId: world.id,
        speaker: { id: speaker.id, scores: await scoresOf(speaker.id) },
        listener: { id: listener.id, scores: await scoresOf(listener.id) },
        channel,
        grammar,
      });
      const sides: Array<[typeof speaker, Record<string, AxisChange>, number]> = [
        [speaker, result.speaker, listener.id],
        [listener, result.listener, speaker.id],
      ];
      for (const [character, changes, peerId] of sides) {
        if (Object.keys(changes).length === 0) continue;
        const targets = Object.fromEntries(Object.entries(changes).map(([axis, c]) => [axis, c.newScore]));
        await deps.state.moveToIn(
          trx,
          { id: character.id, worldId: character.worldId, seed: character.stateSeed },
          bundle,
          targets,
          { type: MECHANICAL_EVENT, description: MECHANICAL_DESCRIPTION, metadata: { ipc_hash: result.ipcHash, channel, peer_id: String(peerId) } },
          DELTA_EPSILON,
        );
      }
      const party = (character: typeof speaker, changes: Record<string, AxisChange>) => ({
        character_id: character.id,
        character_name: character.name,
        axis_deltas: Object.fromEntries(Object.entries(changes).map(([axis, c]) => [axis, new PyFloat(c.delta)])),
      });
      await deps.ledger.append(
        {
          worldId: world.id,
          eventType: MECHANICAL_EVENT,
          ipcHash: result.ipcHash,
          meta: {},
          data: {
            channel,
            speaker: party(speaker, result.speaker),
            listener: party(listener, result.listener),
            axis_snapshot_before: Object.fromEntries(
              Object.entries(result.axisSnapshotBefore).map(([id, scores]) => [id, Object.fromEntries(Object.entries(scores).map(([a, v]) => [a, new PyFloat(v)]))]),
            ),
            grammar_version: result.grammarVersion,
          },
        },
        trx,
      );
      return result.ipcHash;
    });
  }

  /**
   * §12.6: OOC → IC through the world's translation layer with the speaker's axes. Returns the
   * IC text, or the OOC text when translation is off, the character has no axis state, or
   * the model fails; every attempt is written to the ledger.
   */
  private async translate(deps: ChatDependencies, player: Player, channel: ChatChannel, text: string, ipcHash: string | null): Promise<string> {
    const world = this.world(player);
    const layer = translationLayer(world, deps.translation.ollamaUrl);
    if (!deps.translation.enabled || !layer.enabled) return text;
    const character = await deps.characters.findById(player.characterId);
    const scores = await deps.axisState.scores(player.characterId);
    if (!character || character.worldId !== world.id || scores.length === 0) return text;
    const labels = parseSnapshot(character.currentStateJson)?.axes ?? {};
    const scoreByAxis = new Map(scores.map((s) => [s.axisName, s.score]));
    const names = layer.activeAxes.length > 0 ? layer.activeAxes : scores.map((s) => s.axisName);
    const axes: Record<string, { label: string; score: number }> = {};
    for (const name of names) {
      const score = scoreByAxis.get(name);
      axes[name] = score === undefined ? { label: 'unknown', score: 0.0 } : { label: labels[name]?.label ?? 'unknown', score };
    }
    // The seed can reach 2^64 − 1: it is sent as raw JSON digits, never through a double.
    const seeded = layer.deterministic && ipcHash !== null;
    const seed = seeded ? (JSON.rawJSON(seedFromIpcHash(ipcHash).toString()) as unknown as number) : -1;
    const result = await deps.translator.translate({
      layer: { ...layer, activeAxes: names },
      template: await effectivePromptTemplate(deps.policies, world.id, layer),
      characterName: character.name,
      channel,
      axes,
      oocMessage: text,
      seed,
      temperature: seeded ? 0.0 : TRANSLATION_TEMPERATURE,
    });
    try {
      await deps.ledger.append({
        worldId: world.id,
        eventType: 'chat.translation',
        ipcHash,
        meta: ipcHash === null ? { phase: 'pre_axis_engine' } : {},
        data: {
          status: result.status,
          character_name: character.name,
          channel,
          ooc_input: text,
          ic_output: result.icText,
          axis_snapshot: Object.fromEntries(Object.entries(axes).map(([name, a]) => [name, { score: new PyFloat(a.score), label: a.label }])),
        },
      });
    } catch (err) {
      deps.logger.error('Ledger write of a chat translation failed', { world_id: world.id, character_id: player.characterId, error: (err as Error).message });
    }
    return result.icText ?? text;
  }

  private async who(player: Player): Promise<string> {
    const others = (await this.state.activeCharacters(player.worldId, this.clock())).filter((c) => c.id !== player.characterId);
    return others.length === 0 ? 'No other players online.' : `Active players:\n${others.map((c) => ` - ${c.name}`).join('\n')}`;
  }

  async status(player: Player): Promise<Schemas['GameStatus']> {
    const activePlayers = await this.state.activeNames(player.worldId, this.clock());
    return { active_players: activePlayers as string[], current_room: player.roomId, inventory: await this.inventoryText(player) };
  }

  /** The room's recent chat; with `afterId`, only messages newer than that one. */
  async chat(player: Player, afterId = 0): Promise<Schemas['RoomChat']> {
    if (!player.roomId) return { chat: 'No messages.', messages: [] };
    const rows = await this.history.recent(player.worldId, player.roomId, player.characterId, CHAT_HISTORY, afterId);
    const chat = rows.length === 0 ? '[No messages in this room yet]' : `[Recent messages]:\n${rows.map((r) => `${r.sender}: ${r.text}\n`).join('')}`;
    return {
      chat,
      messages: rows.map(chatMessage),
    };
  }
}
