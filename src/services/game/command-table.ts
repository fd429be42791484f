/**
 * The game's verbs as a table: each command names its verbs, who may use it and its lines in
 * `help`. The game looks a verb up here instead of walking an if-chain, and `help` is built
 * from the same table, so a verb is listed exactly when it can be used.
 */
import { hasPermission, type Permission, type Role } from '../../shared/roles.ts';

export interface CommandResult {
  success: boolean;
  message: string;
}

/** The character a game session is bound to, and the role of the session's account. */
export interface Player {
  characterId: number;
  name: string;
  worldId: string;
  roomId: string | null;
  role: Role;
}

/** Sections of `help`, in the order it shows them. */
export const HELP_SECTIONS = ['Movement', 'Actions', 'Communication', 'Building', 'Other'] as const;
export type HelpSection = (typeof HELP_SECTIONS)[number];

export interface Command {
  /** The verb and its aliases, lower-case. */
  verbs: readonly string[];
  /** Without it every player may use the command; others get the unknown-command answer, as for a verb that does not exist. */
  permission?: Permission;
  /** Its lines in `help`, under `section`. */
  help?: { section: HelpSection; lines: readonly string[] };
  run(player: Player, args: string, verb: string): Promise<CommandResult>;
}

export const ok = (message: string): CommandResult => ({ success: true, message });
export const fail = (message: string): CommandResult => ({ success: false, message });

export class CommandTable {
  private readonly commands: Command[] = [];
  private readonly byVerb = new Map<string, Command>();
  /** Help text per role, built once. */
  private readonly helpByRole = new Map<Role, string>();

  add(...commands: Command[]): this {
    for (const command of commands) {
      for (const verb of command.verbs) {
        if (this.byVerb.has(verb)) throw new Error(`Verb '${verb}' is in the command table twice`);
        this.byVerb.set(verb, command);
      }
      this.commands.push(command);
    }
    this.helpByRole.clear();
    return this;
  }

  /** The command a verb names, when the role may use it. */
  find(verb: string, role: Role): Command | undefined {
    const command = this.byVerb.get(verb);
    return command && this.allowed(command, role) ? command : undefined;
  }

  /** `help` for a role: each section with the lines of the commands the role may use. */
  help(role: Role): string {
    let text = this.helpByRole.get(role);
    if (text === undefined) {
      const lines = ['', '[Available Commands]'];
      for (const section of HELP_SECTIONS) {
        const entries = this.commands.filter((c) => c.help?.section === section && this.allowed(c, role)).flatMap((c) => c.help!.lines);
        if (entries.length > 0) lines.push(`${section}:`, ...entries.map((line) => `  ${line}`), '');
      }
      lines.push('Note: Commands can be used with or without the / prefix', '');
      text = lines.join('\n');
      this.helpByRole.set(role, text);
    }
    return text;
  }

  private allowed(command: Command, role: Role): boolean {
    return command.permission === undefined || hasPermission(role, command.permission);
  }
}
