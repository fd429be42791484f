/**
 * The terminal side of a telnet connection: bytes in and out of the socket, the protocol
 * underneath (negotiation, NAWS, TTYPE/MTTS, CHARSET, GMCP, ECHO for hidden input, EOR for
 * prompts, MSSP for MUD directories, MCCP2 compression, MXP), lines read one at a time (a
 * question takes the next line, whatever was typed ahead), and text written as the client's
 * terminal shows it (src/telnet/render.ts). What the lines mean is the screens' business
 * (src/telnet/connection.ts and the screens, src/telnet/*-screen.ts).
 */
import type { Socket } from 'node:net';
import { constants as zlib, createDeflate, type Deflate } from 'node:zlib';
import type { Logger } from '../logging/logger.ts';
import { findNul, NUL_MESSAGE } from '../shared/nul.ts';
import { MAX_COMMAND_CHARACTERS } from '../shared/plain-text.ts';
import * as gmcp from './gmcp.ts';
import { msspMessage, type MsspVariables } from './mssp.ts';
import { LOCAL_OPTIONS, Negotiation } from './negotiation.ts';
import { CHARSET, COMPRESS2, ECHO, END_OF_RECORD, EOR, GMCP, GO_AHEAD, LineReader, MSSP, MXP, NAWS, subnegotiation, TelnetParser, TTYPE, type Line } from './protocol.ts';
import { MXP_LOCKED, Terminal, type Link, type Style } from './render.ts';

/** Lines read ahead of the one being handled; past it the socket stops being read until they are. */
const MAX_PENDING_LINES = 32;
/** Output a client has not read; past it the connection is dropped (the telnet form of `lagging`). */
const MAX_OUTPUT_BYTES = 256 * 1024;
/** How long a closing connection waits for the client to hang up before it is cut. */
const CLOSE_GRACE_MS = 2000;

/** TTYPE (RFC 1091) and CHARSET (RFC 2066) subnegotiation codes. */
const TTYPE_IS = 0;
const TTYPE_SEND = 1;
const CHARSET_REQUEST = 1;
const CHARSET_ACCEPTED = 2;
const CHARSET_REJECTED = 3;
/** MTTS (the MUD terminal type standard) sends at most three names: client, terminal, `MTTS <bits>`. */
const TTYPE_ROUNDS = 3;
const MTTS_ANSI = 1;
const MTTS_SCREEN_READER = 64;

/**
 * MCCP2's zlib stream: a 4 KiB window and memLevel 4 hold about 24 KiB per connection (zlib's
 * own formula, (1 << (windowBits + 2)) + (1 << (memLevel + 9))), so max_connections of them
 * stay small; text compresses nearly as well as with zlib's 256 KiB default.
 */
const DEFLATE_OPTIONS = { windowBits: 12, memLevel: 4, level: 6 } as const;

/** GMCP Char.Login.Credentials, as Mudlet sends it to log in by itself: taken in line order. */
export interface Credentials {
  credentials: { account: string; password: string };
}

/** A line as the door reads it, the answer to one it refuses, or a client's login by GMCP. */
type Input = string | { refused: string } | Credentials;
/** POST /command's limit: telnet lets no longer line through. */
const TOO_LONG: Input = { refused: `That line was longer than ${MAX_COMMAND_CHARACTERS} characters and was ignored.` };
/** Refused as over HTTP (src/shared/nul.ts): a name or command holding NUL would fail inside a PostgreSQL query. */
const HOLDS_NUL: Input = { refused: `That line ${NUL_MESSAGE}; it was ignored.` };

/** Thrown out of a waiting read when the connection closes: unwinds whatever dialogue was running. */
export class ConnectionClosed extends Error {}

/** Backspace and DEL from clients that send them rather than editing the line themselves. */
function edited(text: string): string {
  if (!/[\b\x7f]/.test(text)) return text;
  const chars: string[] = [];
  for (const ch of text) {
    if (ch === '\b' || ch === '\x7f') chars.pop();
    else chars.push(ch);
  }
  return chars.join('');
}

export interface TerminalHooks {
  /** A line arrived (for idle timers). */
  received(): void;
  /** The client agreed to GMCP: what it should know already can be sent. */
  gmcpOn(): void;
  /** A GMCP message from the client that is not GMCP's own (Core): the screens' business. */
  gmcp(name: string, data: unknown): void;
  /** What MSSP tells a directory that asks, as it is now. */
  mssp(): Promise<MsspVariables>;
  /** The socket closed, whoever closed it. */
  closed(): void;
}

