/**
 * Reading the game's text answers and building what the page shows from them. The contract
 * gives rooms, inventories and chat prefixes only as text (src/services/game/game-service.ts
 * writes them), so this is the one place that knows their layout. No DOM here: Node runs it
 * in test/browser/play-text.test.ts.
 */

// How chat and movement read is the game's, shared with the telnet door.
export { chatLine, decodeEntities, END_TEXT, itemLine, movementLine, type ChatLine } from '../src/services/game/event-text.ts';

export interface Exit {
  direction: string;
  to: string;
}

export interface Room {
  name: string;
  description: string;
  items: string[];
  players: string[];
  /** Those of `players` whose player is away (link-dead). */
  linkdead: string[];
  /** Entries the room's text counts instead of naming (`(and 1,150 more)`). */
  moreItems: number;
  morePlayers: number;
  exits: Exit[];
}

/** How the game marks a link-dead player in a list. */
const LINKDEAD = / \(link-dead\)$/;

const ROOM_HEADER = /^=== (.+) ===$/;
const SECTION = /^\[(.+)\]:$/;
const LIST_ITEM = /^ {2}- (.*)$/;
const LIST_MORE = /^ {2}\(and ([\d,]+) more\)$/;

/**
 * Splits a command answer that shows a room (`look`, a move, `recall`, the `room` event) into
 * the lines before the room and the room itself; null when it shows none.
 */
export function parseRoom(text: string): { before: string; room: Room } | null {
  const lines = text.split('\n');
  const header = lines.findIndex((line) => ROOM_HEADER.test(line));
  if (header < 0) return null;
  const room: Room = { name: ROOM_HEADER.exec(lines[header]!)![1]!, description: '', items: [], players: [], linkdead: [], moreItems: 0, morePlayers: 0, exits: [] };
  const description: string[] = [];
  let section: string | null = null;
  for (const line of lines.slice(header + 1)) {
    const heading = SECTION.exec(line);
    if (heading) {
      section = heading[1]!;
      continue;
    }
    const entry = LIST_ITEM.exec(line);
    const more = Number(LIST_MORE.exec(line)?.[1]?.replaceAll(',', '') ?? 0);
    if (section === null) description.push(line);
    else if (more > 0 && section === 'Items here') room.moreItems = more;
    else if (more > 0 && section === 'Players here') room.morePlayers = more;
    else if (entry && section === 'Items here') room.items.push(entry[1]!);
    else if (entry && section === 'Players here') {
      const name = entry[1]!.replace(LINKDEAD, '');
      room.players.push(name);
      if (name !== entry[1]) room.linkdead.push(name);
    }
    else if (entry && section === 'Exits') {
      const cut = entry[1]!.indexOf(': ');
      room.exits.push(cut < 0 ? { direction: entry[1]!, to: '' } : { direction: entry[1]!.slice(0, cut), to: entry[1]!.slice(cut + 2) });
    }
  }
  room.description = description.join('\n').trim();
  return { before: lines.slice(0, header).join('\n').trim(), room };
}

/** The `  - name` lines of a listing such as `GET /status`'s inventory. */
export function listEntries(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const entry = LIST_ITEM.exec(line);
    return entry ? [entry[1]!] : [];
  });
}

/** Verbs of `help`; those that take an argument complete with a trailing space. */
export const VERBS = ['north', 'south', 'east', 'west', 'up', 'down', 'go', 'exits', 'look', 'examine', 'inventory', 'get', 'take', 'drop', 'say', 'yell', 'emote', 'who', 'whisper', 'tell', 'ooc', 'recall', 'help'];
const TAKES_ARGUMENT = new Set(['go', 'examine', 'get', 'take', 'drop', 'say', 'chat', 'yell', 'emote', 'pose', 'whisper', 'tell', 'ooc']);

export interface CompletionContext {
  exits: string[];
  items: string[];
  inventory: string[];
  /** Characters in the room, then everyone online (duplicates are fine). */
  people: string[];
}

/**
 * Every full command line Tab may turn `input` into, best first: verbs and directions for the
 * first word; for the argument, items here (get/take), carried items (drop), people (whisper),
 * or for say/yell the last word from people's names.
 */
export function completions(input: string, context: CompletionContext): string[] {
  const first = /^(\/?)(\S*)$/.exec(input);
  if (first) {
    const [, slash, word] = first;
    const verbs = unique([...context.exits, ...VERBS]).filter((verb) => startsWith(verb, word!));
    return verbs.map((verb) => `${slash}${verb}${TAKES_ARGUMENT.has(verb) ? ' ' : ''}`);
  }
  const split = /^(\/?(\S+)\s+)(.*)$/s.exec(input)!;
  const [, head, rawVerb, rest] = split;
  const verb = rawVerb!.toLowerCase();
  const whole = (names: string[], after: string) =>
    unique(names).filter((name) => startsWith(name, rest!)).map((name) => `${head}${name}${after}`);
  if (verb === 'get' || verb === 'take') return whole(context.items, '');
  if (verb === 'drop') return whole(context.inventory, '');
  if (verb === 'whisper' || verb === 'tell') return whole(context.people, ' ');
  if (verb === 'go') return whole(context.exits, '');
  if (verb === 'examine') return whole([...context.items, ...context.inventory, ...context.people], '');
  if (verb === 'say' || verb === 'chat' || verb === 'yell') {
    const cut = rest!.lastIndexOf(' ') + 1;
    const word = rest!.slice(cut);
    if (word === '') return [];
    return unique(context.people).filter((name) => startsWith(name, word)).map((name) => `${head}${rest!.slice(0, cut)}${name}`);
  }
  return [];
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
