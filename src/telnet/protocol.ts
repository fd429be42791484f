/**
 * The telnet byte stream (RFC 854/855): the parser that takes IAC commands, option
 * negotiation and subnegotiations out of what a client sends, whatever the bytes and however
 * they are split across packets; the line reader that cuts the remaining text into bounded
 * lines; and the encoders for what the server sends. Nothing here knows the game.
 */

export const IAC = 255;
export const DONT = 254;
export const DO = 253;
export const WONT = 252;
export const WILL = 251;
export const SB = 250;
export const GA = 249;
export const SE = 240;
/** End of record (RFC 885): where a prompt ends, for a client that agreed to TELOPT_EOR. */
export const EOR_MARK = 239;

export type Verb = typeof WILL | typeof WONT | typeof DO | typeof DONT;

/** The options this server speaks (every other one is refused). */
export const ECHO = 1;
export const TTYPE = 24;
/** TELOPT_EOR (RFC 885): prompts end with IAC EOR instead of IAC GA. */
export const EOR = 25;
export const NAWS = 31;
export const CHARSET = 42;
/** MUD Server Status Protocol: the server's name, players, uptime… for MUD directories. */
export const MSSP = 70;
/** MCCP2: everything the server sends after IAC SB COMPRESS2 IAC SE is a zlib stream. */
export const COMPRESS2 = 86;
/** MUD eXtension Protocol: `<send>` links in lines the server marks secure. */
export const MXP = 91;
export const GMCP = 201;

/** Largest subnegotiation kept; a longer one is dropped whole (a client's GMCP messages are small). */
export const MAX_SUBNEGOTIATION_BYTES = 8192;

export interface TelnetHandlers {
  /** Text bytes, IAC sequences removed (IAC IAC is one 0xFF byte). */
  data(bytes: Buffer): void;
  negotiate(verb: Verb, option: number): void;
  subnegotiation(option: number, data: Buffer): void;
  /** A command without an option (GA, EOR, NOP, …), for a client that watches for prompts; the server drops them. */
  command?(byte: number): void;
}

/** Where the parser is: in text, after an IAC, before an option, in a subnegotiation. */
const State = { Data: 0, Iac: 1, Negotiate: 2, SubOption: 3, SubData: 4, SubIac: 5 } as const;
type State = (typeof State)[keyof typeof State];

/**
 * Separates a client's bytes into text, negotiation and subnegotiations. It keeps its state
 * between chunks, so a sequence split anywhere (even inside IAC IAC) reads the same as one
 * sent whole. Commands without an option (NOP, GA, AYT, …) are dropped: a MUD has no use for
 * them, and they never reach the text.
 */
export class TelnetParser {
  private readonly handlers: TelnetHandlers;
  private state: State = State.Data;
  private verb: Verb = WILL;
  private option = 0;
  private sub: number[] = [];
  private subOverflow = false;

  constructor(handlers: TelnetHandlers) {
    this.handlers = handlers;
  }

  feed(chunk: Buffer): void {
    let textStart = -1;
    const flushText = (end: number) => {
      if (textStart >= 0 && end > textStart) this.handlers.data(chunk.subarray(textStart, end));
      textStart = -1;
    };
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      switch (this.state) {
        case State.Data:
          if (byte === IAC) {
            flushText(i);
            this.state = State.Iac;
          } else if (textStart < 0) {
            textStart = i;
          }
          break;
        case State.Iac:
          this.command(byte);
          break;
        case State.Negotiate:
          this.state = State.Data;
          this.handlers.negotiate(this.verb, byte);
          break;
        case State.SubOption:
          this.option = byte;
          this.sub = [];
          this.subOverflow = false;
          this.state = State.SubData;
          break;
        case State.SubData:
          if (byte === IAC) this.state = State.SubIac;
          else this.subByte(byte);
          break;
        case State.SubIac:
          if (byte === IAC) {
            this.subByte(IAC);
            this.state = State.SubData;
          } else if (byte === SE) {
            this.state = State.Data;
            if (!this.subOverflow) this.handlers.subnegotiation(this.option, Buffer.from(this.sub));
            this.sub = [];
          } else {
            // IAC and anything but IAC or SE inside a subnegotiation breaks it off: the bytes
            // read as the command they start, as if the subnegotiation had ended.
            this.sub = [];
            this.command(byte);
          }
          break;
      }
    }
    flushText(chunk.length);
  }

  /** The byte after an IAC in text. */
  private command(byte: number): void {
    if (byte === IAC) {
      this.state = State.Data;
      this.handlers.data(Buffer.of(IAC));
    } else if (byte === WILL || byte === WONT || byte === DO || byte === DONT) {
      this.verb = byte;
      this.state = State.Negotiate;
    } else if (byte === SB) {
      this.state = State.SubOption;
    } else {
      this.state = State.Data;
      this.handlers.command?.(byte);
    }
  }

  private subByte(byte: number): void {
    if (this.subOverflow) return;
    if (this.sub.length >= MAX_SUBNEGOTIATION_BYTES) {
      this.subOverflow = true;
      this.sub = [];
      return;
    }
    this.sub.push(byte);
  }
}

/** One line a client sent, without its line ending; `tooLong` when it passed the limit (its bytes are dropped). */
export type Line = { bytes: Buffer; tooLong: false } | { bytes: null; tooLong: true };

/**
 * Cuts text bytes into lines. A line ends at LF, at CR, or at CR LF / CR NUL (RFC 854's two
 * forms, also when split across chunks). A line longer than `maxBytes` is not kept: its bytes
 * are dropped as they come, so a client can never make the server hold more, and the line is
 * reported as too long once it ends.
 */
export class LineReader {
  private readonly maxBytes: number;
  private parts: Buffer[] = [];
  private length = 0;
  private overflow = false;
  private afterCr = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  feed(bytes: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i]!;
      if (this.afterCr) {
        this.afterCr = false;
        if (byte === 0x0a || byte === 0x00) {
          start = i + 1;
          continue;
        }
      }
      if (byte !== 0x0a && byte !== 0x0d) continue;
      this.append(bytes.subarray(start, i));
      lines.push(this.take());
      this.afterCr = byte === 0x0d;
      start = i + 1;
    }
    this.append(bytes.subarray(start));
    return lines;
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0 || this.overflow) return;
    if (this.length + bytes.length > this.maxBytes) {
      this.overflow = true;
      this.parts = [];
      this.length = 0;
      return;
    }
    // A copy: the chunk's buffer is the socket's and is reused.
    this.parts.push(Buffer.from(bytes));
    this.length += bytes.length;
  }

  private take(): Line {
    const line: Line = this.overflow ? { bytes: null, tooLong: true } : { bytes: Buffer.concat(this.parts, this.length), tooLong: false };
    this.parts = [];
    this.length = 0;
    this.overflow = false;
    return line;
  }
}

export function negotiation(verb: Verb, option: number): Buffer {
  return Buffer.of(IAC, verb, option);
}

/** IAC SB option <payload, IAC doubled> IAC SE. */
export function subnegotiation(option: number, payload: Buffer): Buffer {
  const body: number[] = [IAC, SB, option];
  for (const byte of payload) {
    body.push(byte);
    if (byte === IAC) body.push(IAC);
  }
  body.push(IAC, SE);
  return Buffer.from(body);
}

/** Go Ahead: where a prompt without a line ending ends, for clients that show prompts apart. */
export const GO_AHEAD = Buffer.of(IAC, GA);
/** End of record: the same, for a client that agreed to TELOPT_EOR. */
export const END_OF_RECORD = Buffer.of(IAC, EOR_MARK);
