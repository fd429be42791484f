/**
 * One telnet connection: its terminal (src/telnet/terminal.ts: the protocol, lines in, text
 * out) and the player's way through the game's own services, the same ones HTTP calls, one
 * screen at a time (src/telnet/*-screen.ts): the connection screen (connect, create, guest, or a
 * username and a hidden password; or GMCP's Char.Login), the account's characters (play, new),
 * and play. Lines are read one at a time by one loop, so a question ("Password:") takes the next
 * line whatever was typed ahead. The connection holds its session like any client holds its
 * token: `quit` and the door's timeouts log it out, while a connection the client drops leaves
 * its character link-dead, as a closed browser tab does, for `connect` to take over.
 */
import type { Socket } from 'node:net';
import type { Config } from '../config/config.ts';
import type { StreamEndReason } from '../db/event-bus.ts';
import type { CharacterSummary } from '../db/repositories/character-repository.ts';
import type { Logger } from '../logging/logger.ts';
import type { AuthenticatedSession } from '../services/accounts/session-service.ts';
import type { TelnetSettings } from '../services/accounts/telnet-settings.ts';
import type { Services } from '../services/container.ts';
import type { Limit } from '../services/limits/limits.ts';
import { DomainError, Unauthenticated } from '../shared/errors.ts';
import { END_TEXT } from '../shared/event-text.ts';
import { parseCommand } from '../shared/plain-text.ts';
import { characters, showCharacters } from './characters-screen.ts';
import { login, showWelcome } from './login-screen.ts';
import type { MsspVariables } from './mssp.ts';
import { play, playRequest, sendCharacter, type Playing } from './play-screen.ts';
import type { Screen } from './screen.ts';
import { ConnectionClosed, TelnetTerminal, type Credentials } from './terminal.ts';

/** What the telnet door uses of the game's services: the same ones as the HTTP routes. */
export type TelnetServices = Pick<
  Services,
  'accounts' | 'telnetSettings' | 'entry' | 'characters' | 'worldAccess' | 'sessions' | 'game' | 'streams' | 'worlds' | 'limits' | 'health'
>;

export interface ConnectionContext {
  services: TelnetServices;
  config: Config['telnet'];
  /** The server's log; the connection's lines carry its peer address, and its username once logged in. */
  logger: Logger;
  version: string;
  /** The client address as the rate limits key it. */
  address: string;
  /** The address the socket came from, for the log. */
  peer: string;
  /** The listeners' ports and when the door started (epoch seconds), for MSSP. */
  listening: { port: number; tlsPort: number | null; since: number };
}

/** What a GMCP Char.Login.Credentials carries (Mudlet's auto-login). */
function credentialsOf(data: unknown): { account: string; password: string } | null {
  if (typeof data !== 'object' || data === null) return null;
  const { account, password } = data as Record<string, unknown>;
  return typeof account === 'string' && typeof password === 'string' ? { account, password } : null;
}

export class TelnetConnection {
  readonly terminal: TelnetTerminal;
  readonly s: TelnetServices;
  readonly address: string;
  private readonly c: ConnectionContext;
  /** The connection's log: its peer address, and its username once logged in. */
  log: Logger;
  private released: Promise<void> = Promise.resolve();
  private loginTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The session's token: like any client, the door holds it while the player is logged in. */
  private token: string | null = null;
  private session: AuthenticatedSession | null = null;
  /** What the account chose with `config` (read at login). */
  settings: TelnetSettings | null = null;
  /** The account's characters, as `play <number>` counts them. */
  characters: CharacterSummary[] = [];
  /** The character being played, once one is. */
  playing: Playing | null = null;

  constructor(socket: Socket, context: ConnectionContext) {
    this.c = context;
    this.s = context.services;
    this.address = context.address;
    this.log = context.logger.child({ peer: context.peer });
    this.terminal = new TelnetTerminal(socket, {
      logger: this.log,
      address: context.address,
      compression: context.config.compression,
      hooks: {
        received: () => this.touch(),
        gmcpOn: () => this.gmcpOn(),
        gmcp: (name, data) => this.gmcp(name, data),
        mssp: () => this.mssp(),
        // The client hung up: the character stays, link-dead, for a `connect` to take over.
        closed: () => this.close(undefined, true),
      },
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

  /** Resolves once the connection has closed and its session was logged out (or left link-dead). */
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
      for (;;) {
        const input = await this.terminal.nextLine(() => this.showPrompt());
        await (typeof input === 'string' ? this.handle(input) : this.gmcpLogIn(input));
      }
    } catch (err) {
      if (err instanceof ConnectionClosed) return;
      this.log.error('Telnet connection failed', { error: (err as Error).message, stack: (err as Error).stack });
      this.close('Something went wrong on the server.');
    }
  }

  /**
   * A line for the screen the connection is on: one of its own commands, or what it does with
   * any other; then the screen's prompt (an empty line gets the prompt alone).
   */
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
    this.log.error('Telnet command failed', { error: (err as Error).message, stack: (err as Error).stack });
    this.terminal.print('Something went wrong on the server. Try again.');
  }

  showPrompt(): void {
    const prompt = this.screen.prompt(this);
    if (prompt !== null) this.terminal.prompt(prompt);
  }

  // --- GMCP and MSSP ---

