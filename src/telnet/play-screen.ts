/**
 * Playing: every line is a game command, through the game's one entry (GameService.play: the
 * same answer as POST /command gives, the same throttle and permissions), but for the door's own
 * `quit` and `colour`; `help` adds them to the game's. The character's event stream arrives as
 * lines (chat styled by channel, arrivals, items, presence, announcements), its room as the room
 * is shown, and GMCP carries the character, its room for mappers, and chat for chat windows.
 */
import type { components } from '../../generated/openapi.d.ts';
import type { Actor } from '../services/game/command-table.ts';
import type { EventListener, StreamEventName } from '../services/game/event-streams.ts';
import { sessionActor } from '../services/game/game-service.ts';
import { announcementLine, chatLine, chatText, itemLine, movementLine } from '../shared/event-text.ts';
import type { TelnetConnection } from './connection.ts';
import * as gmcp from './gmcp.ts';
import type { Style } from './render.ts';
import { colour, quit, type Screen } from './screen.ts';

type Schemas = components['schemas'];

const DOOR_HELP = ['Telnet:', '  quit - Log out and leave', '  colour on|off - ANSI colours on or off'].join('\n');

/** A character being played on a connection, and what its player has read. */
export class Playing {
  readonly actor: Actor;
  readonly listener: EventListener;
  /** The room the character stands in, as the door last heard. */
  shownRoom: string | null;
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

/** Selects the character (as POST /characters/select does), follows its events, shows where it stands. */
export async function enter(c: TelnetConnection, characterId: number, worldId: string): Promise<void> {
  await c.s.characters.select(await c.validSession(), characterId, worldId);
  const session = await c.validSession();
  const actor = sessionActor(session, 'telnet');
  const listener: EventListener = { event: (name, data) => c.terminal.guarded('event', () => onEvent(c, name, data)) };
  await c.s.streams.listen(session.id, { accountId: session.userId, address: c.address }, actor, listener);
  const playing = (c.playing = new Playing(actor, listener));
  sendCharacter(c);
  const world = c.s.worlds.get(actor.worldId);
  c.terminal.print(`You play ${actor.name} in ${world?.name ?? actor.worldId}. Type help for the commands.`);
  if (actor.roomId) {
    playing.lastRead = (await c.s.game.core.showRoom(actor, actor.roomId))?.look ?? '';
    c.terminal.print(playing.lastRead);
  }
}

/** The character and its room over GMCP: at entry, and for a client that agrees to GMCP only once play has begun. */
export function sendCharacter(c: TelnetConnection): void {
  const playing = c.playing;
  if (!playing) return;
  c.terminal.gmcp('Char.Name', { name: playing.actor.name, fullname: playing.actor.name });
  if (playing.shownRoom) sendRoomInfo(c, playing.shownRoom);
}

/** One game command, through the game's one entry, as any door sends it. */
async function command(c: TelnetConnection, text: string, verb: string): Promise<void> {
  const playing = c.playing!;
  const session = await c.validSession();
  playing.busy = true;
  try {
    const result = await c.s.game.play(sessionActor(session, 'telnet'), text, String(session.id));
    // The verbs as the game lists them (GET /commands): whatever names `help` gets the door's too.
    const help = c.s.game.commands(session.role).find((known) => known.name === verb || known.aliases.includes(verb))?.name === 'help';
    c.terminal.print(help ? `${result.message}\n${DOOR_HELP}` : result.message);
    playing.lastRead = result.message;
  } finally {
    playing.busy = false;
    const held = playing.heldRoom;
    playing.heldRoom = null;
    if (held) room(c, held);
  }
}

export const play: Screen = {
  prompt: null,
  commands: { quit, colour, color: colour },
  other: (c, text, verb) => command(c, text, verb),
};

function onEvent(c: TelnetConnection, name: StreamEventName, data: object): void {
  if (c.terminal.closed || !c.playing) return;
  EVENTS[name](c, data);
}

/** Chat: others' messages as lines; every message (the player's own too) as GMCP for chat windows. */
function chat(c: TelnetConnection, message: Schemas['ChatMessage']): void {
  const me = c.playing!.actor.name;
  const text = chatText(chatLine(message, me));
  c.terminal.gmcp('Comm.Channel.Text', { channel: message.channel, talker: message.sender, text });
  // The player's own words were the answer to their command.
  if (message.sender !== me) c.terminal.styled(text, message.channel satisfies Style);
}

/**
 * The character moved, or builders changed its room: the map follows at once; the room is
 * shown unless the answer to the player's own move showed it as it is (that move's event may
 * arrive after the answer, on PostgreSQL a while after).
 */
function room(c: TelnetConnection, event: Schemas['RoomEvent']): void {
  const playing = c.playing!;
  if (playing.busy) {
    playing.heldRoom = event;
    return;
  }
  playing.shownRoom = event.room_id;
  sendRoomInfo(c, event.room_id);
  if (playing.lastRead.includes(event.look)) return;
  playing.lastRead = event.look;
  c.terminal.print(event.look);
}

function sendRoomInfo(c: TelnetConnection, roomId: string): void {
  const world = c.playing && c.s.worlds.get(c.playing.actor.worldId);
  const info = world ? gmcp.roomInfo(world, roomId) : null;
  if (info) c.terminal.gmcp('Room.Info', info);
}

/** How each event of the character's stream reaches the player. */
const EVENTS: { readonly [K in StreamEventName]: (c: TelnetConnection, data: object) => void } = {
  chat: (c, data) => chat(c, data as Schemas['ChatEvent']),
  arrive: (c, data) => {
    const e = data as Schemas['ArriveEvent'];
    c.terminal.styled(movementLine('arrive', e.character, e.direction, e.cause));
  },
  leave: (c, data) => {
    const e = data as Schemas['LeaveEvent'];
    c.terminal.styled(movementLine('leave', e.character, e.direction, e.cause));
  },
  item: (c, data) => c.terminal.styled(itemLine(data as Schemas['ItemEvent'])),
  presence: (c, data) => {
    const e = data as Schemas['PresenceEvent'];
    c.terminal.styled(`${e.character} is ${e.online ? 'now online' : 'no longer online'}.`);
  },
  room: (c, data) => room(c, data as Schemas['RoomEvent']),
  announcement: (c, data) => c.terminal.styled(announcementLine(data as Schemas['AnnouncementEvent'])),
  end: (c, data) => c.sessionEnded((data as Schemas['EndEvent']).reason),
};
