/**
 * How the game's chat and movement events read as text, for every client that shows them as
 * lines: the browser play client (web/text.ts) and the telnet door (src/telnet/). Pure
 * functions without runtime imports, so the browser bundle takes them as they are.
 */
import type { components } from '../../generated/openapi.d.ts';

type ChatMessage = components['schemas']['ChatMessage'];
type ItemEvent = components['schemas']['ItemEvent'];
type EndReason = components['schemas']['EndEvent']['reason'];

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };

/**
 * Chat text arrives HTML-escaped (the contract says so); clients show text, never markup, so it
 * is decoded once, in a single pass (`&amp;lt;` stays `&lt;`), and then shown as text.
 */
export function decodeEntities(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (entity) => ENTITIES[entity]!);
}

export interface ChatLine {
  channel: ChatMessage['channel'];
  /** Who speaks how: "Mara Vell says", "You whisper to Wren Ashdown"; for an emote the actor. */
  speaker: string;
  text: string;
  /** An emote: `text` is the whole line ("Wren waves."), shown without the speaker. */
  action: boolean;
  /** The reader's own words: a character of that name spoke, not an NPC or a script that shares it. */
  mine: boolean;
  /** What spoke when no character did (SPEAKER_MARK), null for a character. */
  mark: string | null;
}

/**
 * The mark of a line no character spoke: an NPC's (`speaker: npc`), or a room's or item's
 * script's (`world`, the room's echo). Without it an NPC or an echo named like a player reads
 * exactly as that player. Every line a character speaks starts with a name or "You", and
 * names hold only letters, spaces, hyphens and apostrophes, so a line starting with the mark in
 * brackets cannot be typed by a player (a mark after the name could: an emote "(NPC) says: …");
 * nor by an NPC, whose name may not start with a bracket (building's rule).
 */
export const SPEAKER_MARK: Record<NonNullable<ChatMessage['speaker']>, string> = { npc: 'NPC', world: 'Room' };

/** A chat line as one line of text: "Mara Vell says: hello", an emote as it is, "[NPC] Maud says: …". */
export function chatText(line: ChatLine): string {
  const said = line.action ? line.text : `${line.speaker}: ${line.text}`;
  return line.mark === null ? said : `[${line.mark}] ${said}`;
}

/** A chat message as a client shows it: yell, whisper, tell and ooc prefixes become the speaker line. */
export function chatLine(message: ChatMessage, me: string): ChatLine {
  const mine = message.speaker === undefined && message.sender === me;
  let text = message.text;
  let speaker: string;
  if (message.channel === 'emote') {
    speaker = message.sender;
  } else if (message.channel === 'ooc') {
    text = stripPrefix(text, '[OOC] ');
    speaker = mine ? 'You (OOC)' : `${message.sender} (OOC)`;
  } else if (message.channel === 'tell') {
    text = stripPrefix(text, `[TELL: ${message.sender} \u2192 ${message.recipient ?? ''}] `);
    speaker = mine ? `You tell ${message.recipient ?? 'someone'}` : `${message.sender} tells you`;
  } else if (message.channel === 'yell') {
    text = stripPrefix(text, '[YELL] ');
    speaker = mine ? 'You yell' : `${message.sender} yells`;
  } else if (message.channel === 'whisper') {
    text = stripPrefix(text, `[WHISPER: ${message.sender} \u2192 ${message.recipient ?? ''}] `);
    const to = message.recipient === me ? 'you' : (message.recipient ?? 'someone');
    speaker = mine ? `You whisper to ${to}` : `${message.sender} whispers to ${to}`;
  } else {
    speaker = mine ? 'You say' : `${message.sender} says`;
  }
  const mark = message.speaker === undefined ? null : SPEAKER_MARK[message.speaker];
  return { channel: message.channel, speaker, text: decodeEntities(text), action: message.channel === 'emote', mine, mark };
}

function stripPrefix(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

const OPPOSITE: Record<string, string> = { north: 'the south', south: 'the north', east: 'the west', west: 'the east', up: 'below', down: 'above' };

/** The log line of an `arrive` or `leave` event. */
export function movementLine(kind: 'arrive' | 'leave', character: string, direction: string | null, cause: string): string {
  if (kind === 'arrive') {
    if (cause === 'walk' && direction) return `${character} arrives from ${OPPOSITE[direction] ?? direction}.`;
    return cause === 'login' ? `${character} steps into the world.` : `${character} appears.`;
  }
  if (cause === 'walk' && direction) return `${character} leaves ${direction}.`;
  return cause === 'logout' ? `${character} leaves the world.` : `${character} vanishes.`;
}

/** The log line of an `item` event. */
export function itemLine(event: Pick<ItemEvent, 'character' | 'action' | 'item'>): string {
  switch (event.action) {
    case 'take':
      return `${event.character} picks up the ${event.item}.`;
    case 'drop':
      return `${event.character} drops the ${event.item}.`;
    case 'appear':
      return `The ${event.item} appears.`;
    case 'vanish':
      return `The ${event.item} vanishes.`;
  }
}

/** The log line of an `announcement` event: marked as the staff's, its text decoded once like chat. */
export function announcementLine(event: Pick<components['schemas']['AnnouncementEvent'], 'from' | 'text'>): string {
  return `[Staff announcement] ${event.from}: ${decodeEntities(event.text)}`;
}

/** Why the server ended the session's stream, as the player reads it. */
export const END_TEXT: Record<EndReason, string> = {
  kick: 'An administrator ended your session.',
  ban: 'Your account has been banned: it is deactivated, and cannot log in until staff unban it.',
  deleted: 'Your account has been deleted.',
  logout: 'You were logged out (from another window?).',
  expiry: 'Your session expired.',
  password_change: 'Your password was changed: log in with the new one.',
  replaced: 'This session was taken over by another connection.',
  shutdown: 'The server shut down.',
  lagging: 'The connection could not keep up.',
};
