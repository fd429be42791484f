/**
 * The social verbs (docs/decisions.md, "Social verbs"): emote (`:` and `pose`), tell, ooc,
 * examine (and `look <target>`), exits and go. They speak through the same chat store, event
 * streams, /chat history and command throttle as say, yell and whisper; none is translated or
 * moves axes. `ooc` has its own limit on top of the command throttle.
 */
import type { ActiveCharacter, ItemInstance, MessageChannel, NewChatMessage } from '../../db/repositories/game-repository.ts';
import { itemDescription, itemName } from '../worlds/world-overlay.ts';
import type { Limit } from '../limits/limits.ts';
import { DIRECTIONS, directionNamed, type Direction, type World } from '../worlds/world-loader.ts';
import { fail, ok, type Command, type CommandResult, type Player } from './command-table.ts';
import { escapeHtml } from './plain-text.ts';

/** What the social verbs need of the game (GameService). */
export interface GameCore {
  world(player: Player): World;
  message(player: Player, roomId: string, channel: MessageChannel, text: string, recipient?: number | null): NewChatMessage;
  post(player: Player, messages: NewChatMessage[], recipient?: string | null, worldWide?: boolean): Promise<void>;
  present(worldId: string): Promise<readonly ActiveCharacter[]>;
  /** Splits `<name> <rest>` where a name may have several words (as whisper does). */
  namedTarget(worldId: string, args: string): Promise<{ targetName: string; text: string }>;
  findInWorld(worldId: string, name: string): Promise<{ id: number; name: string; roomId: string | null } | undefined>;
  itemsHere(player: Player): Promise<readonly ItemInstance[]>;
  carried(characterId: number): Promise<readonly ItemInstance[]>;
  move(player: Player, direction: Direction): Promise<CommandResult>;
}

export const NOT_IN_ROOM = 'You are not in a valid room.';
/** How a link-dead character shows in lists (docs/decisions.md, "Presence means connected"). */
export const LINKDEAD = 'link-dead';

/**
 * An emote as others read it: `Wren` + `waves` → `Wren waves.`; an action starting with an
 * apostrophe or comma joins the name (`Wren's eyes gleam.`); a full stop is added when the
 * action ends in none.
 */
