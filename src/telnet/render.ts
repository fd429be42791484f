/**
 * What a telnet player reads: server text cleaned for a terminal, wrapped at the client's
 * width (NAWS), coloured with ANSI for each chat channel and room names unless the client
 * asked for none, in UTF-8 (or plain ASCII for a client that declined UTF-8), lines ended by
 * CR LF as telnet wants.
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

const ROOM_HEADER = /^=== .+ ===$/;

export class Terminal {
  width = DEFAULT_WIDTH;
  colour = true;
  /** The client declined UTF-8: every other character is sent as `?`. */
  ascii = false;

  /** A window width from NAWS; 0 (unknown) keeps the current one. */
  resize(width: number): void {
    if (width > 0) this.width = Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, width));
  }

  /**
   * Server text (a command's answer, a room) as terminal lines: HTML entities of chat decoded
   * (a terminal shows no markup), room headers coloured, each line wrapped.
   */
  text(text: string, style?: Style): string {
    return this.lines(decodeEntities(text), (line) => style ?? (ROOM_HEADER.test(line) ? 'room' : undefined));
  }

  /** Lines with one style, text taken as it is. */
  styled(text: string, style?: Style): string {
    return this.lines(text, () => style);
  }

  /** One of the server's prompts: no line ending, so the client's input follows it. */
  prompt(text: string): string {
    return this.encodeable(text);
  }

  private lines(text: string, styleOf: (line: string) => Style | undefined): string {
    let out = '';
    for (const line of terminalLines(text)) {
      const style = styleOf(line);
      for (const part of wrap(this.encodeable(line), this.width)) out += `${this.paint(part, style)}\r\n`;
    }
    return out;
  }

  private paint(text: string, style: Style | undefined): string {
    return style && this.colour && text !== '' ? `\x1b[${SGR[style]}m${text}\x1b[0m` : text;
  }

  private encodeable(text: string): string {
    return this.ascii ? text.replace(/[^\x20-\x7e]/gu, '?') : text;
  }
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
