/**
 * One telnet connection: the protocol underneath (negotiation, NAWS, TTYPE, CHARSET, GMCP),
 * then the player's way through the game's own services, the same ones HTTP calls: the
 * connection screen (connect, create, guest, or a username and a hidden password), the
 * account's characters (play, new), and play, where every line is a game command and the
 * character's event stream arrives as text. Lines are read one at a time by one loop, so a
 * question ("Password:") takes the next line whatever was typed ahead.
 */
import type { Socket } from 'node:net';
import type { components } from '../../generated/openapi.d.ts';
import type { Config } from '../config/config.ts';
import type { StreamEndReason } from '../db/event-bus.ts';
import type { CharacterSummary } from '../db/repositories/character-repository.ts';
import type { Logger } from '../logging/logger.ts';
import type { AuthenticatedSession } from '../services/accounts/session-service.ts';
import type { Services } from '../services/container.ts';
import type { WorldEntry } from '../services/worlds/world-access.ts';
import { findNul, NUL_MESSAGE } from '../shared/nul.ts';
import { DomainError, Unauthenticated } from '../shared/errors.ts';
import { chatLine, chatText, END_TEXT, itemLine, movementLine } from '../shared/event-text.ts';
import type { EventListener, StreamEventName } from '../services/game/event-streams.ts';
import type { Actor } from '../services/game/command-table.ts';
import { sessionActor } from '../services/game/game-service.ts';
import { parseCommand } from '../shared/plain-text.ts';
import type { Limit } from '../services/limits/limits.ts';
import { usernameKey } from '../shared/names.ts';
import * as gmcp from './gmcp.ts';
import { Negotiation } from './negotiation.ts';
import { CHARSET, ECHO, GMCP, GO_AHEAD, LineReader, NAWS, subnegotiation, TelnetParser, TTYPE, type Line } from './protocol.ts';
import { Terminal, type Style } from './render.ts';

type Schemas = components['schemas'];

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

/** POST /command's limit (openapi.yaml, CommandRequest.command): telnet lets no longer line through. */
export const MAX_LINE_CHARACTERS = 2000;
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

/** A line as the door reads it, or the answer to one it refuses. */
type Input = string | { refused: string };
const TOO_LONG: Input = { refused: `That line was longer than ${MAX_LINE_CHARACTERS} characters and was ignored.` };
/** Refused as over HTTP (src/shared/nul.ts): a name or command holding NUL would fail inside a PostgreSQL query. */
const HOLDS_NUL: Input = { refused: `That line ${NUL_MESSAGE}; it was ignored.` };

/** Thrown out of a waiting read when the connection closes: unwinds whatever dialogue was running. */
class ConnectionClosed extends Error {}

const TELNET_HELP = ['Telnet:', '  quit - Log out and leave', '  colour on|off - ANSI colours on or off'].join('\n');

const WELCOME_HELP = [
  '  connect <username> <password>   log in',
  '  <username>                      log in; the password is asked for, unechoed',
  '  create <username> <password>    a new account (temporary, for 24 hours)',
  '  guest                           play at once as a guest',
  '  colour off                      no ANSI colours',
  '  quit                            leave',
].join('\n');

/** A command of one screen: it gets the connection and the rest of the line. */
type Handler = (connection: TelnetConnection, rest: string) => Promise<void>;

const colour: Handler = async (c, rest) => c.setColour(rest);
const quit: Handler = async (c) => c.quit();

/** The connection screen's commands; a lone word that is none of them is a username. */
const WELCOME: Readonly<Record<string, Handler>> = {
  connect: (c, rest) => c.connect(rest),
  create: (c, rest) => c.create(rest),
  guest: (c) => c.guest(),
  help: async (c) => c.showWelcome(),
  colour,
  color: colour,
  quit,
};

/** Logged in, choosing a character. */
const MENU: Readonly<Record<string, Handler>> = {
  play: (c, rest) => c.play(rest),
  new: (c, rest) => c.newCharacter(rest),
  list: (c) => c.showCharacters(),
  help: (c) => c.showCharacters(),
  colour,
  color: colour,
  quit,
};

/** Playing: these are the door's own; every other line is a game command. */
const PLAYING: Readonly<Record<string, Handler>> = { quit, colour, color: colour };

