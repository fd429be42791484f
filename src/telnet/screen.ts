/**
 * What a screen of the telnet door is: its own commands by their first word, what it does with
 * any other line, and the prompt it shows. The door's commands every screen has: `colour` and
 * `quit`; once logged in, `config` too.
 */
import { DEFAULT_PROMPT, MAX_PROMPT_CHARACTERS, type TelnetSettings } from '../services/accounts/telnet-settings.ts';
import type { TelnetConnection } from './connection.ts';

/** A command of one screen: it gets the connection and the rest of the line. */
export type Handler = (connection: TelnetConnection, rest: string) => Promise<void>;

export interface Screen {
  /** Shown when the screen waits for a line (after each answer); null for none. */
  prompt(connection: TelnetConnection): string | null;
  commands: Readonly<Record<string, Handler>>;
  /** A line that is none of the screen's commands (`text` whole, `verb` lower-cased, `args` after it). */
  other(connection: TelnetConnection, text: string, verb: string, args: string): Promise<void>;
}

const onOff = (word: string): boolean | null => ({ on: true, off: false })[word.trim().toLowerCase() as 'on' | 'off'] ?? null;

/** Applies and, once logged in, keeps a change of the account's settings (TelnetSettingsService). */
async function keep(c: TelnetConnection, change: Partial<TelnetSettings>): Promise<void> {
  const session = c.sessionId === null ? null : await c.validSession();
  if (change.colour !== undefined && change.colour !== null) c.terminal.colour = change.colour;
  if (change.screenReader !== undefined) c.terminal.screenReader = change.screenReader;
  if (session) c.settings = await c.s.telnetSettings.change(session.userId, change);
}

/** `colour on`, `colour off` (kept for the account once logged in), or the question what they are. */
export const colour: Handler = async (c, rest) => {
  const wanted = onOff(rest);
  if (wanted === null) {
    c.terminal.print(`Colours are ${c.terminal.colour ? 'on' : 'off'}. Type colour on or colour off.`);
    return;
  }
  await keep(c, { colour: wanted });
  c.terminal.print(`Colours are now ${wanted ? 'on' : 'off'}.`);
};

const CONFIG_HELP = [
  'config colour on|off         ANSI colours',
  'config screenreader on|off   no colours, no decorations (=== round room names, dashes, blank lines)',
  'config prompt <text>         the prompt after each answer: %r room, %e exits, %n character, %w world',
  'config prompt default        the prompt the door starts with',
  'config prompt off            no prompt',
].join('\n');

/**
 * `config`: the account's settings for the telnet door, kept across sessions (colours,
 * screen-reader mode, the prompt); alone, what they are.
 */
export const config: Handler = async (c, rest) => {
  const match = /^(\S*)\s*(.*)$/s.exec(rest.trim())!;
  const what = match[1]!.toLowerCase();
  const value = match[2]!;
  if (what === 'colour' || what === 'color') return colour(c, value);
  if (what === 'screenreader' || what === 'screen-reader') {
    const wanted = onOff(value);
    if (wanted === null) return c.terminal.print('Type config screenreader on or config screenreader off.');
    await keep(c, { screenReader: wanted });
    return c.terminal.print(`Screen-reader mode is now ${wanted ? 'on' : 'off'}.`);
  }
  if (what === 'prompt') {
    const word = value.trim().toLowerCase();
    if (value.trim() === '') return c.terminal.print(`Type config prompt <text> (at most ${MAX_PROMPT_CHARACTERS} characters), config prompt default or config prompt off.`);
    await keep(c, { prompt: word === 'default' ? null : word === 'off' ? '' : value });
    const now = c.settings?.prompt ?? DEFAULT_PROMPT;
    return c.terminal.print(now === '' ? 'No prompt from now on.' : `Your prompt is now '${now}'.`);
  }
  const settings = c.settings;
  const lines = [
    `Colours: ${c.terminal.colour ? 'on' : 'off'}`,
    `Screen-reader mode: ${c.terminal.screenReader ? 'on' : 'off'}`,
    `Prompt: ${settings?.prompt === '' ? 'off' : `'${settings?.prompt ?? DEFAULT_PROMPT}'${settings?.prompt == null ? ' (the default)' : ''}`}`,
    '',
    CONFIG_HELP,
  ];
  c.terminal.print(lines.join('\n'));
};

export const quit: Handler = async (c) => c.close('Goodbye.');

export function firstWord(text: string): { word: string; rest: string } {
  const match = /^(\S*)\s*([\s\S]*)$/.exec(text)!;
  return { word: match[1]!, rest: match[2]! };
}