export function emoteText(name: string, action: string): string {
  const joined = /^['’,]/.test(action) ? `${name}${action}` : `${name} ${action}`;
  return /[.!?…"')\]]$/.test(joined) ? joined : `${joined}.`;
}

export class SocialCommands {
  private readonly game: GameCore;
  private readonly oocLimit: Limit | null;

  constructor(game: GameCore, oocLimit: Limit | null) {
    this.game = game;
    this.oocLimit = oocLimit;
  }

  commands(): Command[] {
    return [
      {
        verbs: ['go'],
        help: { section: 'Movement', lines: ['/go <direction> - Move in a direction (north, n, up, ...)'] },
        run: (player, args) => this.go(player, args),
      },
      { verbs: ['exits'], help: { section: 'Movement', lines: ['/exits - List the ways out of this room'] }, run: async (player) => this.exits(player) },
      {
        verbs: ['examine', 'exa'],
        help: { section: 'Actions', lines: ['/examine <item|player>, /exa, /look <item|player> - Look closely at an item here or carried, or at a player here'] },
        run: (player, args) => (args ? this.examine(player, args) : Promise.resolve(fail('Examine what?'))),
      },
      {
        verbs: ['emote', 'pose'],
        help: { section: 'Communication', lines: ['/emote <action>, /pose <action>, :<action> - Act in the room (:waves shows "<you> waves.")'] },
        run: (player, args) => (args ? this.emote(player, args) : Promise.resolve(fail('Emote what?'))),
      },
      {
        verbs: ['tell'],
        help: { section: 'Communication', lines: ['/tell <player> <message> - Private message to a player anywhere in this world (waits in their chat if away)'] },
        run: (player, args) => this.tell(player, args),
      },
      {
        verbs: ['ooc'],
        help: { section: 'Communication', lines: ['/ooc <message> - Out-of-character message to the whole world (never translated)'] },
        run: (player, args) => (args ? this.ooc(player, args) : Promise.resolve(fail('Say what out of character?'))),
      },
    ];
  }

  private async go(player: Player, args: string): Promise<CommandResult> {
    if (!args) return fail('Go where? Usage: /go <direction>');
    const direction = directionNamed(args.trim());
    if (!direction) return fail(`'${args.trim()}' is not a direction. Directions: ${DIRECTIONS.join(', ')}.`);
    return this.game.move(player, direction);
  }

  private exits(player: Player): CommandResult {
    const world = this.game.world(player);
    const room = player.roomId ? world.rooms.get(player.roomId) : undefined;
    if (!room) return fail(NOT_IN_ROOM);
    const exits = Object.entries(room.exits);
    if (exits.length === 0) return ok('There is no way out of here.');
    return ok(`[Exits]:\n${exits.map(([dir, target]) => `  - ${dir}: ${world.rooms.get(target)?.name ?? 'Unknown'}\n`).join('')}`);
  }

  /** An item here or carried (by name, any letter case), else a character here. */
  async examine(player: Player, wanted: string): Promise<CommandResult> {
    const world = this.game.world(player);
    if (!player.roomId || !world.rooms.has(player.roomId)) return fail(NOT_IN_ROOM);
    const lower = wanted.toLowerCase();
    // Items as the world shows them now: a builder may have renamed, described or made them.
    for (const item of [...(await this.game.itemsHere(player)), ...(await this.game.carried(player.characterId))]) {
      const name = itemName(world, item);
      if (name.toLowerCase() === lower) return ok(`[${name}]\n${itemDescription(world, item) || 'You see nothing special about it.'}`);
    }
    const here = (await this.game.present(player.worldId)).find((c) => c.roomId === player.roomId && c.name.toLowerCase() === lower);
    if (!here) return fail(`There is no '${wanted}' here.`);
    const carried = (await this.game.carried(here.id)).map((item) => itemName(world, item));
    const lines = [here.id === player.characterId ? `You are ${here.name}.` : `${here.name} is here.`];
    if (here.linkdead) lines.push(`${here.name} is ${LINKDEAD}: their player is away.`);
    lines.push(carried.length === 0 ? 'They carry nothing.' : `They carry: ${carried.join(', ')}.`);
    return ok(lines.join('\n'));
  }

  private async emote(player: Player, action: string): Promise<CommandResult> {
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const text = escapeHtml(emoteText(player.name, action));
    await this.game.post(player, [this.game.message(player, player.roomId, 'emote', text)]);
    return ok(text);
  }

  private async tell(player: Player, args: string): Promise<CommandResult> {
    const usage = 'Usage: /tell <player> <message>';
    if (!args) return fail(`Tell whom? ${usage}`);
    const { targetName, text } = await this.game.namedTarget(player.worldId, args);
    if (!text) return fail(`Tell what? ${usage}`);
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const target = await this.game.findInWorld(player.worldId, targetName);
    if (!target) return fail(`Nobody in this world is called '${targetName}'.`);
    if (target.id === player.characterId) return fail('You cannot tell yourself.');
    const escaped = escapeHtml(text);
    await this.game.post(player, [this.game.message(player, player.roomId, 'tell', `[TELL: ${player.name} \u2192 ${target.name}] ${escaped}`, target.id)], target.name, true);
    const present = (await this.game.present(player.worldId)).find((c) => c.id === target.id);
    // On a line of its own: clients that show the tell from its chat event still show this.
    const away = !present ? `\n${target.name} is not in the world now: it waits in their chat.` : present.linkdead ? `\n${target.name} is ${LINKDEAD}: it waits in their chat.` : '';
    return ok(`You tell ${target.name}: ${escaped}${away}`);
  }

  private async ooc(player: Player, text: string): Promise<CommandResult> {
    if (!player.roomId) return fail(NOT_IN_ROOM);
    const refused = await this.oocLimit?.hit(String(player.characterId));
    if (refused) throw refused;
    const escaped = escapeHtml(text);
    await this.game.post(player, [this.game.message(player, player.roomId, 'ooc', `[OOC] ${escaped}`)], null, true);
    return ok(`You say out of character: ${escaped}`);
  }
}