export class TelnetTerminal {
  private readonly socket: Socket;
  private readonly logger: Logger;
  private readonly address: string;
  private readonly hooks: TerminalHooks;
  private readonly parser: TelnetParser;
  private readonly lines = new LineReader(MAX_COMMAND_CHARACTERS * 4);
  private readonly decoder = new TextDecoder('utf-8');
  private readonly negotiation: Negotiation;
  private readonly render = new Terminal();
  private readonly supports = new gmcp.Supports();
  private readonly inbox: Input[] = [];
  private wake: (() => void) | null = null;
  private colourChosen = false;
  private screenReaderChosen = false;
  private terminalTypes: string[] = [];
  private readonly compression: boolean;
  /** MCCP2 is on: everything written goes through this zlib stream. */
  private deflate: Deflate | null = null;
  private flushQueued = false;
  /** The last thing written was a prompt, with nothing typed since: other output starts on a new line. */
  private atPrompt = false;
  closed = false;

  /** `compression`: whether MCCP2 is offered (`[telnet] compression`). */
  constructor(socket: Socket, options: { logger: Logger; address: string; hooks: TerminalHooks; compression: boolean }) {
    this.socket = socket;
    this.logger = options.logger;
    this.address = options.address;
    this.hooks = options.hooks;
    this.compression = options.compression;
    const performs = options.compression ? LOCAL_OPTIONS : new Set([...LOCAL_OPTIONS].filter((option) => option !== COMPRESS2));
    this.negotiation = new Negotiation(
      (bytes) => this.write(bytes),
      { changed: (side, option, on) => this.optionChanged(side, option, on), refused: (side, option) => this.optionRefused(side, option) },
      performs,
    );
    this.parser = new TelnetParser({
      data: (bytes) => {
        for (const line of this.lines.feed(bytes)) this.received(line);
      },
      negotiate: (verb, option) => this.negotiation.receive(verb, option),
      subnegotiation: (option, data) => this.subnegotiation(option, data),
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.guarded('input', () => this.parser.feed(chunk)));
    socket.on('error', (err) => this.logger.debug('Telnet connection error', { error: err.message }));
    socket.on('close', () => {
      // zlib's memory goes with the connection, not when the collector finds it.
      this.deflate?.destroy();
      this.hooks.closed();
    });
  }

  /**
   * Offers what the server speaks (GMCP, CHARSET; then EOR, MSSP, MXP and MCCP2) and asks what
   * the client knows (NAWS, TTYPE).
   */
  negotiate(): void {
    this.negotiation.offer(GMCP);
    this.negotiation.offer(CHARSET);
    this.negotiation.ask(NAWS);
    this.negotiation.ask(TTYPE);
    this.negotiation.offer(EOR);
    this.negotiation.offer(MSSP);
    this.negotiation.offer(MXP);
    if (this.compression) this.negotiation.offer(COMPRESS2);
  }

  /**
   * Runs what a client's bytes or an event set off outside the line loop: a fault there closes
   * this connection, never the server (an uncaught error in a socket handler would), nor stops
   * an event on its way to other connections.
   */
  guarded(what: string, work: () => void): void {
    try {
      work();
    } catch (err) {
      this.logger.error(`Telnet ${what} failed`, { error: (err as Error).message, stack: (err as Error).stack });
      this.close('Something went wrong on the server.');
    }
  }

  // --- Reading ---

  private received(line: Line): void {
    if (this.closed) return;
    // The client's Enter ended the prompt's line.
    this.atPrompt = false;
    this.enqueue(this.input(line));
    this.hooks.received();
  }

  private enqueue(input: Input): void {
    this.inbox.push(input);
    if (this.inbox.length >= MAX_PENDING_LINES) this.socket.pause();
    this.wake?.();
  }

  /** A client's GMCP login, taken after the lines before it. */
  credentials(account: string, password: string): void {
    if (!this.closed) this.enqueue({ credentials: { account, password } });
  }

  private input(line: Line): Input {
    if (line.tooLong) return TOO_LONG;
    const text = edited(this.decoder.decode(line.bytes));
    if ([...text].length > MAX_COMMAND_CHARACTERS) return TOO_LONG;
    return findNul(text, 'line') === null ? text : HOLDS_NUL;
  }

  /**
   * The next line the player sent (or a GMCP login); one refused (too long, or holding NUL) is
   * answered, then `again` asks anew.
   */
  async nextLine(again: () => void): Promise<string | Credentials> {
    for (;;) {
      while (this.inbox.length === 0 && !this.closed) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = null;
      }
      if (this.closed) throw new ConnectionClosed();
      const input = this.inbox.shift()!;
      if (this.inbox.length < MAX_PENDING_LINES / 2 && this.socket.isPaused()) this.socket.resume();
      if (typeof input === 'string' || 'credentials' in input) return input;
      this.print(input.refused);
      again();
    }
  }

