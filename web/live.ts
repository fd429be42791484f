/**
 * What happens around the character, as it happens: the server-sent events of
 * `GET /events/{session_id}`, or polling `GET /chat/{session_id}?after=` where streams cannot
 * be had. Chat is shown exactly once and in order across every reconnect: each (re)opened
 * stream first fetches the chat after the last message shown (a new EventSource cannot send
 * Last-Event-ID, and the server may have restarted meanwhile) and holds live chat until then.
 */
import { api, call, eventsUrl, type Schemas } from './api.ts';

interface StreamEvents {
  chat: Schemas['ChatEvent'];
  arrive: Schemas['ArriveEvent'];
  leave: Schemas['LeaveEvent'];
  item: Schemas['ItemEvent'];
  presence: Schemas['PresenceEvent'];
  room: Schemas['RoomEvent'];
  announcement: Schemas['AnnouncementEvent'];
  end: Schemas['EndEvent'];
}

/** Dispatched on `document` when someone's presence changed (the game's `presence` events): open views that show who plays read it again. */
export const PRESENCE_EVENT = 'mud:presence';

/** `live`: a stream is open; `polling`: chat is polled; `away`: the server does not answer. */
export type LiveState = 'connecting' | 'live' | 'polling' | 'away';

export interface LiveHandlers {
  chat(message: Schemas['ChatMessage']): void;
  arrive(event: StreamEvents['arrive']): void;
  leave(event: StreamEvents['leave']): void;
  item(event: StreamEvents['item']): void;
  presence(event: StreamEvents['presence']): void;
  room(event: StreamEvents['room']): void;
  /** A staff announcement (live only: a page that polls does not get it). */
  announcement(event: StreamEvents['announcement']): void;
  /** The server ended the session's stream for good (kick, ban, logout elsewhere, …). */
  ended(reason: Schemas['EndEvent']['reason']): void;
  state(state: LiveState): void;
  /** Back after being away: what is only live (who is here, who is online) must be read again. */
  resumed(): void;
}

export interface Live {
  /** Polls at once when polling (after the player said something). */
  poke(): void;
  stop(): void;
}

/** Waits between attempts to reach the server again. */
const RETRY_MS = [500, 1000, 2000, 4000];
const POLL_MS = 2000;
/** Streams that fail while the API answers (a proxy that buffers, a full server) before polling. */
const STREAM_FAILURES_BEFORE_POLLING = 3;
/** While polling, how often a stream is tried again. */
const STREAM_RETRY_MS = 30_000;
/** Ends after which reconnecting is right: the server restarts, or dropped a slow reader. */
const TRANSIENT_ENDS = new Set<string>(['shutdown', 'lagging']);

export function connectLive(sessionId: string, handlers: LiveHandlers): Live {
  let source: EventSource | null = null;
  let stopped = false;
  let away = false;
  let attempts = 0;
  let streamFailures = 0;
  let polling = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pollTimer: ReturnType<typeof setInterval> | undefined;
  let lastChatId = 0;
  const shown = new Set<number>();
  /** Live chat held while the chat missed before it is fetched. */
  let held: Schemas['ChatMessage'][] | null = null;

  const showChat = (message: Schemas['ChatMessage']) => {
    if (shown.has(message.id)) return;
    shown.add(message.id);
    lastChatId = Math.max(lastChatId, message.id);
    handlers.chat(message);
  };

  const setAway = () => {
    away = true;
    handlers.state('away');
  };

  /** Reads the chat after the last message shown; false when the server did not answer. */
  const fetchMissed = async (): Promise<boolean> => {
    const result = await call(api.GET('/chat/{session_id}', { params: { path: { session_id: sessionId }, query: { after: lastChatId } } }));
    if (!result.ok) return false;
    result.data.messages.forEach(showChat);
    return true;
  };

  const catchUp = async () => {
    held = [];
    await fetchMissed();
    const live = held;
    held = null;
    live.forEach(showChat);
    if (away) {
      away = false;
      handlers.resumed();
    }
  };

  const on = <K extends keyof StreamEvents>(stream: EventSource, name: K, handle: (data: StreamEvents[K]) => void) => {
    stream.addEventListener(name, (event: MessageEvent<string>) => {
      if (stream !== source) return;
      const data: StreamEvents[K] = JSON.parse(event.data);
      handle(data);
    });
  };

  const openStream = () => {
    const stream = new EventSource(eventsUrl(sessionId));
    source = stream;
    let opened = false;
    stream.addEventListener('open', () => {
      opened = true;
      attempts = 0;
      streamFailures = 0;
      handlers.state('live');
      void catchUp();
    });
    stream.addEventListener('error', () => {
      if (stream !== source) return;
      setAway();
      // A stream that was open is retried by the browser itself (with Last-Event-ID). One that
      // never opened, or that the browser gave up on (an answer that is not a stream, such as
      // 503 while the server shuts down), is retried here, so failures can be counted.
      if (!opened || stream.readyState === EventSource.CLOSED) reconnect();
    });
    on(stream, 'chat', (message) => (held ? held.push(message) : showChat(message)));
    on(stream, 'arrive', handlers.arrive);
    on(stream, 'leave', handlers.leave);
    on(stream, 'item', handlers.item);
    on(stream, 'presence', handlers.presence);
    on(stream, 'room', handlers.room);
    on(stream, 'announcement', handlers.announcement);
    on(stream, 'end', ({ reason }) => {
      if (TRANSIENT_ENDS.has(reason)) {
        setAway();
        reconnect();
      } else {
        stop();
        handlers.ended(reason);
      }
    });
  };

  const closeStream = () => {
    source?.close();
    source = null;
  };

  /** After a delay, asks whether the server is back and the session still good, then streams again. */
  const reconnect = () => {
    closeStream();
    clearTimeout(timer);
    timer = setTimeout(() => void probe(), RETRY_MS[Math.min(attempts, RETRY_MS.length - 1)]);
    attempts++;
  };

  const probe = async () => {
    // A 401 here ends the page's session through api.ts; anything else is retried.
    const status = await call(api.GET('/status/{session_id}', { params: { path: { session_id: sessionId } } }));
    if (stopped) return;
    if (!status.ok) return status.status === 401 ? undefined : reconnect();
    if (streamFailures >= STREAM_FAILURES_BEFORE_POLLING) return startPolling();
    streamFailures++;
    openStream();
  };

  const poll = async () => {
    if (await fetchMissed()) {
      handlers.state('polling');
      if (away) {
        away = false;
        handlers.resumed();
      }
    } else if (!stopped) setAway();
  };

  const startPolling = () => {
    closeStream();
    polling = true;
    handlers.state('polling');
    void poll();
    pollTimer = setInterval(() => void poll(), POLL_MS);
    if (typeof EventSource === 'function') {
      timer = setTimeout(() => {
        clearInterval(pollTimer);
        polling = false;
        streamFailures = 0;
        openStream();
      }, STREAM_RETRY_MS);
    }
  };

  const stop = () => {
    stopped = true;
    closeStream();
    clearTimeout(timer);
    clearInterval(pollTimer);
  };

  handlers.state('connecting');
  if (typeof EventSource === 'function') openStream();
  else startPolling();
  return {
    poke: () => {
      if (polling) void poll();
    },
    stop,
  };
}