function firstWord(text: string): { word: string; rest: string } {
  const match = /^(\S*)\s*([\s\S]*)$/.exec(text)!;
  return { word: match[1]!, rest: match[2]! };
}

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

export class TelnetConnection {
  private readonly socket: Socket;
  private readonly c: ConnectionContext;
  private readonly s: TelnetServices;
  private readonly parser: TelnetParser;
  private readonly lines = new LineReader(MAX_LINE_CHARACTERS * 4);
  private readonly decoder = new TextDecoder('utf-8');
  private readonly negotiation: Negotiation;
  private readonly terminal = new Terminal();
  private readonly supports = new gmcp.Supports();
  private readonly inbox: Input[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  private released: Promise<void> = Promise.resolve();
  private loginTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The session's token: like any client, the door holds it while the player is logged in. */
  private token: string | null = null;
  private session: AuthenticatedSession | null = null;
  private characters: CharacterSummary[] = [];
  private player: Actor | null = null;
  /** The room the character stands in, as the door last heard. */
  private shownRoom: string | null = null;
  /** What the player last read of its room: the answer to its last command, or the room last shown. */
  private lastRead = '';
  /** A game command is running: a room event waits for it (its answer shows the room already). */
  private busy = false;
  private heldRoom: Schemas['RoomEvent'] | null = null;
  private colourChosen = false;
  private terminalTypes: string[] = [];

  /** The character's event stream feeds this. */
  private readonly listener: EventListener = { event: (name, data) => this.onEvent(name, data) };

  constructor(socket: Socket, context: ConnectionContext) {
    this.socket = socket;
    this.c = context;
    this.s = context.services;
    this.negotiation = new Negotiation((bytes) => this.write(bytes), { changed: (side, option, on) => this.optionChanged(side, option, on) });
    this.parser = new TelnetParser({
      data: (bytes) => {
        for (const line of this.lines.feed(bytes)) this.received(line);
      },
      negotiate: (verb, option) => this.negotiation.receive(verb, option),
      subnegotiation: (option, data) => this.subnegotiation(option, data),
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.guarded('input', () => this.parser.feed(chunk)));
    socket.on('error', (err) => this.c.logger.debug('Telnet connection error', { error: err.message }));
    socket.on('close', () => this.close());
  }

  /** The session's row id while logged in (for the server, which ends connections whose session ended). */
  get sessionId(): number | null {
    return this.session?.id ?? null;
  }

  /** Negotiates, greets and reads lines until the connection closes. */
  start(): void {
    this.negotiation.offer(GMCP);
    this.negotiation.offer(CHARSET);
    this.negotiation.ask(NAWS);
    this.negotiation.ask(TTYPE);
    this.loginTimer = setTimeout(() => this.close('Login timed out.'), this.c.config.loginTimeoutSeconds * 1000);
    this.loginTimer.unref();
    this.print(`Welcome to mud-server ${this.c.version}. Worlds: ${this.s.worlds.list().filter((w) => w.active).map((w) => w.name).join(', ')}.`);
    this.showWelcome();
    this.showPrompt();
    void this.run();
  }

  /** Resolves once the connection has closed and its session was logged out. */
  async finished(): Promise<void> {
    await this.released;
  }

  /** The session ended elsewhere (kick, ban, expiry, …) or the server stops: tell the player and hang up. */
  sessionEnded(reason: StreamEndReason): void {
    if (this.closed) return;
    // Every reason but a shutdown means the session is gone already.
    if (reason !== 'shutdown') this.token = null;
    this.close(END_TEXT[reason]);
  }

  private async run(): Promise<void> {
    try {
      // Playing shows no prompt (the game's answers and events are the screen).
      const again = () => {
        if (!this.player) this.showPrompt();
      };
      for (;;) await this.handle(await this.nextLine(again));
    } catch (err) {
      if (err instanceof ConnectionClosed) return;
      this.c.logger.error('Telnet connection failed', { error: (err as Error).message, stack: (err as Error).stack });
      this.close('Something went wrong on the server.');
    }
  }

  private async handle(line: string): Promise<void> {
    // Not normalized here: `connect <name> <password>` carries a password, compared as typed.
    const text = line.trim();
    const parsed = parseCommand(text);
    if (!parsed) {
      if (!this.player) this.showPrompt();
      return;
    }
    const { verb, args } = parsed;
    try {
      if (this.player) await this.playLine(text, verb, args);
      else if (this.token) await this.menuLine(verb, args);
      else await this.welcomeLine(text, verb, args);
    } catch (err) {
      this.report(err);
    }
    if (!this.player && !this.closed) this.showPrompt();
  }

  private report(err: unknown): void {
    if (err instanceof ConnectionClosed) throw err;
    if (err instanceof DomainError) {
      this.print(err.message);
      return;
    }
    this.c.logger.error('Telnet command failed', { error: (err as Error).message, stack: (err as Error).stack });
    this.print('Something went wrong on the server. Try again.');
  }

  // --- The connection screen ---

  showWelcome(): void {
    this.print(WELCOME_HELP);
  }

  private showPrompt(): void {
    this.prompt(this.token ? '> ' : 'Username: ');
  }

  private async welcomeLine(text: string, verb: string, args: string): Promise<void> {
    const command = WELCOME[verb];
    if (command) return command(this, args);
    // A lone word is a username: its password is asked for, and not echoed.
    if (args === '') return this.connect(text);
    this.print(`Unknown command '${verb}'. Type help for the commands.`);
  }

  async connect(rest: string): Promise<void> {
    const { word, rest: given } = firstWord(rest);
    const username = word || (await this.ask('Username: '));
    const password = given || (await this.ask('Password: ', true));
    await this.logIn(username, password);
    await this.showCharacters();
  }

  async create(rest: string): Promise<void> {
    const { word, rest: given } = firstWord(rest);
    const username = word || (await this.ask('New username: '));
    const password = given || (await this.ask('Password (12 or more characters): ', true));
    const confirm = given || (await this.ask('The password again: ', true));
    await this.limit(this.s.limits.registerByAddress, this.c.address);
    await this.limit(this.s.limits.registerByUsername, usernameKey(username));
    this.print((await this.s.accounts.register(username, password, confirm)).message);
    await this.logIn(username, password);
    await this.showCharacters();
  }

  async guest(): Promise<void> {
    const name = (await this.ask("Your character's name: ")).normalize('NFC');
    const password = await this.ask('A password, to come back as this guest (12 or more characters): ', true);
    const confirm = await this.ask('The password again: ', true);
    await this.limit(this.s.limits.registerByAddress, this.c.address);
    const guest = await this.s.entry.registerGuest(password, confirm, name);
    this.print(guest.message);
    await this.logIn(guest.username, password);
    await this.enter(guest.character_id, guest.world_id);
  }

  /** POST /login's service, limit and client type; then the connection holds the session. */
  private async logIn(username: string, password: string): Promise<void> {
    await this.limit(this.s.limits.loginByAddress, this.c.address);
    const result = await this.s.accounts.login(username.trim().normalize('NFC'), password, undefined, 'telnet');
    this.token = result.session_id;
    this.session = await this.validSession();
    if (this.loginTimer) clearTimeout(this.loginTimer);
    this.loginTimer = null;
    this.touch();
    this.print(`Logged in as ${this.session.username}.`);
  }

  // --- The account's characters ---

  private async menuLine(verb: string, args: string): Promise<void> {
    const command = MENU[verb];
    if (command) return command(this, args);
    this.print('Type play <number or name>, new <world>, list or quit.');
  }

  /** The account's characters in every world it may enter (what `play <number>` counts in), and the worlds. */
  private async loadCharacters(): Promise<WorldEntry[]> {
    const session = await this.validSession();
    const worlds = await this.s.worldAccess.listForAccount(session.userId, session.role);
    const playable = worlds.filter((w) => w.can_access && w.current_character_count > 0);
    this.characters = (await Promise.all(playable.map((w) => this.s.characters.list(session, w.id)))).flat();
    return worlds;
  }

  /** The characters numbered, with their worlds, and the worlds that take a new character. */
  async showCharacters(): Promise<void> {
    const worlds = await this.loadCharacters();
    const names = new Map(worlds.map((w) => [w.id, w.name ?? w.id]));
    const lines = this.characters.length === 0 ? ['You have no characters yet.'] : ['Your characters:', ...this.characters.map((ch, i) => `  ${i + 1}. ${ch.name} (${names.get(ch.world_id) ?? ch.world_id})`)];
    const open = worlds.filter((w) => w.can_create);
    if (open.length > 0) {
      lines.push('New characters can be made in:', ...open.map((w) => `  ${w.id} - ${w.name ?? w.id} (${w.current_character_count}/${w.slot_limit_per_account} used)`));
    }
    lines.push('Type play <number or name>, new <world> or quit.');
    this.print(lines.join('\n'));
  }

  async play(rest: string): Promise<void> {
    const wanted = rest.trim();
    if (this.characters.length === 0) await this.loadCharacters();
    const byNumber = /^\d+$/.test(wanted) ? this.characters[Number(wanted) - 1] : undefined;
    const character = byNumber ?? this.characters.find((ch) => ch.name.toLowerCase() === wanted.normalize('NFC').toLowerCase());
    if (!character) {
      this.print(wanted ? `You have no character '${wanted}'. Type list to see them.` : 'Play whom? Type play <number or name>.');
      return;
    }
    await this.enter(character.id, character.world_id);
  }

  async newCharacter(rest: string): Promise<void> {
    const worldId = rest.trim();
    if (!worldId) {
      this.print('Usage: new <world>');
      return;
    }
    this.print((await this.s.characters.create(await this.validSession(), worldId)).message);
    await this.showCharacters();
  }

  /** Selects the character (as POST /characters/select does), follows its events, shows where it stands. */
  private async enter(characterId: number, worldId: string): Promise<void> {
    await this.s.characters.select(await this.validSession(), characterId, worldId);
    const session = await this.validSession();
    const player = sessionActor(session);
    await this.s.streams.listen(session.id, { accountId: session.userId, address: this.c.address }, player, this.listener);
    this.player = player;
    this.shownRoom = player.roomId;
    this.gmcp('Char.Name', { name: player.name, fullname: player.name });
    const world = this.s.worlds.get(player.worldId);
    this.print(`You play ${player.name} in ${world?.name ?? player.worldId}. Type help for the commands.`);
    if (player.roomId) {
      this.sendRoomInfo(player.roomId);
      this.lastRead = (await this.s.game.core.showRoom(player, player.roomId))?.look ?? '';
      this.write(this.terminal.text(this.lastRead));
    }
  }

  // --- Play ---

  /** One game command, through POST /command's service, throttle and permissions. */
  private async playLine(text: string, verb: string, args: string): Promise<void> {
    const own = PLAYING[verb];
    if (own) return own(this, args);
    const session = await this.validSession();
    this.busy = true;
    try {
      const result = await this.s.game.play(sessionActor(session), text, String(session.id));
      this.write(this.terminal.text(verb === 'help' || verb === '?' ? `${result.message}\n${TELNET_HELP}` : result.message));
      this.lastRead = result.message;
    } finally {
      this.busy = false;
      const held = this.heldRoom;
      this.heldRoom = null;
      if (held) this.room(held);
    }
  }

  private onEvent(name: StreamEventName, data: object): void {
    if (this.closed || !this.player) return;
    this.guarded('event', () => EVENTS[name](this, data));
  }

  /**
   * Runs what a client's bytes or the event stream set off outside the line loop: a fault there
   * closes this connection, never the server (an uncaught error in a socket handler would), nor
   * stops an event on its way to the other streams.
   */
  private guarded(what: string, work: () => void): void {
    try {
      work();
    } catch (err) {
      this.c.logger.error(`Telnet ${what} failed`, { error: (err as Error).message, stack: (err as Error).stack });
      this.close('Something went wrong on the server.');
    }
  }

  /** Chat: others' messages as lines; every message (the player's own too) as GMCP for chat windows. */
  chat(message: Schemas['ChatMessage']): void {
    const me = this.player!.name;
    const line = chatLine(message, me);
    const text = chatText(line);
    this.gmcp('Comm.Channel.Text', { channel: message.channel, talker: message.sender, text });
    // The player's own words were the answer to their command.
    if (message.sender !== me) this.write(this.terminal.styled(text, message.channel satisfies Style));
  }

  /** An event's line (arrive, leave, item, presence), taken as it is. */
  eventLine(text: string): void {
    this.write(this.terminal.styled(text));
  }

  /**
   * The character moved, or builders changed its room: the map follows at once; the room is
   * shown unless the answer to the player's own move showed it as it is (that move's event may
   * arrive after the answer, on PostgreSQL a while after).
   */
  room(event: Schemas['RoomEvent']): void {
    if (this.busy) {
      this.heldRoom = event;
      return;
    }
    this.shownRoom = event.room_id;
    this.sendRoomInfo(event.room_id);
    if (this.lastRead.includes(event.look)) return;
    this.lastRead = event.look;
    this.write(this.terminal.text(event.look));
  }

  private sendRoomInfo(roomId: string): void {
    const world = this.player && this.s.worlds.get(this.player.worldId);
    const info = world ? gmcp.roomInfo(world, roomId) : null;
    if (info) this.gmcp('Room.Info', info);
  }

  // --- Commands of every screen ---

  setColour(rest: string): void {
    const wanted = rest.trim().toLowerCase();
    if (wanted !== 'on' && wanted !== 'off') {
      this.print(`Colours are ${this.terminal.colour ? 'on' : 'off'}. Type colour on or colour off.`);
      return;
    }
    this.terminal.colour = wanted === 'on';
    this.colourChosen = true;
    this.print(`Colours are now ${wanted}.`);
  }

  async quit(): Promise<void> {
    this.close('Goodbye.');
  }

  // --- Sessions and limits ---

  /** The session, validated as every HTTP request's is; a session that ended closes the connection. */
  private async validSession(): Promise<AuthenticatedSession> {
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

  private async limit(limit: Limit, key: string): Promise<void> {
    const refused = await limit.hit(key);
    if (refused) throw refused;
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

  // --- Reading ---

  private received(line: Line): void {
    if (this.closed) return;
    this.inbox.push(this.input(line));
    if (this.inbox.length >= MAX_PENDING_LINES) this.socket.pause();
    this.touch();
    this.wake?.();
  }

  private input(line: Line): Input {
    if (line.tooLong) return TOO_LONG;
    const text = edited(this.decoder.decode(line.bytes));
    if ([...text].length > MAX_LINE_CHARACTERS) return TOO_LONG;
    return findNul(text, 'line') === null ? text : HOLDS_NUL;
  }

  /** The next line the player sent; one refused (too long, or holding NUL) is answered, then `again` asks anew. */
  private async nextLine(again: () => void): Promise<string> {
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
      if (typeof input === 'string') return input;
      this.print(input.refused);
      again();
    }
  }

  /** Asks a question and reads the answer; a hidden one is not echoed (IAC WILL ECHO while it is typed). */
  private async ask(question: string, hidden = false): Promise<string> {
    if (hidden) this.negotiation.offer(ECHO);
    this.prompt(question);
    try {
      const answer = await this.nextLine(() => this.prompt(question));
      return hidden ? answer : answer.trim();
    } finally {
      if (hidden) {
        // The player's Enter was not echoed either (unless the client kept echoing itself).
        if (this.negotiation.localOn(ECHO)) this.write('\r\n');
        this.negotiation.withdraw(ECHO);
      }
    }
  }

  /** Restarts the idle timer of a logged-in connection. */
  private touch(): void {
    if (!this.token || this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close('You were idle for too long.'), this.c.config.idleTimeoutSeconds * 1000);
    this.idleTimer.unref();
  }

  // --- Protocol ---

  private optionChanged(side: 'local' | 'remote', option: number, on: boolean): void {
    if (!on) return;
    if (side === 'remote' && option === TTYPE) this.write(subnegotiation(TTYPE, Buffer.of(TTYPE_SEND)));
    if (side === 'local' && option === CHARSET) this.write(subnegotiation(CHARSET, Buffer.from([CHARSET_REQUEST, ...Buffer.from(';UTF-8')])));
    // A client that agrees to GMCP only once play has begun still gets the character and its room.
    if (side === 'local' && option === GMCP && this.player) {
      this.gmcp('Char.Name', { name: this.player.name, fullname: this.player.name });
      if (this.shownRoom) this.sendRoomInfo(this.shownRoom);
    }
  }

  private subnegotiation(option: number, data: Buffer): void {
    if (option === NAWS && data.length === 4) this.terminal.resize(data.readUInt16BE(0));
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
    if (!this.colourChosen && (name.toUpperCase() === 'DUMB' || (mtts && (Number(mtts[1]) & MTTS_ANSI) === 0))) this.terminal.colour = false;
    if (!mtts && name !== previous && this.terminalTypes.length < TTYPE_ROUNDS) this.write(subnegotiation(TTYPE, Buffer.of(TTYPE_SEND)));
  }

  /** CHARSET: the server asked for UTF-8 (the answer), or the client offers its list (answered). */
  private charset(data: Buffer): void {
    const isUtf8 = (name: string) => /^utf-?8$/i.test(name.trim());
    if (data[0] === CHARSET_ACCEPTED) this.terminal.ascii = !isUtf8(data.subarray(1).toString('latin1'));
    else if (data[0] === CHARSET_REJECTED) this.terminal.ascii = true;
    else if (data[0] === CHARSET_REQUEST && data.length > 2) {
      const offered = data.subarray(2).toString('latin1').split(String.fromCharCode(data[1]!));
      const utf8 = offered.find(isUtf8);
      this.terminal.ascii = utf8 === undefined;
      this.write(subnegotiation(CHARSET, utf8 === undefined ? Buffer.of(CHARSET_REJECTED) : Buffer.from([CHARSET_ACCEPTED, ...Buffer.from(utf8, 'latin1')])));
    }
  }

  private gmcpReceived(payload: Buffer): void {
    const { name, data } = gmcp.decode(payload);
    this.supports.apply(name, data);
    if (/^Core\.Ping$/i.test(name)) this.gmcp('Core.Ping', {});
  }

  private gmcp(name: string, data: unknown): void {
    if (this.negotiation.localOn(GMCP) && this.supports.wants(name)) this.write(subnegotiation(GMCP, gmcp.encode(name, data)));
  }

  // --- Writing ---

  /** Server text, rendered for this terminal. */
  private print(text: string): void {
    this.write(this.terminal.text(text));
  }

  private prompt(text: string): void {
    this.write(this.terminal.prompt(text));
    this.write(GO_AHEAD);
  }

  private write(data: string | Buffer): void {
    if (this.closed || this.socket.destroyed) return;
    this.socket.write(data);
    if (this.socket.writableLength > MAX_OUTPUT_BYTES) {
      this.c.logger.info('Telnet client does not read its output; disconnecting', { address: this.c.address });
      this.socket.destroy();
    }
  }

  /** Says goodbye (when there is something to say), hangs up, and logs the session out. */
  close(message?: string): void {
    if (this.closed) return;
    if (message) this.print(message);
    this.closed = true;
    for (const timer of [this.loginTimer, this.idleTimer]) if (timer) clearTimeout(timer);
    this.s.streams.closed(this.listener);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
    this.wake?.();
    this.released = this.release();
  }
}

/** How each event of the character's stream reaches the player. */
const EVENTS: { readonly [K in StreamEventName]: (c: TelnetConnection, data: object) => void } = {
  chat: (c, data) => c.chat(data as Schemas['ChatEvent']),
  arrive: (c, data) => {
    const e = data as Schemas['ArriveEvent'];
    c.eventLine(movementLine('arrive', e.character, e.direction, e.cause));
  },
  leave: (c, data) => {
    const e = data as Schemas['LeaveEvent'];
    c.eventLine(movementLine('leave', e.character, e.direction, e.cause));
  },
  item: (c, data) => {
    const e = data as Schemas['ItemEvent'];
    c.eventLine(itemLine(e));
  },
  presence: (c, data) => {
    const e = data as Schemas['PresenceEvent'];
    c.eventLine(`${e.character} is ${e.online ? 'now online' : 'no longer online'}.`);
  },
  room: (c, data) => c.room(data as Schemas['RoomEvent']),
  end: (c, data) => c.sessionEnded((data as Schemas['EndEvent']).reason),
};
