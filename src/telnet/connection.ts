/**
 * One telnet connection: its terminal (src/telnet/terminal.ts: the protocol, lines in, text
 * out) and the player's way through the game's own services, the same ones HTTP calls, one
 * screen at a time (src/telnet/*-screen.ts): the connection screen (connect, create, guest, or a
 * username and a hidden password), the account's characters (play, new), and play. Lines are
 * read one at a time by one loop, so a question ("Password:") takes the next line whatever was
 * typed ahead. The connection holds its session like any client holds its token, and logs it
 * out once it is gone.
 */
import type { Socket } from 'node:net';
import type { Config } from '../config/config.ts';
import type { StreamEndReason } from '../db/event-bus.ts';
import type { CharacterSummary } from '../db/repositories/character-repository.ts';
import type { Logger } from '../logging/logger.ts';
import type { AuthenticatedSession } from '../services/accounts/session-service.ts';
import type { Services } from '../services/container.ts';
import type { Limit } from '../services/limits/limits.ts';
import { DomainError, Unauthenticated } from '../shared/errors.ts';
import { END_TEXT } from '../shared/event-text.ts';
import { parseCommand } from '../shared/plain-text.ts';
import { characters } from './characters-screen.ts';
import { login, showWelcome } from './login-screen.ts';
import { play, sendCharacter, type Playing } from './play-screen.ts';
import type { Screen } from './screen.ts';
import { ConnectionClosed, TelnetTerminal } from './terminal.ts';

/** What the telnet door uses of the game's services: the same ones as the HTTP routes. */
export type TelnetServices = Pick<Services, 'accounts' | 'entry' | 'characters' | 'worldAccess' | 'sessions' | 'game' | 'streams' | 'worlds' | 'limits'>;

export interface ConnectionContext {
  services: TelnetServices;
  config: Config['telnet'];
  logger: Logger;
  version: string;
  /** The client address as the rate limits key it. */
  address: string;
}

export class TelnetConnection {
  readonly terminal: TelnetTerminal;
  readonly s: TelnetServices;
  readonly address: string;
  private readonly c: ConnectionContext;
  private released: Promise<void> = Promise.resolve();
  private loginTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The session's token: like any client, the door holds it while the player is logged in. */
  private token: string | null = null;
  private session: AuthenticatedSession | null = null;
  /** The account's characters, as `play <number>` counts them. */
  characters: CharacterSummary[] = [];
  /** The character being played, once one is. */
  playing: Playing | null = null;

  constructor(socket: Socket, context: ConnectionContext) {
    this.c = context;
    this.s = context.services;
    this.address = context.address;
    this.terminal = new TelnetTerminal(socket, {
      logger: context.logger,
      address: context.address,
      hooks: { received: () => this.touch(), gmcpOn: () => sendCharacter(this), closed: () => this.close() },
    });
  }

  /** The session's row id while logged in (for the server, which ends connections whose session ended). */
  get sessionId(): number | null {
    return this.session?.id ?? null;
  }

  /** The screen the connection is on. */
  private get screen(): Screen {
    return this.playing ? play : this.token ? characters : login;
  }

  /** Negotiates, greets and reads lines until the connection closes. */
  start(): void {
    this.terminal.negotiate();
    this.loginTimer = setTimeout(() => this.close('Login timed out.'), this.c.config.loginTimeoutSeconds * 1000);
    this.loginTimer.unref();
    this.terminal.print(`Welcome to mud-server ${this.c.version}. Worlds: ${this.s.worlds.list().filter((w) => w.active).map((w) => w.name).join(', ')}.`);
    showWelcome(this);
    this.showPrompt();
    void this.run();
  }

  /** Resolves once the connection has closed and its session was logged out. */
  async finished(): Promise<void> {
    await this.released;
  }

  /** The session ended elsewhere (kick, ban, expiry, …) or the server stops: tell the player and hang up. */
  sessionEnded(reason: StreamEndReason): void {
    if (this.terminal.closed) return;
    // Every reason but a shutdown means the session is gone already.
    if (reason !== 'shutdown') this.token = null;
    this.close(END_TEXT[reason]);
  }

