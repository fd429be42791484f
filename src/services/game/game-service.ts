/**
 * The game as its doors see it: `play`, the one way in for every door and actor (a line of text
 * in, an answer out), the commands a role may use, and the status and room chat that clients
 * poll. The verbs are the command table's (src/services/game/verbs/ and the builders' in
 * src/services/building/), in the order `help` lists them; their texts follow the reference
 * server with the changes in docs/decisions.md ("The game").
 */
import type { components } from '../../../generated/openapi.d.ts';
import type { ChatRow } from '../../db/repositories/game-repository.ts';
import type { Limit } from '../limits/limits.ts';
import type { Role } from '../../shared/roles.ts';
import { ChatHistory } from './chat-history.ts';
import { CommandTable, fail, type Actor, type Command, type CommandInfo, type CommandResult } from './command-table.ts';
import { chatMessage, type GameCore } from './game-core.ts';
import { parseCommand, plainText } from './plain-text.ts';
import { communicationVerbs } from './verbs/communication.ts';
import { informationVerbs } from './verbs/information.ts';
import { itemVerbs } from './verbs/items.ts';
import { movementVerbs } from './verbs/movement.ts';

type Schemas = components['schemas'];

/** Messages GET /chat returns at most (and a resuming event stream replays). */
export const CHAT_HISTORY = 20;

/** A message as a line of GET /chat's text: an emote reads as the action, the others after the sender's name. */
function chatTextLine(r: ChatRow): string {
  return r.channel === 'emote' ? `${r.text}\n` : `${r.sender}: ${r.text}\n`;
}

export interface GameLimits {
  /** The play throttle, per the key the door gives (a session's row id). */
  commands: Limit | null;
  /** The ooc channel's own limit, per character. */
  ooc: Limit | null;
}

export class GameService {
  readonly core: GameCore;
  private readonly table = new CommandTable();
  private readonly history: ChatHistory;
  private readonly commandLimit: Limit | null;

  constructor(core: GameCore, limits: GameLimits) {
    this.core = core;
    this.commandLimit = limits.commands;
    this.history = new ChatHistory(core.bus, core.repo, CHAT_HISTORY);
    const movement = movementVerbs(core);
    const items = itemVerbs(core);
    const talk = communicationVerbs(core, limits.ooc);
    const info = informationVerbs(core, () => this.table);
    // In the order `help` lists them within its sections.
    this.table.add(
      ...movement.directions,
      info.look,
      items.inventory,
      items.get,
      items.drop,
      movement.recall,
      talk.say,
      talk.yell,
      talk.whisper,
      info.who,
      info.help,
      movement.go,
      movement.exits,
      info.examine,
      talk.emote,
      talk.tell,
      talk.ooc,
    );
  }

  /** More verbs, from the modules that own them (the builders' `@` commands). */
  addCommands(...commands: Command[]): void {
    this.table.add(...commands);
  }

  /**
   * The one way into the game, for every door and actor: a raw line is made NFC plain text,
   * counted by the play throttle under `throttleKey` (a 429 past it), parsed once (`:waves` is
   * `emote waves`), and run by the command table.
   */
  async play(actor: Actor, line: string, throttleKey: string): Promise<CommandResult> {
    const refused = await this.commandLimit?.hit(throttleKey);
    if (refused) throw refused;
    // Chat is stored and shown to others, so it is plain text from the start.
    let parsed = parseCommand(plainText(line.normalize('NFC')));
    if (!parsed) return fail('Enter a command.');
    if (parsed.verb.startsWith(':')) parsed = { verb: 'emote', args: `${parsed.verb.slice(1)} ${parsed.args}`.trim() };
    return this.table.dispatch(actor, this.core.world(actor), parsed.verb, parsed.args);
  }

  /** The commands a role may use, as `help` lists them (GET /commands). */
  commands(role: Role): CommandInfo[] {
    return this.table.list(role);
  }

  /** `help` for a role. */
  help(role: Role): string {
    return this.table.help(role);
  }

  async status(actor: Actor): Promise<Schemas['GameStatus']> {
    const activePlayers = await this.core.state.activeNames(actor.worldId, this.core.clock());
    return { active_players: activePlayers as string[], current_room: actor.roomId, inventory: await this.core.inventoryText(actor) };
  }

  /** The room's recent chat; with `afterId`, only messages newer than that one. */
  async chat(actor: Actor, afterId = 0): Promise<Schemas['RoomChat']> {
    if (!actor.roomId) return { chat: 'No messages.', messages: [] };
    const rows = await this.history.recent(actor.worldId, actor.roomId, actor.characterId, CHAT_HISTORY, afterId);
    const chat = rows.length === 0 ? '[No messages in this room yet]' : `[Recent messages]:\n${rows.map(chatTextLine).join('')}`;
    return { chat, messages: rows.map(chatMessage) };
  }
}