  /** The next line typed: a GMCP login sent while a question waits is refused. */
  private async nextText(again: () => void): Promise<string> {
    for (;;) {
      const input = await this.nextLine(again);
      if (typeof input === 'string') return input;
      this.gmcp('Char.Login.Result', { success: false, message: 'Answer the question first.' });
    }
  }

  /** Asks a question and reads the answer; a hidden one is not echoed (IAC WILL ECHO while it is typed). */
  async ask(question: string, hidden = false): Promise<string> {
    if (hidden) this.negotiation.offer(ECHO);
    this.prompt(question);
    try {
      const answer = await this.nextText(() => this.prompt(question));
      return hidden ? answer : answer.trim();
    } finally {
      if (hidden) {
        // The player's Enter was not echoed either (unless the client kept echoing itself).
        if (this.negotiation.localOn(ECHO)) this.write('\r\n');
        this.negotiation.withdraw(ECHO);
      }
    }
  }

  // --- Protocol ---

  private optionChanged(side: 'local' | 'remote', option: number, on: boolean): void {
    if (side === 'local' && option === MXP) this.mxp(on);
    if (!on) return;
    if (side === 'remote' && option === TTYPE) this.write(subnegotiation(TTYPE, Buffer.of(TTYPE_SEND)));
    if (side !== 'local') return;
    if (option === CHARSET) this.write(subnegotiation(CHARSET, Buffer.from([CHARSET_REQUEST, ...Buffer.from(';UTF-8')])));
    else if (option === GMCP) this.hooks.gmcpOn();
    else if (option === MSSP) {
      this.hooks.mssp().then(
        (variables) => this.write(msspMessage(variables)),
        (err: Error) => this.logger.error('Telnet MSSP failed', { error: err.message }),
      );
    }
    else if (option === COMPRESS2) this.compress();
  }

  /** A client that refuses CHARSET gets no UTF-8 (as one that rejects the negotiation). */
  private optionRefused(side: 'local' | 'remote', option: number): void {
    if (side === 'local' && option === CHARSET) this.render.ascii = true;
  }

  /** MXP on: no line is read for tags but those the door marks (render.ts); off: plain text again. */
  private mxp(on: boolean): void {
    this.render.mxp = on;
    if (on) this.write(MXP_LOCKED);
  }

  /**
   * MCCP2: IAC SB COMPRESS2 IAC SE, then everything is one zlib stream, flushed after each
   * burst of writes so the client reads it at once. The server compresses only: it offers no
   * MCCP3, so it never inflates what a client sends (no decompression bomb to bound).
   */
  private compress(): void {
    if (this.deflate || this.closed) return;
    this.socket.write(subnegotiation(COMPRESS2, Buffer.alloc(0)));
    const deflate = createDeflate(DEFLATE_OPTIONS);
    deflate.on('data', (chunk: Buffer) => {
      if (!this.socket.destroyed) this.socket.write(chunk);
    });
    deflate.on('error', (err) => {
      this.logger.error('Telnet compression failed', { error: err.message });
      this.socket.destroy();
    });
    this.deflate = deflate;
  }

  /** Whether what is written is compressed (MCCP2). */
  get compressed(): boolean {
    return this.deflate !== null;
  }

  private subnegotiation(option: number, data: Buffer): void {
    if (option === NAWS && data.length === 4) this.render.resize(data.readUInt16BE(0));
    else if (option === TTYPE && data[0] === TTYPE_IS) this.terminalType(data.subarray(1).toString('latin1').trim());
    else if (option === CHARSET) this.charset(data);
    else if (option === GMCP) this.gmcpReceived(data);
  }

  /**
   * MTTS: the first answer names the client, the second the terminal, the third is
   * `MTTS <bits>`; a repeated answer ends the list. A `DUMB` terminal or MTTS without its ANSI
   * bit turns colours off, unless the player chose.
   */
  private terminalType(name: string): void {
    // Answers nobody asked for are ignored: a client cannot make the list grow.
    if (this.terminalTypes.length >= TTYPE_ROUNDS) return;
    const previous = this.terminalTypes.at(-1);
    this.terminalTypes.push(name);
    const mtts = /^MTTS (\d+)$/i.exec(name);
    if (!this.colourChosen && (name.toUpperCase() === 'DUMB' || (mtts && (Number(mtts[1]) & MTTS_ANSI) === 0))) this.render.colour = false;
    if (!this.screenReaderChosen && mtts && (Number(mtts[1]) & MTTS_SCREEN_READER) !== 0) this.render.screenReader = true;
    if (!mtts && name !== previous && this.terminalTypes.length < TTYPE_ROUNDS) this.write(subnegotiation(TTYPE, Buffer.of(TTYPE_SEND)));
  }

