/**
 * The game's verbs as a table. An entry says everything about a verb: its names, who may use
 * it, whether the actor must stand in a room, its argument and what answers a missing one, its
 * lines in `help` and its usage. The table makes those checks, in that order, before the verb
 * runs, so no verb repeats them; `help` and GET /commands are built from the same entries, so a
 * verb is listed exactly when it can be used. The verbs themselves live in src/services/game/verbs/
 * by kind, and the builders' in src/services/building/build-commands.ts.
 */
import type { components } from '../../../generated/openapi.d.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import { hasPermission, type Permission, type Role } from '../../shared/roles.ts';
import type { Door } from '../moderation/audit.ts';
import type { Room, World } from '../worlds/world-loader.ts';

export type RoomData = components['schemas']['Room'];

export interface CommandResult {
  success: boolean;
  message: string;
  /** The room the answer shows (look, a move, recall, go), as data. */
  room?: RoomData;
}

/**
 * Who acts in the game: a player's character, through any door. An actor has a name, a world
 * and a room, the account that plays it with the role its actions are allowed by and its mute,
 * and the door it comes through; no session (a door holds that).
 */
export interface Actor {
  characterId: number;
  name: string;
  worldId: string;
  roomId: string | null;
  role: Role;
  accountId: number;
  username: string;
  /** The account's mute (database time, UTC), which may have ended by now; null when none was set. */
  mute: { until: string; reason: string | null } | null;
  /** For the audit log of what staff do in the game. */
  door: Door;
}

/** The answer to a muted actor's talk: until when, and why when staff said. */
export function mutedAnswer(mute: { until: string; reason: string | null }): string {
  return `You are muted until ${mute.until} UTC.${mute.reason === null ? '' : ` Reason: ${mute.reason}`}`;
}

/** Sections of `help`, in the order it shows them. */
export const HELP_SECTIONS = ['Movement', 'Actions', 'Communication', 'Building', 'Other'] as const;
export type HelpSection = (typeof HELP_SECTIONS)[number];

/** What a verb's argument names (CommandInfo.argument.kind in openapi.yaml). */
export type ArgumentKind = NonNullable<components['schemas']['CommandInfo']['argument']>['kind'];

/** The answer to an actor that stands in no room of its world (a room deleted under it, a world changed). */
export const NOT_IN_ROOM = 'You are not in a valid room.';

/** What a verb runs with: the actor, its world, the room it stands in when the verb needs one, and the words after the verb. */
export interface Turn<R extends Room | undefined = Room | undefined> {
  actor: Actor;
  world: World;
  room: R;
  args: string;
  /** The verb as typed (lower-cased), for verbs with several names. */
  verb: string;
}

interface CommandEntry {
  /** The verb and its aliases, lower-case; the first is its name. */
  verbs: readonly string[];
  /** Without it every actor may use the command; others get the unknown-command answer, as for a verb that does not exist. */
  permission?: Permission;
  /** It talks (say, yell, whisper, emote, tell, ooc): refused while the actor's account is muted. */
  talks?: true;
  /** How it is typed, for GET /commands: `get <item>`. */
  usage: string;
  /** What it does, in a few words, for GET /commands. */
  summary: string;
  /**
   * What follows the verb: its kind (what clients complete it from) and, when it is required, the
   * answer to the verb sent without it (`Get what?`). Absent: the verb takes nothing.
   */
  argument?: { kind: ArgumentKind; missing?: string };
  /** Its lines in `help`, under `section` (a line may cover several verbs: only the first of them carries it). */
  help: { section: HelpSection; lines: readonly string[] };
}

/** A verb that needs its actor standing in a room of its world: it runs with that room. */
export interface RoomCommand extends CommandEntry {
  needsRoom: true;
  run(turn: Turn<Room>): Promise<CommandResult>;
}

/** A verb that runs wherever its actor is (or is not). */
export interface AnywhereCommand extends CommandEntry {
  needsRoom: false;
  run(turn: Turn): Promise<CommandResult>;
}

export type Command = RoomCommand | AnywhereCommand;

export const ok = (message: string, room?: RoomData): CommandResult => (room ? { success: true, message, room } : { success: true, message });
export const fail = (message: string): CommandResult => ({ success: false, message });

