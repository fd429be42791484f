/**
 * Playing: every line is a game command, through the game's one entry (GameService.play: the
 * same answer as POST /command gives, the same throttle and permissions), but for the door's own
 * `quit`, `colour` and `config`; `help` adds them to the game's. Each answer is followed by the
 * account's prompt (the room and its exits by default). The character's event stream arrives
 * as lines (chat styled by channel, arrivals, items, presence, announcements), its room as the
 * room is shown (with MXP links to its exits and items for a client that agreed to MXP), and
 * GMCP carries what graphical clients show beside the text: the character and its status, its
 * room for mappers and who and what is in it, its inventory, the chat channels and chat.
 */
import type { components } from '../../generated/openapi.d.ts';
import { DEFAULT_PROMPT } from '../services/accounts/telnet-settings.ts';
import type { Actor, RoomData } from '../services/game/command-table.ts';
import type { EventListener, StreamEventName } from '../services/game/event-streams.ts';
import { sessionActor } from '../services/game/game-service.ts';
import { itemName } from '../services/worlds/world-overlay.ts';
import { announcementLine, chatLine, chatText, itemLine, movementLine } from '../shared/event-text.ts';
import type { TelnetConnection } from './connection.ts';
import * as gmcp from './gmcp.ts';
import type { Link, Style } from './render.ts';
import { colour, config, quit, type Screen } from './screen.ts';

type Schemas = components['schemas'];

const DOOR_HELP = [
  'Telnet:',
  '  quit - Log out and leave',
  '  colour on|off - ANSI colours on or off',
  '  config - Your prompt, colours and screen-reader mode, kept for your account',
].join('\n');

/** A character being played on a connection, and what its player has read. */
export class Playing {
  readonly actor: Actor;
  readonly listener: EventListener;
  /** The room the character stands in, as the door last heard. */
  shownRoom: string | null;
  /** That room as data, once the door has read it. */
  room: RoomData | null = null;
  /** What the player last read of its room: the answer to its last command, or the room last shown. */
  lastRead = '';
  /** A game command is running: a room event waits for it (its answer shows the room already). */
  busy = false;
  heldRoom: Schemas['RoomEvent'] | null = null;

  constructor(actor: Actor, listener: EventListener) {
    this.actor = actor;
    this.listener = listener;
    this.shownRoom = actor.roomId;
  }
}

/**
 * Selects the character (as POST /characters/select does), takes it over from what a dropped
 * connection of the account left link-dead, follows its events, shows where it stands.
 */
export async function enter(c: TelnetConnection, characterId: number, worldId: string): Promise<void> {
  await c.s.characters.select(await c.validSession(), characterId, worldId);
  const session = await c.validSession();
  const actor = sessionActor(session, 'telnet');
  const listener: EventListener = { event: (name, data) => c.terminal.guarded('event', () => onEvent(c, name, data)) };
  await c.s.streams.listen(session.id, { accountId: session.userId, address: c.address }, actor, listener);
  // Bound to this session first, so the character never leaves the room in between.
  const taken = await c.s.accounts.takeOver(session, 'telnet');
  if (taken > 0) c.log.info('Telnet session took over a dropped connection', { session_id: session.id, ended: taken });
  const playing = (c.playing = new Playing(actor, listener));
  const world = c.s.worlds.get(actor.worldId);
  c.terminal.print(`You play ${actor.name} in ${world?.name ?? actor.worldId}. Type help for the commands.`);
  if (actor.roomId) {
    const shown = await c.s.game.core.showRoom(actor, actor.roomId);
    playing.room = shown?.room ?? null;
    playing.lastRead = shown?.look ?? '';
    c.terminal.print(playing.lastRead, playing.room ? roomLinks(playing.room) : undefined);
  }
  sendCharacter(c);
}

/** The prompt while playing: the account's (`config prompt`), `%r` the room, `%e` its exits, `%n` the character, `%w` the world. */
function prompt(c: TelnetConnection): string | null {
  const playing = c.playing!;
  const template = c.settings?.prompt ?? DEFAULT_PROMPT;
  if (template === '') return null;
  const world = c.s.worlds.get(playing.actor.worldId);
  const room = playing.shownRoom === null ? undefined : world?.rooms.get(playing.shownRoom);
  const exits = room ? Object.keys(room.exits).map((direction) => gmcp.SHORT[direction] ?? direction).join(' ') : '';
  const values: Record<string, string> = { r: room?.name ?? 'nowhere', e: exits || 'none', n: playing.actor.name, w: world?.name ?? playing.actor.worldId, '%': '%' };
  return template.replace(/%(.)/g, (token, key: string) => values[key] ?? token);
}

