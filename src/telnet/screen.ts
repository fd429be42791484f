/**
 * What a screen of the telnet door is: its own commands by their first word, what it does with
 * any other line, and the prompt it shows (none while playing: the game's answers and events
 * are the screen). The door's commands every screen has: `colour` and `quit`.
 */
import type { TelnetConnection } from './connection.ts';

/** A command of one screen: it gets the connection and the rest of the line. */
export type Handler = (connection: TelnetConnection, rest: string) => Promise<void>;

export interface Screen {
  /** Shown when the screen waits for a line; null while playing. */
  prompt: string | null;
  commands: Readonly<Record<string, Handler>>;
  /** A line that is none of the screen's commands (`text` whole, `verb` lower-cased, `args` after it). */
  other(connection: TelnetConnection, text: string, verb: string, args: string): Promise<void>;
}

export const colour: Handler = async (c, rest) => c.terminal.setColour(rest);
export const quit: Handler = async (c) => c.close('Goodbye.');

export function firstWord(text: string): { word: string; rest: string } {
  const match = /^(\S*)\s*([\s\S]*)$/.exec(text)!;
  return { word: match[1]!, rest: match[2]! };
}
