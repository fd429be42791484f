/**
 * What a telnet player reads: server text cleaned for a terminal, wrapped at the client's
 * width (NAWS), coloured with ANSI for each chat channel and room names unless the client
 * asked for none, in UTF-8 (or plain ASCII for a client that declined UTF-8), lines ended by
 * CR LF as telnet wants. In screen-reader mode the decorations go (colours, the `===` round a
 * room's name, blank lines, the dashes of lists); for a client that agreed to MXP, the lines
 * that name an exit or an item carry a `<send>` link.
 */
import { decodeEntities } from '../shared/event-text.ts';
import { terminalLines } from '../shared/plain-text.ts';

export type Style = 'room' | 'say' | 'yell' | 'whisper' | 'emote' | 'tell' | 'ooc';

/** SGR codes: room names bold yellow, say cyan, yell bold red, whisper magenta, emote yellow, tell bold magenta, ooc green. */
const SGR: Record<Style, string> = { room: '1;33', say: '36', yell: '1;31', whisper: '35', emote: '33', tell: '1;35', ooc: '32' };

/** Widths a client may report that are used as they are; others are clamped to them. */
const MIN_WIDTH = 20;
const MAX_WIDTH = 1000;
export const DEFAULT_WIDTH = 80;

const ROOM_HEADER = /^=== (.+) ===$/;
const LIST_ENTRY = /^( *)- /;

/** MXP (ESC [ n z): this line is secure, so its tags are read; and from now on no line is, but those so marked. */
const MXP_SECURE_LINE = '\x1b[1z';
export const MXP_LOCKED = '\x1b[7z';

/** A link in one line (MXP `<send>`): the words that become it, what it sends (several: a menu), and its hint. */
export interface Link {
  text: string;
  send: string[];
  hint: string;
}

export class Terminal {
  width = DEFAULT_WIDTH;
  colour = true;
  /** The client declined UTF-8: every other character is sent as `?`. */
  ascii = false;
  /** Screen-reader mode: no colours and no decorations. */
  screenReader = false;
  /** The client agreed to MXP: lines with a link are sent secure with their `<send>` tag. */
  mxp = false;

  /** A window width from NAWS; 0 (unknown) keeps the current one. */
  resize(width: number): void {
    if (width > 0) this.width = Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, width));
  }

  /**
   * Server text (a command's answer, a room) as terminal lines: HTML entities of chat decoded
   * (a terminal shows no markup), room headers coloured, each line wrapped.
   */
  text(text: string, style?: Style, linkOf?: (line: string) => Link | null): string {
    return this.lines(decodeEntities(text), (line) => style ?? (ROOM_HEADER.test(line) ? 'room' : undefined), linkOf);
  }

  /** Lines with one style, text taken as it is. */
  styled(text: string, style?: Style): string {
    return this.lines(text, () => style);
  }

  /** One of the server's prompts: no line ending, so the client's input follows it. */
  prompt(text: string): string {
    return this.encodeable(text);
  }

  private lines(text: string, styleOf: (line: string) => Style | undefined, linkOf?: (line: string) => Link | null): string {
    let out = '';
    for (const raw of terminalLines(text)) {
      const style = styleOf(raw);
      const link = this.mxp ? linkOf?.(raw) : null;
      const line = this.screenReader ? plainLine(raw) : raw;
      if (line === null) continue;
      // A linked line goes whole: a tag must not be cut by a wrap, and secure mode ends at a line's end.
      if (link) out += `${MXP_SECURE_LINE}${this.paint(linked(this.encodeable(line), link), style)}\r\n`;
      else for (const part of wrap(this.encodeable(line), this.width)) out += `${this.paint(part, style)}\r\n`;
    }
    return out;
  }

  private paint(text: string, style: Style | undefined): string {
    return style && this.colour && !this.screenReader && text !== '' ? `\x1b[${SGR[style]}m${text}\x1b[0m` : text;
  }

  private encodeable(text: string): string {
    return this.ascii ? text.replace(/[^\x20-\x7e]/gu, '?') : text;
  }
}

/** A line as screen-reader mode sends it: `=== Room ===` as `Room`, a list's dash left out, a blank line not at all. */
function plainLine(line: string): string | null {
  if (line.trim() === '') return null;
  const header = ROOM_HEADER.exec(line);
  if (header) return header[1]!;
  return line.replace(LIST_ENTRY, '$1');
}

const mxpEscape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The line with MXP's entities escaped and its link's words in a `<send>` tag (a menu for several commands). */
function linked(line: string, link: Link): string {
  const at = line.indexOf(link.text);
  if (at < 0) return mxpEscape(line);
  const tag = `<send href="${mxpEscape(link.send.join('|'))}" hint="${mxpEscape([link.hint, ...(link.send.length > 1 ? link.send : [])].join('|'))}">`;
  return `${mxpEscape(line.slice(0, at))}${tag}${mxpEscape(link.text)}</send>${mxpEscape(line.slice(at + link.text.length))}`;
}

/**
 * Breaks a line at spaces so no piece is wider than `width` characters (a word longer than
 * that is cut); continuation lines keep the first line's indentation.
 */
export function wrap(line: string, width: number): string[] {
  const chars = [...line];
  if (chars.length <= width) return [line];
  const indent = /^ */.exec(line)![0].slice(0, Math.floor(width / 2));
  const pieces: string[] = [];
  let rest = chars;
  let prefix = '';
  while (prefix.length + rest.length > width) {
    const room = width - prefix.length;
    let cut = rest.lastIndexOf(' ', room);
    if (cut <= 0) cut = room;
    pieces.push(prefix + rest.slice(0, cut).join('').trimEnd());
    rest = rest.slice(cut);
    while (rest[0] === ' ') rest = rest.slice(1);
    prefix = indent;
  }
  if (rest.length > 0) pieces.push(prefix + rest.join(''));
  return pieces;
}