  /** GMCP agreed: a client that logs in by itself (Mudlet) learns it may; a player's character and room are sent. */
  private gmcpOn(): void {
    if (!this.token) this.terminal.gmcp('Char.Login.Default', { type: ['password-credentials'] });
    sendCharacter(this);
  }

  private gmcp(name: string, data: unknown): void {
    if (/^Char\.Login\.Credentials$/i.test(name)) {
      const given = credentialsOf(data);
      if (given) this.terminal.credentials(given.account, given.password);
      else this.terminal.gmcp('Char.Login.Result', { success: false, message: 'Char.Login.Credentials takes {"account": …, "password": …}.' });
    } else if (this.playing) playRequest(this, name);
  }

  /** Char.Login.Credentials, in line order: logs in as `connect` does and answers Char.Login.Result. */
  private async gmcpLogIn({ credentials }: Credentials): Promise<void> {
    if (this.token) {
      this.terminal.gmcp('Char.Login.Result', { success: false, message: 'Already logged in.' });
      return;
    }
    try {
      await this.logIn(credentials.account, credentials.password);
      this.terminal.gmcp('Char.Login.Result', { success: true });
      await showCharacters(this);
    } catch (err) {
      this.terminal.gmcp('Char.Login.Result', { success: false, message: err instanceof DomainError ? err.message : 'Something went wrong on the server.' });
      this.report(err);
    }
    if (!this.terminal.closed) this.showPrompt();
  }

  /** What MSSP tells MUD directories, from configuration and the running server. */
  private async mssp(): Promise<MsspVariables> {
    const { config, version, listening } = this.c;
    const worlds = this.s.worlds.list().filter((w) => w.active);
    const health = await this.s.health.check();
    const players = 'active_players' in health ? health.active_players : 0;
    const optional = { HOSTNAME: config.msspHostname, CONTACT: config.msspContact, WEBSITE: config.msspWebsite };
    return {
      NAME: config.msspName,
      PLAYERS: players,
      UPTIME: listening.since,
      CODEBASE: `mud-server ${version}`,
      PORT: listening.port,
      SSL: listening.tlsPort ?? 0,
      ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== '')),
      LANGUAGE: config.msspLanguage,
      GENRE: config.msspGenre,
      FAMILY: 'Custom',
      WORLDS: worlds.map((w) => w.name),
      AREAS: worlds.reduce((n, w) => n + w.zones.size, 0),
      ROOMS: worlds.reduce((n, w) => n + w.rooms.size, 0),
      ANSI: 1,
      GMCP: 1,
      MCCP: config.compression ? 1 : 0,
      MSDP: 0,
      MSP: 0,
      MXP: 1,
      'UTF-8': 1,
      VT100: 0,
      'XTERM 256 COLORS': 0,
    };
  }

  // --- Sessions and limits ---

  /**
   * POST /login's service, limits and client type; then the connection holds the session and
   * applies what the account chose with `config`. Logged as the HTTP door logs its requests,
   * without the password: who logged in from where, or what refused whom.
   */
  async logIn(username: string, password: string): Promise<void> {
    const typed = username.trim().normalize('NFC');
    let result;
    try {
      // Usernames are unique in any letter case: the door takes `connect tinaplayer` for TinaPlayer.
      result = await this.s.accounts.login((await this.s.accounts.usernameFor(typed)) ?? typed, password, undefined, 'telnet', this.address);
    } catch (err) {
      this.log.info('Telnet login failed', { username: [...typed].slice(0, 40).join(''), refused: (err as Error).name, reason: (err as Error).message });
      throw err;
    }
    this.token = result.session_id;
    this.session = await this.validSession();
    this.log = this.log.child({ username: this.session.username });
    this.log.info('Telnet login', { session_id: this.session.id });
    if (this.loginTimer) clearTimeout(this.loginTimer);
    this.loginTimer = null;
    this.touch();
    this.settings = await this.s.telnetSettings.get(this.session.userId);
    if (this.settings.colour !== null) this.terminal.colour = this.settings.colour;
    if (this.settings.screenReader) this.terminal.screenReader = true;
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
   * Logs the session out once the connection is gone by the player's or the server's doing
   * (`quit`, a timeout, a shutdown): nobody else holds its token.
   */
  private async release(): Promise<void> {
    if (!this.token) return;
    const token = this.token;
    this.token = null;
    try {
      await this.s.accounts.logout(await this.s.sessions.validate(token));
    } catch (err) {
      if (!(err instanceof Unauthenticated)) this.log.error('Telnet logout failed', { error: (err as Error).message });
    }
  }

  /**
   * Says goodbye (when there is something to say), hangs up, and logs the session out; when
   * the client dropped the connection (`linkdead`) while playing, the session stays and its
   * character is link-dead ([presence] linkdead_seconds), as when a browser tab closes: `connect` and `play`
   * take it over where it stands (takeOver in src/telnet/play-screen.ts).
   */
  close(message?: string, linkdead = false): void {
    if (this.terminal.closed) return;
    this.terminal.close(message);
    for (const timer of [this.loginTimer, this.idleTimer]) if (timer) clearTimeout(timer);
    if (this.playing) this.s.streams.closed(this.playing.listener);
    if (linkdead && this.playing && this.token) {
      this.log.info('Telnet connection dropped; the session stays, link-dead', { session_id: this.session?.id });
      this.token = null;
    }
    this.released = this.release();
  }
}
