/**
 * A raw-socket telnet client for the telnet door's tests. It reads the server's bytes with the
 * server's own parser (the parser's unit tests stand behind it), records every negotiation and
 * subnegotiation, answers negotiation like a MUD client configured by the test, and lets tests
 * wait for text instead of sleeping.
 */
import { connect as connectPlain, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { createInflate, type Inflate } from 'node:zlib';
import { COMPRESS2, DO, DONT, ECHO, EOR_MARK, GA, GMCP, IAC, NAWS, negotiation, SB, SE, subnegotiation, TelnetParser, TTYPE, WILL, WONT, type Verb } from '../../src/telnet/protocol.ts';

export interface ClientOptions {
  /** Agree to GMCP (and send Core.Supports.Set with these packages, when given). */
  gmcp?: boolean | string[];
  /** Agree to NAWS and report this width. */
  width?: number;
  /** Agree to TTYPE and answer these names in turn. */
  terminalTypes?: string[];
  /** Connect with TLS (self-signed certificates accepted). */
  tls?: boolean;
  /** Keep this end open when the server hangs up, as a client that never closes by itself (plain only). */
  halfOpen?: boolean;
  /** Agree to these options the server offers (IAC WILL), besides ECHO and GMCP: EOR, MSSP, MXP, COMPRESS2. */
  accept?: number[];
}

export interface Negotiated {
  verb: Verb;
  option: number;
  /** Where in the text it arrived (what had been read before it). */
  at: number;
}

const VERB_NAMES: Record<number, string> = { [WILL]: 'WILL', [WONT]: 'WONT', [DO]: 'DO', [DONT]: 'DONT' };

export class TelnetClient {
  readonly socket: Socket;
  private text = '';
  private cursor = 0;
  readonly negotiations: Negotiated[] = [];
  readonly subnegotiations: { option: number; data: Buffer }[] = [];
  /** Where each prompt ended (IAC GA or IAC EOR): the length of the text read by then, and which. */
  readonly prompts: Array<{ at: number; mark: 'GA' | 'EOR' }> = [];
  private readonly decoder = new TextDecoder();
  private readonly waiters = new Set<() => void>();
  private ttypeIndex = 0;
  /** The server's zlib stream once MCCP2 began, and what came through it. */
  private inflate: Inflate | null = null;
  inflateError: Error | null = null;
  /** Once MCCP2 began: the bytes read from the socket, and what they inflated to. */
  compressedBytes = 0;
  inflated = 0;
  readonly closed: Promise<void>;
  private isClosed = false;

  private constructor(socket: Socket, options: ClientOptions) {
    this.socket = socket;
    const parser = new TelnetParser({
      data: (bytes) => {
        this.text += this.decoder.decode(bytes, { stream: true });
        this.notify();
      },
      negotiate: (verb, option) => {
        this.negotiations.push({ verb, option, at: this.text.length });
        this.answer(verb, option, options);
        this.notify();
      },
      command: (byte) => {
        if (byte === GA || byte === EOR_MARK) this.prompts.push({ at: this.text.length, mark: byte === GA ? 'GA' : 'EOR' });
        this.notify();
      },
      subnegotiation: (option, data) => {
        this.subnegotiations.push({ option, data });
        if (option === TTYPE && data[0] === 1) {
          const names = options.terminalTypes ?? [];
          const name = names[Math.min(this.ttypeIndex++, names.length - 1)] ?? '';
          this.send(subnegotiation(TTYPE, Buffer.from([0, ...Buffer.from(name)])));
        }
        this.notify();
      },
    });
    // MCCP2: after IAC SB COMPRESS2 IAC SE everything the server sends is one zlib stream.
    const start = Buffer.of(IAC, SB, COMPRESS2, IAC, SE);
    socket.on('data', (chunk: Buffer) => {
      if (this.inflate) {
        this.compressedBytes += chunk.length;
        return void this.inflate.write(chunk);
      }
      const at = chunk.indexOf(start);
      if (at < 0) return parser.feed(chunk);
      parser.feed(chunk.subarray(0, at + start.length));
      this.inflate = createInflate();
      this.inflate.on('data', (plain: Buffer) => {
        this.inflated += plain.length;
        parser.feed(plain);
      });
      this.inflate.on('error', (err) => {
        this.inflateError = err;
        this.notify();
      });
      this.compressedBytes += chunk.length - at - start.length;
      this.inflate.write(chunk.subarray(at + start.length));
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        // What the zlib stream still holds is read before the connection counts as closed.
        const done = () => {
          this.isClosed = true;
          this.notify();
          resolve();
        };
        if (!this.inflate || this.inflate.readableEnded || this.inflate.destroyed) return done();
        this.inflate.once('end', done);
        this.inflate.once('error', done);
        this.inflate.end();
        this.inflate.resume();
      });
    });
    socket.on('error', () => undefined);
  }

  static async connect(port: number, options: ClientOptions = {}, host = '127.0.0.1'): Promise<TelnetClient> {
    const socket = options.tls ? connectTls({ port, host, rejectUnauthorized: false }) : connectPlain({ port, host, allowHalfOpen: options.halfOpen });
    await new Promise<void>((resolve, reject) => {
      socket.once(options.tls ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new TelnetClient(socket, options);
  }

  private answer(verb: Verb, option: number, options: ClientOptions): void {
    if (verb === WILL) {
      const agree = option === ECHO || (option === GMCP && options.gmcp) || (options.accept ?? []).includes(option);
      this.send(negotiation(agree ? DO : DONT, option));
      if (agree && option === GMCP && Array.isArray(options.gmcp)) this.gmcpSend('Core.Supports.Set', options.gmcp);
    } else if (verb === DO) {
      const agree = (option === NAWS && options.width !== undefined) || (option === TTYPE && options.terminalTypes !== undefined);
      this.send(negotiation(agree ? WILL : WONT, option));
      if (agree && option === NAWS) this.send(subnegotiation(NAWS, Buffer.from([options.width! >> 8, options.width! & 255, 0, 24])));
    }
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  line(text: string): void {
    this.send(`${text}\r\n`);
  }

  gmcpSend(name: string, data: unknown): void {
    this.send(subnegotiation(GMCP, Buffer.from(`${name} ${JSON.stringify(data)}`)));
  }

  /** How often `text` occurs in everything read so far. */
  count(text: string): number {
    return this.text.split(text).length - 1;
  }

  /** Everything read so far (text only, IAC sequences taken out). */
  get all(): string {
    return this.text;
  }

  /**
   * Waits until the text after the cursor matches, then moves the cursor past the match and
   * returns the text up to its end. Fails after `timeoutMs` with what was read.
   */
  async read(pattern: RegExp | string, timeoutMs = 8000): Promise<string> {
    const match = (): number => {
      const rest = this.text.slice(this.cursor);
      if (typeof pattern === 'string') {
        const i = rest.indexOf(pattern);
        return i < 0 ? -1 : i + pattern.length;
      }
      const m = pattern.exec(rest);
      return m ? m.index + m[0].length : -1;
    };
    await this.until(() => match() >= 0, () => `text matching ${String(pattern)}`, timeoutMs);
    const end = this.cursor + match();
    const read = this.text.slice(this.cursor, end);
    this.cursor = end;
    return read;
  }

  /** Whether the server compresses what it sends (MCCP2). */
  get compressed(): boolean {
    return this.inflate !== null;
  }

  /** Waits for the next prompt's end after the cursor and moves the cursor there; returns the prompt's text (what came since the cursor). */
  async prompted(timeoutMs = 8000): Promise<string> {
    const next = () => this.prompts.find((p) => p.at > this.cursor);
    await this.until(() => next() !== undefined, () => 'a prompt (IAC GA or IAC EOR)', timeoutMs);
    const read = this.text.slice(this.cursor, next()!.at);
    this.cursor = next()!.at;
    return read;
  }

  /** Waits for a condition on what was received. */
  async until(condition: () => boolean, what: () => string, timeoutMs = 8000): Promise<void> {
    if (condition()) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (condition()) {
          done();
          resolve();
        } else if (this.isClosed) {
          done();
          reject(new Error(`connection closed while waiting for ${what()}; read since cursor:\n${this.text.slice(this.cursor)}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${what()}; read since cursor:\n${this.text.slice(this.cursor)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  /** GMCP messages received, parsed, with this name. */
  gmcp(name: string): unknown[] {
    return this.subnegotiations
      .filter((s) => s.option === GMCP)
      .map((s) => s.data.toString('utf8'))
      .filter((t) => t.startsWith(`${name} `))
      .map((t) => JSON.parse(t.slice(name.length + 1)) as unknown);
  }

  async gmcpMessage(name: string, count = 1): Promise<unknown> {
    await this.until(() => this.gmcp(name).length >= count, () => `${count} GMCP ${name}`);
    return this.gmcp(name)[count - 1];
  }

  /** The negotiations received, as `WILL 201` strings, for readable assertions. */
  negotiated(): string[] {
    return this.negotiations.map((n) => `${VERB_NAMES[n.verb]} ${n.option}`);
  }

  async waitForNegotiation(verb: Verb, option: number, from = 0): Promise<Negotiated> {
    const find = () => this.negotiations.slice(from).find((n) => n.verb === verb && n.option === option);
    await this.until(() => find() !== undefined, () => `${VERB_NAMES[verb]} ${option}`);
    return find()!;
  }

  /**
   * Waits until the server has let go of a connection this client keeps open (halfOpen): an
   * empty line is sent every 100 ms, and once the server's end is gone a write is refused
   * (EPIPE) and the socket closes. A server that only half-closed keeps taking the lines.
   */
  async closedByServer(timeoutMs = 8000): Promise<void> {
    const probe = setInterval(() => this.send('\r\n'), 100);
    try {
      await this.until(() => this.isClosed, () => 'the server to close the connection', timeoutMs);
    } finally {
      clearInterval(probe);
    }
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  close(): void {
    this.socket.destroy();
  }
}