  /** CHARSET: the server asked for UTF-8 (the answer), or the client offers its list (answered). */
  private charset(data: Buffer): void {
    const isUtf8 = (name: string) => /^utf-?8$/i.test(name.trim());
    if (data[0] === CHARSET_ACCEPTED) this.render.ascii = !isUtf8(data.subarray(1).toString('latin1'));
    else if (data[0] === CHARSET_REJECTED) this.render.ascii = true;
    else if (data[0] === CHARSET_REQUEST && data.length > 2) {
      const offered = data.subarray(2).toString('latin1').split(String.fromCharCode(data[1]!));
      const utf8 = offered.find(isUtf8);
      this.render.ascii = utf8 === undefined;
      this.write(subnegotiation(CHARSET, utf8 === undefined ? Buffer.of(CHARSET_REJECTED) : Buffer.from([CHARSET_ACCEPTED, ...Buffer.from(utf8, 'latin1')])));
    }
  }

  private gmcpReceived(payload: Buffer): void {
    const { name, data } = gmcp.decode(payload);
    this.supports.apply(name, data);
    if (/^Core\.Ping$/i.test(name)) this.gmcp('Core.Ping', {});
    else if (!/^Core\./i.test(name)) this.hooks.gmcp(name, data);
  }

  /** A GMCP message, when the client agreed to GMCP and wants its package. */
  gmcp(name: string, data: unknown): void {
    if (this.negotiation.localOn(GMCP) && this.supports.wants(name)) this.write(subnegotiation(GMCP, gmcp.encode(name, data)));
  }

  // --- Writing ---

  /** Server text (an answer, a room), rendered for this terminal; `linkOf` names the links of its lines (MXP). */
  print(text: string, linkOf?: (line: string) => Link | null): void {
    this.output(this.render.text(text, undefined, linkOf));
  }

  /** A line in one style (chat by channel), taken as it is. */
  styled(text: string, style?: Style): void {
    this.output(this.render.styled(text, style));
  }

  /**
   * One of the server's prompts: the client's input follows it on the same line; it ends with
   * IAC EOR for a client that agreed to TELOPT_EOR, else IAC GA, so clients can tell it apart.
   */
  prompt(text: string): void {
    this.write(this.render.prompt(text));
    this.write(this.negotiation.localOn(EOR) ? END_OF_RECORD : GO_AHEAD);
    this.atPrompt = true;
  }

  /** Lines: after a prompt nobody answered (an event while the player reads), on a line of their own. */
  private output(lines: string): void {
    if (this.atPrompt && lines !== '') this.write('\r\n');
    this.atPrompt = false;
    this.write(lines);
  }

  get colour(): boolean {
    return this.render.colour;
  }

  /** Colours as the player chose them (`colour`, `config colour`): the terminal type no longer decides. */
  set colour(on: boolean) {
    this.render.colour = on;
    this.colourChosen = true;
  }

  get screenReader(): boolean {
    return this.render.screenReader;
  }

  /** Screen-reader mode as the player chose it (`config screenreader`): MTTS no longer decides. */
  set screenReader(on: boolean) {
    this.render.screenReader = on;
    this.screenReaderChosen = true;
  }

  private write(data: string | Buffer): void {
    if (this.closed || this.socket.destroyed) return;
    if (this.deflate) {
      this.deflate.write(data);
      this.flushSoon();
    } else this.socket.write(data);
    const unread = this.socket.writableLength + (this.deflate ? this.deflate.writableLength + this.deflate.readableLength : 0);
    if (unread > MAX_OUTPUT_BYTES) {
      this.logger.info('Telnet client does not read its output; disconnecting', { address: this.address });
      this.socket.destroy();
    }
  }

  /** One sync flush per burst of writes: each would cost a few bytes of its own. */
  private flushSoon(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => {
      this.flushQueued = false;
      if (this.deflate && !this.deflate.destroyed && !this.deflate.writableEnded) this.deflate.flush(zlib.Z_SYNC_FLUSH);
    });
  }

  /** Says goodbye (when there is something to say) and hangs up; a read waiting for a line ends. */
  close(message?: string): void {
    if (this.closed) return;
    if (message) this.print(message);
    this.closed = true;
    if (this.deflate) {
      // The stream's end goes out first, so the client reads the goodbye before the hang-up.
      this.deflate.once('end', () => this.socket.end());
      this.deflate.end();
    } else this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
    this.wake?.();
  }
}
