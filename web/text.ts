/**
 * Reading what the game answers as text and completing what the player types. Rooms come as
 * data (`room` in command answers and events) and the commands from GET /commands; the
 * inventory of GET /status and chat prefixes are only text, so this is the one place that knows
 * their layout. No DOM here: Node runs it in test/browser/play-text.test.ts.
 */
import type { components } from '../generated/openapi.d.ts';
import { startsName } from '../src/shared/name-match.ts';

// How chat and movement read is the game's, shared with the telnet door.
export { announcementLine, chatLine, chatText, decodeEntities, END_TEXT, itemLine, movementLine, type ChatLine } from '../src/shared/event-text.ts';

const LIST_ITEM = /^ {2}- (.*)$/;

/** The `  - name` lines of a listing such as `GET /status`'s inventory. */
export function listEntries(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const entry = LIST_ITEM.exec(line);
    return entry ? [entry[1]!] : [];
  });
}

type CommandInfo = components['schemas']['CommandInfo'];

export interface CompletionContext {
  /** The commands the session may use (GET /commands). */
  commands: readonly CommandInfo[];
  exits: string[];
  items: string[];
  inventory: string[];
  /** Characters in the room, then everyone online (duplicates are fine). */
  people: string[];
}

/**
 * Every full command line Tab may turn `input` into, best first: directions and the commands'
 * names for the first word (with a trailing space when an argument must follow); for the
 * argument, what the command's argument names (GET /commands): an exit, an item here, an item
 * carried, a character (then a space for the message), any of those (`target`), or for a message
 * the last word from people's names. A name completes from its start or from the start of one
 * of its words, as the game takes names (`exa pen` → `exa Canal Penny`).
 */
export function completions(input: string, context: CompletionContext): string[] {
  const first = /^(\/?)(\S*)$/.exec(input);
  if (first) {
    const [, slash, word] = first;
    const required = new Set(context.commands.filter((c) => c.argument?.required).map((c) => c.name));
    const verbs = unique([...context.exits, ...context.commands.map((c) => c.name)]).filter((verb) => startsWith(verb, word!));
    return verbs.map((verb) => `${slash}${verb}${required.has(verb) ? ' ' : ''}`);
  }
  const [, head, rawVerb, rest] = /^(\/?(\S+)\s+)(.*)$/s.exec(input)!;
  const verb = rawVerb!.toLowerCase();
  const whole = (names: string[], after: string) =>
    unique(names).filter((name) => startsName(name, rest!) || rest!.trim() === '').map((name) => `${head}${name}${after}`);
  switch (context.commands.find((c) => c.name === verb || c.aliases.includes(verb))?.argument?.kind) {
    case 'direction':
      return whole(context.exits, '');
    case 'item_here':
      return whole(context.items, '');
    case 'item_carried':
      return whole(context.inventory, '');
    case 'target':
      return whole([...context.items, ...context.inventory, ...context.people], '');
    case 'character':
      return whole(context.people, ' ');
    case 'message': {
      const cut = rest!.lastIndexOf(' ') + 1;
      const word = rest!.slice(cut);
      if (word === '') return [];
      return unique(context.people).filter((name) => startsWith(name, word)).map((name) => `${head}${rest!.slice(0, cut)}${name}`);
    }
    default:
      return [];
  }
}

/** The longest start all candidates share, compared without letter case, cased as the first. */
export function commonPrefix(candidates: string[]): string {
  if (candidates.length === 0) return '';
  let end = candidates[0]!.length;
  for (const other of candidates.slice(1)) {
    let i = 0;
    while (i < end && i < other.length && other[i]!.toLowerCase() === candidates[0]![i]!.toLowerCase()) i++;
    end = i;
  }
  return candidates[0]!.slice(0, end);
}

function startsWith(name: string, prefix: string): boolean {
  return name.toLowerCase().startsWith(prefix.toLowerCase());
}

function unique(names: string[]): string[] {
  return [...new Set(names)];
}

/** The contract's `maxLength` of a command (openapi.yaml, CommandRequest); play-text.test.ts checks they agree. */
export const COMMAND_MAX_LENGTH = 2000;

/**
 * A 400's detail as the page shows it: the password rules a password fails come joined by
 * spaces (the specification's form), so each is put on a line of its own, ended by a full stop.
 */
export function readableDetail(detail: string): string {
  const rules = detail.split(/ (?=Password must |Password contains |This password )/);
  if (rules.length < 2) return detail;
  return rules.map((rule) => (/[.!?]$/.test(rule) ? rule : `${rule}.`)).join('\n');
}

/** The login's answer for a banned account, in the words the ban's end of session uses (END_TEXT.ban). */
export function loginDetail(detail: string): string {
  return detail === 'Account is deactivated' ? 'Account is deactivated: it is banned, and cannot log in until staff unban it.' : detail;
}

/** `2026-11-21 20:21:00`, the API's UTC time stamps, as a Date (invalid for anything else). */
export function utcDate(stamp: string): Date {
  return new Date(`${stamp.replace(' ', 'T')}Z`);
}

/**
 * Whether `text` names the character by its first name (so also by its whole name), as a word
 * of its own or with a possessive 's, in any letter case.
 */
export function mentions(text: string, name: string): boolean {
  const first = name.split(' ')[0]!.toLowerCase();
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}'\u2019-]+/u)
    .some((word) => word.replace(/['\u2019]s$/, '') === first);
}