/** One game command, through the game's one entry, as any door sends it. */
async function command(c: TelnetConnection, text: string, verb: string): Promise<void> {
  const playing = c.playing!;
  const session = await c.validSession();
  playing.busy = true;
  try {
    const result = await c.s.game.play(sessionActor(session, 'telnet'), text, String(session.id));
    // The verbs as the game lists them (GET /commands): whatever names `help` gets the door's too.
    const known = c.s.game.commands(session.role).find((command) => command.name === verb || command.aliases.includes(verb));
    c.terminal.print(known?.name === 'help' ? `${result.message}\n${DOOR_HELP}` : result.message, result.room ? roomLinks(result.room) : undefined);
    playing.lastRead = result.message;
    if (result.room) {
      playing.shownRoom = result.room.id;
      playing.room = result.room;
    }
    // What lies here and what is carried may have changed (get, drop): GMCP item windows follow.
    if (result.success && known?.section === 'Actions' && !result.room) void sendItems(c).catch((err: Error) => c.log.error('Telnet GMCP items failed', { error: err.message }));
  } finally {
    playing.busy = false;
    const held = playing.heldRoom;
    playing.heldRoom = null;
    if (held) room(c, held);
  }
}

export const play: Screen = {
  prompt,
  commands: { quit, colour, color: colour, config },
  other: (c, text, verb) => command(c, text, verb),
};

function onEvent(c: TelnetConnection, name: StreamEventName, data: object): void {
  if (c.terminal.closed || !c.playing) return;
  EVENTS[name](c, data);
}

/**
 * Chat: others' messages as lines; every message (the player's own too) as GMCP for chat windows.
 * What an NPC or a room's or item's script says keeps its channel in Comm.Channel.Text (`say`,
 * `emote`, `tell`: those Comm.Channel.List names, so a client's say window keeps the room's talk
 * in order, where an `npc` channel would be a window of its own or, for clients that only know
 * the listed channels, dropped), its text the line as printed, marked ("[NPC] Maud says: …"),
 * and `speaker` (`npc` or `world`, as the API's ChatMessage has it) for triggers that tell them
 * apart; `talker` stays the NPC's name, as IRE's clients take it for the speaker.
 */
function chat(c: TelnetConnection, message: Schemas['ChatMessage']): void {
  const line = chatLine(message, c.playing!.actor.name);
  const text = chatText(line);
  c.terminal.gmcp('Comm.Channel.Text', { channel: message.channel, talker: message.sender, text, ...(message.speaker ? { speaker: message.speaker } : {}) });
  // The player's own words were the answer to their command.
  if (!line.mine) c.terminal.styled(text, message.channel satisfies Style);
}

/** Whether builders changed the room itself (its name, description or exits), not who or what is in it. */
function rebuilt(before: RoomData, after: RoomData): boolean {
  const exits = (room: RoomData) => room.exits.map((e) => `${e.direction}>${e.to}:${e.name}`).join(',');
  return before.id === after.id && (before.name !== after.name || before.description !== after.description || exits(before) !== exits(after));
}

/**
 * The character moved, or builders changed its room: the map follows at once; the room is
 * shown unless the answer to the player's own move showed it as it is (that move's event may
 * arrive after the answer, on PostgreSQL a while after); a room builders changed is shown
 * after a line that says so.
 */
function room(c: TelnetConnection, event: Schemas['RoomEvent']): void {
  const playing = c.playing!;
  if (playing.busy) {
    playing.heldRoom = event;
    return;
  }
  const before = playing.room;
  playing.shownRoom = event.room_id;
  playing.room = event.room;
  sendRoom(c);
  if (playing.lastRead.includes(event.look)) return;
  playing.lastRead = event.look;
  if (before && rebuilt(before, event.room)) c.terminal.print('The room changes around you.');
  c.terminal.print(event.look, roomLinks(event.room));
}

/** MXP links of a room's lines: each exit goes that way, each item is taken or examined. */
function roomLinks(shown: RoomData): (line: string) => Link | null {
  const links = new Map<string, Link>();
  for (const exit of shown.exits) links.set(`  - ${exit.direction}: ${exit.name}`, { text: exit.direction, send: [exit.direction], hint: `Go ${exit.direction} to ${exit.name}` });
  for (const item of shown.items) links.set(`  - ${item.name}`, { text: item.name, send: [`get ${item.name}`, `examine ${item.name}`], hint: `The ${item.name}` });
  return (line) => links.get(line) ?? null;
}

/**
 * Everything GMCP tells of the character, at entry and for a client that agrees to GMCP only
 * once play has begun: Char.Name, Char.StatusVars and Char.Status, Comm.Channel.List (the
 * game's Communication verbs), its room, and its inventory.
 */
export function sendCharacter(c: TelnetConnection): void {
  const playing = c.playing;
  if (!playing) return;
  const { name } = playing.actor;
  c.terminal.gmcp('Char.Name', { name, fullname: name });
  c.terminal.gmcp('Char.StatusVars', { name: 'Name', world: 'World', area: 'Area', room: 'Room' });
  const channels = c.s.game.commands(playing.actor.role).filter((command) => command.section === 'Communication');
  // Captions as a channel window titles them: `Say`, `Tell`, and the abbreviation `OOC`.
  const caption = (name: string) => (name === 'ooc' ? 'OOC' : name.charAt(0).toUpperCase() + name.slice(1));
  c.terminal.gmcp('Comm.Channel.List', channels.map((command) => ({ name: command.name, caption: caption(command.name), command: command.name })));
  sendRoom(c);
  void sendInventory(c);
}