  private async run(): Promise<void> {
    try {
      for (;;) await this.handle(await this.terminal.nextLine(() => this.showPrompt()));
    } catch (err) {
      if (err instanceof ConnectionClosed) return;
      this.c.logger.error('Telnet connection failed', { error: (err as Error).message, stack: (err as Error).stack });
      this.close('Something went wrong on the server.');
    }
  }

  /** A line for the screen the connection is on: one of its own commands, or what it does with any other. */
  private async handle(line: string): Promise<void> {
    // Not normalized here: `connect <name> <password>` carries a password, compared as typed.
    const text = line.trim();
    const parsed = parseCommand(text);
    if (parsed) {
      const screen = this.screen;
      try {
        const own = screen.commands[parsed.verb];
        await (own ? own(this, parsed.args) : screen.other(this, text, parsed.verb, parsed.args));
      } catch (err) {
        this.report(err);
      }
    }
    if (!this.terminal.closed) this.showPrompt();
  }

  private report(err: unknown): void {
    if (err instanceof ConnectionClosed) throw err;
    if (err instanceof DomainError) {
      this.terminal.print(err.message);
      return;
    }
    this.c.logger.error('Telnet command failed', { error: (err as Error).message, stack: (err as Error).stack });
    this.terminal.print('Something went wrong on the server. Try again.');
  }

  private showPrompt(): void {
    const prompt = this.screen.prompt;
    if (prompt !== null) this.terminal.prompt(prompt);
  }

  // --- Sessions and limits ---

  /** POST /login's service, limit and client type; then the connection holds the session. */
  async logIn(username: string, password: string): Promise<void> {
    await this.limit(this.s.limits.loginByAddress, this.address);
    const typed = username.trim().normalize('NFC');
    // Usernames are unique in any letter case: the door takes `connect tinaplayer` for TinaPlayer.
    const result = await this.s.accounts.login((await this.s.accounts.usernameFor(typed)) ?? typed, password, undefined, 'telnet');
    this.token = result.session_id;
    this.session = await this.validSession();
    if (this.loginTimer) clearTimeout(this.loginTimer);
    this.loginTimer = null;
    this.touch();
    this.terminal.print(`Logged in as ${this.session.username}.`);
  }

  /** The session, validated as every HTTP request's is; a session that ended closes the connection. */
  async validSession(): Promise<AuthenticatedSession> {
    try {
      this.session = await this.s.sessions.validate(this.token ?? undefined);
      return this.session;
    } catch (err) {
      if (!(err instanceof Unauthenticated)) throw err;
      this.token = null;
      this.close('Your session has ended.');
      throw new ConnectionClosed();
    }
  }

  async limit(limit: Limit, key: string): Promise<void> {
    const refused = await limit.hit(key);
    if (refused) throw refused;
  }

  /** Restarts the idle timer of a logged-in connection. */
  private touch(): void {
    if (!this.token || this.terminal.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close('You were idle for too long.'), this.c.config.idleTimeoutSeconds * 1000);
    this.idleTimer.unref();
  }

  /**
   * Logs the session out once the connection is gone: nobody else holds its token, so it
   * could only linger as a character online that nobody plays.
   */
  private async release(): Promise<void> {
    if (!this.token) return;
    const token = this.token;
    this.token = null;
    try {
      await this.s.accounts.logout(await this.s.sessions.validate(token));
    } catch (err) {
      if (!(err instanceof Unauthenticated)) this.c.logger.error('Telnet logout failed', { error: (err as Error).message });
    }
  }

  /** Says goodbye (when there is something to say), hangs up, and logs the session out. */
  close(message?: string): void {
    if (this.terminal.closed) return;
    this.terminal.close(message);
    for (const timer of [this.loginTimer, this.idleTimer]) if (timer) clearTimeout(timer);
    if (this.playing) this.s.streams.closed(this.playing.listener);
    this.released = this.release();
  }
}