export type CommandInfo = components['schemas']['CommandInfo'];

export class CommandTable {
  private readonly clock: Clock;
  private readonly commands: Command[] = [];
  private readonly byVerb = new Map<string, Command>();
  /** Help text and listing per role, built once. */
  private readonly helpByRole = new Map<Role, string>();
  private readonly listByRole = new Map<Role, CommandInfo[]>();

  /** `clock`: when a mute ends. */
  constructor(clock: Clock) {
    this.clock = clock;
  }

  add(...commands: Command[]): this {
    for (const command of commands) {
      for (const verb of command.verbs) {
        if (this.byVerb.has(verb)) throw new Error(`Verb '${verb}' is in the command table twice`);
        this.byVerb.set(verb, command);
      }
      this.commands.push(command);
    }
    this.helpByRole.clear();
    this.listByRole.clear();
    return this;
  }

  /** The command a verb names, when the role may use it. */
  find(verb: string, role: Role): Command | undefined {
    const command = this.byVerb.get(verb);
    return command && this.allowed(command, role) ? command : undefined;
  }

  /**
   * What answers a verb no command has, typed in a room: a script's own verb (src/services/
   * scripts/), its answer, or null when none takes it.
   */
  fallback: ((turn: Turn<Room>) => Promise<string | null>) | null = null;

  /**
   * Runs a verb for an actor in its world: the unknown-command answer for a verb the actor's
   * role may not use, then the mute (for the verbs that talk), the room check, the argument
   * check, then the verb.
   */
  async dispatch(actor: Actor, world: World, verb: string, args: string): Promise<CommandResult> {
    const command = this.find(verb, actor.role);
    if (!command) return this.unknown(actor, world, verb, args);
    if (command.talks && actor.mute !== null && actor.mute.until > toDbTime(this.clock())) return fail(mutedAnswer(actor.mute));
    const room = actor.roomId === null ? undefined : world.rooms.get(actor.roomId);
    if (command.needsRoom && !room) return fail(NOT_IN_ROOM);
    const missing = command.argument?.missing;
    if (missing !== undefined && args === '') return fail(missing);
    const turn = { actor, world, args, verb };
    return command.needsRoom ? command.run({ ...turn, room: room! }) : command.run({ ...turn, room });
  }

  /** A verb no command has: a script of the room may take it (`pull lever`), else the unknown-command answer. */
  private async unknown(actor: Actor, world: World, verb: string, args: string): Promise<CommandResult> {
    const room = actor.roomId === null ? undefined : world.rooms.get(actor.roomId);
    const answer = room && this.fallback ? await this.fallback({ actor, world, room, verb, args }) : null;
    return answer === null ? fail(`Unknown command: ${verb}. Type 'help' for available commands.`) : ok(answer);
  }

  /** `help` for a role: each section with the lines of the commands the role may use. */
  help(role: Role): string {
    let text = this.helpByRole.get(role);
    if (text === undefined) {
      const lines = ['', '[Available Commands]'];
      for (const section of HELP_SECTIONS) {
        const entries = this.commands.filter((c) => c.help.section === section && this.allowed(c, role)).flatMap((c) => c.help.lines);
        if (entries.length > 0) lines.push(`${section}:`, ...entries.map((line) => `  ${line}`), '');
      }
      lines.push('Note: Commands can be used with or without the / prefix', '');
      text = lines.join('\n');
      this.helpByRole.set(role, text);
    }
    return text;
  }

  /** The commands a role may use, in `help`'s order, as data (GET /commands). */
  list(role: Role): CommandInfo[] {
    let list = this.listByRole.get(role);
    if (list === undefined) {
      list = HELP_SECTIONS.flatMap((section) =>
        this.commands
          .filter((c) => c.help.section === section && this.allowed(c, role))
          .map((c) => ({
            name: c.verbs[0]!,
            aliases: c.verbs.slice(1),
            usage: c.usage,
            summary: c.summary,
            section,
            argument: c.argument ? { kind: c.argument.kind, required: c.argument.missing !== undefined } : null,
          })),
      );
      this.listByRole.set(role, list);
    }
    return list;
  }

  private allowed(command: Command, role: Role): boolean {
    return command.permission === undefined || hasPermission(role, command.permission);
  }
}