/** The room over GMCP: Room.Info for mappers, Room.Players, Char.Items.List of the room, and Char.Status. */
function sendRoom(c: TelnetConnection): void {
  const playing = c.playing!;
  const world = c.s.worlds.get(playing.actor.worldId);
  const info = world && playing.shownRoom ? gmcp.roomInfo(world, playing.shownRoom) : null;
  if (info) c.terminal.gmcp('Room.Info', info);
  c.terminal.gmcp('Char.Status', { name: playing.actor.name, world: world?.name ?? playing.actor.worldId, area: info?.area ?? '', room: info?.name ?? '' });
  const shown = playing.room;
  if (!shown || shown.id !== playing.shownRoom) return;
  c.terminal.gmcp('Room.Players', shown.characters.map((character) => ({ name: character.name, fullname: character.name })));
  c.terminal.gmcp('Char.Items.List', { location: 'room', items: shown.items.map((item) => gmcpItem(item.name)) });
}

/** An item as Char.Items names it: the door shows items by name, so the name is its id too. */
const gmcpItem = (name: string) => ({ id: name, name });

/** What lies in the room (read again) and what the character carries, over GMCP. */
async function sendItems(c: TelnetConnection): Promise<void> {
  const playing = c.playing!;
  if (playing.shownRoom) {
    const shown = await c.s.game.core.showRoom(playing.actor, playing.shownRoom);
    if (shown && c.playing === playing) {
      playing.room = shown.room;
      c.terminal.gmcp('Char.Items.List', { location: 'room', items: shown.room.items.map((item) => gmcpItem(item.name)) });
    }
  }
  await sendInventory(c);
}

/** What the character carries, over GMCP (Char.Items.List of `inv`). */
async function sendInventory(c: TelnetConnection): Promise<void> {
  const playing = c.playing;
  const world = playing && c.s.worlds.get(playing.actor.worldId);
  if (!playing || !world) return;
  const held = await c.s.game.core.carried(playing.actor.characterId);
  c.terminal.gmcp('Char.Items.List', { location: 'inv', items: held.map((item) => gmcpItem(itemName(world, item))) });
}

/** A GMCP request of a playing client: Char.Items.Inv and Char.Items.Room answer with the list. */
export function playRequest(c: TelnetConnection, name: string): void {
  if (/^Char\.Items\.Inv$/i.test(name)) void sendInventory(c).catch((err: Error) => c.log.error('Telnet GMCP inventory failed', { error: err.message }));
  else if (/^Char\.Items\.Room$/i.test(name)) sendRoom(c);
}

/** An item event of the room over GMCP: one added to or removed from Char.Items of the room. */
function itemChanged(c: TelnetConnection, event: Schemas['ItemEvent']): void {
  const room = c.playing!.room;
  const added = event.action === 'drop' || event.action === 'appear';
  if (room) {
    if (added) room.items.push({ name: event.item });
    else {
      const at = room.items.findIndex((item) => item.name === event.item);
      if (at >= 0) room.items.splice(at, 1);
    }
  }
  c.terminal.gmcp(added ? 'Char.Items.Add' : 'Char.Items.Remove', { location: 'room', item: gmcpItem(event.item) });
}

/** How each event of the character's stream reaches the player. */
const EVENTS: { readonly [K in StreamEventName]: (c: TelnetConnection, data: object) => void } = {
  chat: (c, data) => chat(c, data as Schemas['ChatEvent']),
  arrive: (c, data) => {
    const e = data as Schemas['ArriveEvent'];
    c.playing!.room?.characters.push({ name: e.character, linkdead: false });
    c.terminal.gmcp('Room.AddPlayer', { name: e.character, fullname: e.character });
    c.terminal.styled(movementLine('arrive', e.character, e.direction, e.cause));
  },
  leave: (c, data) => {
    const e = data as Schemas['LeaveEvent'];
    const room = c.playing!.room;
    if (room) room.characters = room.characters.filter((character) => character.name !== e.character);
    c.terminal.gmcp('Room.RemovePlayer', e.character);
    c.terminal.styled(movementLine('leave', e.character, e.direction, e.cause));
  },
  item: (c, data) => {
    const e = data as Schemas['ItemEvent'];
    itemChanged(c, e);
    c.terminal.styled(itemLine(e));
  },
  presence: (c, data) => {
    const e = data as Schemas['PresenceEvent'];
    // With `linkdead`, a character still online lost its connection or has it again.
    if (e.linkdead !== undefined) c.terminal.styled(e.linkdead ? `${e.character} is link-dead.` : `${e.character} is connected again.`);
    else c.terminal.styled(`${e.character} is ${e.online ? 'now online' : 'no longer online'}.`);
  },
  room: (c, data) => room(c, data as Schemas['RoomEvent']),
  announcement: (c, data) => c.terminal.styled(announcementLine(data as Schemas['AnnouncementEvent'])),
  end: (c, data) => c.sessionEnded((data as Schemas['EndEvent']).reason),
};
