/**
 * The game as its doors see it: `play`, the one way in for every door and actor (a line of text
 * in, an answer out), the commands a role may use, and the status and room chat that clients
 * poll. The verbs are the command table's (src/services/game/verbs/ and the builders' in
 * src/services/building/); their texts follow the reference server with the changes in
 * docs/decisions.md ("The game").
 */
import type { components } from '../../../generated/openapi.d.ts';
import type { ChatRow } from '../../db/repositories/game-repository.ts';
import type { Limit } from '../limits/limits.ts';
import type { Role } from '../../shared/roles.ts';
import { Conflict } from '../../shared/errors.ts';
import { SPEAKER_MARK } from '../../shared/event-text.ts';
import type { AuthenticatedSession } from '../accounts/session-service.ts';
import { ChatHistory } from './chat-history.ts';
import { fail, type Actor, type CommandInfo, type CommandResult, type CommandTable } from './command-table.ts';
import { chatMessage, type GameCore } from './game-core.ts';
import { parseCommand, plainText } from '../../shared/plain-text.ts';
import type { Door } from '../moderation/audit.ts';
import type { IgnoreLists } from '../moderation/ignores.ts';

type Schemas = components['schemas'];

/** Messages GET /chat returns at most (and a resuming event stream replays). */
export const CHAT_HISTORY = 20;

/**
 * A message as a line of GET /chat's text: an emote reads as the action, the others after the
 * sender's name; a line no character spoke starts with its mark ([NPC], [Room]), as on every door.
 */
function chatTextLine(r: ChatRow): string {
  const line = r.channel === 'emote' ? r.text : `${r.sender}: ${r.text}`;
  return r.speaker === 'character' ? `${line}\n` : `[${SPEAKER_MARK[r.speaker]}] ${line}\n`;
}

/** The character a session plays, as the game's actor, for every door: a Conflict when the session plays none. */
export function sessionActor(session: AuthenticatedSession, door: Door): Actor {
  const { characterId, characterName, worldId, roomId, role, userId, username, mutedUntil, muteReason } = session;
  if (characterId === null) throw new Conflict('No character selected for session. Select a character first.');
  if (characterName === null || worldId === null) throw new Conflict('Selected character not found');
  const mute = mutedUntil === null ? null : { until: mutedUntil, reason: muteReason };
  return { characterId, name: characterName, worldId, roomId, role, accountId: userId, username, mute, door };
}

export class GameService {
  readonly core: GameCore;
  private readonly table: CommandTable;
  private readonly history: ChatHistory;
  private readonly commandLimit: Limit | null;
  private readonly ignores: IgnoreLists;

  /**
   * `table`: every verb (src/services/game/verbs/ and the builders'); `commandLimit`: the play
   * throttle, per the key the door gives; `ignores`: whose chat each account is not shown.
   */
  constructor(core: GameCore, table: CommandTable, commandLimit: Limit | null, ignores: IgnoreLists) {
    this.core = core;
    this.table = table;
    this.commandLimit = commandLimit;
    this.ignores = ignores;
    this.history = new ChatHistory(core.bus, core.repo, CHAT_HISTORY);
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
    const now = this.core.clock();
    const [activePlayers, linkdeadPlayers] = await Promise.all([this.core.state.activeNames(actor.worldId, now), this.core.state.linkdeadNames(actor.worldId, now)]);
    return { active_players: activePlayers as string[], linkdead_players: linkdeadPlayers as string[], current_room: actor.roomId, inventory: await this.core.inventoryText(actor) };
  }

  /** The room's recent chat the actor may read (none from characters its account ignores); with `afterId`, only messages newer than that one. */
  async chat(actor: Actor, afterId = 0): Promise<Schemas['RoomChat']> {
    if (!actor.roomId) return { chat: 'No messages.', messages: [] };
    const reader = { characterId: actor.characterId, ignored: await this.ignores.ignoredBy(actor.accountId) };
    const rows = await this.history.recent(actor.worldId, actor.roomId, reader, CHAT_HISTORY, afterId);
    const chat = rows.length === 0 ? '[No messages in this room yet]' : `[Recent messages]:\n${rows.map(chatTextLine).join('')}`;
    return { chat, messages: rows.map(chatMessage) };
  }
}
