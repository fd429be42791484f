/**
 * Live play: the event streams of this instance, the server-sent ones of GET /events and the
 * feeds of the telnet door. Each stream follows one session's character; bus events (published
 * after their writes commit, by any instance) become the events that character would see. Live
 * delivery is at most once; chat is gap-free across reconnects because a stream resumes from
 * its Last-Event-ID out of the database (docs/decisions.md).
 */
import type { components } from '../../../generated/openapi.d.ts';
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import type { BusEvent, EventBus, StreamEndReason } from '../../db/event-bus.ts';
import type { ChatRow, GameRepository } from '../../db/repositories/game-repository.ts';
import type { SessionRepository } from '../../db/repositories/session-repository.ts';
import type { Logger } from '../../logging/logger.ts';
import { FeatureUnavailable } from '../errors.ts';
import { CHAT_HISTORY, chatMessage, type GameService, type Player } from './game-service.ts';

type Schemas = components['schemas'];

/** Where a stream's frames go: the HTTP layer adapts its response to this. */
export interface StreamSink {
  /** Writes a frame; false when the connection's buffer is full (then wait for drain). */
  write(frame: string): boolean;
  onDrain(listener: () => void): void;
  /** Ends the response; `abort` drops the connection without flushing what is buffered. */
  close(abort: boolean): void;
}

export type StreamEventName = 'chat' | 'arrive' | 'leave' | 'item' | 'presence' | 'room' | 'end';

/**
 * A stream's other kind of subscriber (the telnet door): it takes each event as its name and
 * data instead of SSE text, and minds its own connection (no heartbeat, no queue here).
 */
export interface EventListener {
  event(name: StreamEventName, data: object): void;
}

/** Counters for /metrics, owned here and read at scrape time. */
export interface StreamCounters {
  open: number;
  eventsSent: number;
  endedByReason: Partial<Record<StreamEndReason, number>>;
}

/** How often open streams' sessions are checked for expiry (and for ends the bus missed). */
const SESSION_CHECK_MS = 1000;
/** Session ids per liveness query, well under every driver's parameter limit. */
const SESSION_CHECK_CHUNK = 500;
/** Largest message id a Last-Event-ID can name (ids are 32-bit). */
const MAX_MESSAGE_ID = 2_147_483_647;

interface Stream {
  sessionId: number;
  player: Player;
  /** Exactly one of the two: SSE frames go to `sink`, events to `listener`. */
  sink: StreamSink | null;
  listener: EventListener | null;
  /** Last chat message id delivered (or the resume point): the first part of every event id. */
  chatCursor: number;
  seq: number;
  /** Frames waiting for the client to drain its connection. */
  queue: string[];
  blocked: boolean;
  /** Live events arriving while the missed chat is being replayed. */
  pending: BusEvent[] | null;
  ended: boolean;
  /** Consecutive session checks that found the session gone. */
  missedChecks: number;
}

/** The chat message id a Last-Event-ID names (`<message id>` or `<message id>-<n>`), or null. */
export function resumePoint(lastEventId: string | undefined): number | null {
  const match = /^(\d{1,10})(?:-\d{1,15})?$/.exec(lastEventId?.trim() ?? '');
  if (!match) return null;
  const id = Number(match[1]);
  return id <= MAX_MESSAGE_ID ? id : null;
}

export interface EventStreamDeps {
  bus: EventBus;
  game: GameService;
  repo: GameRepository;
  sessions: SessionRepository;
  config: Config['events'];
  clock: Clock;
  logger: Logger;
}

export class EventStreams {
  private readonly d: EventStreamDeps;
  private readonly streams = new Set<Stream>();
  private readonly counters: StreamCounters = { open: 0, eventsSent: 0, endedByReason: {} };
  private sessionCheck: NodeJS.Timeout | null = null;
  /** One timer for every stream's heartbeat: a timer per stream would cost memory per idle connection. */
  private heartbeat: NodeJS.Timeout | null = null;
  private checking = false;
  private stopped = false;
  /** Bus events are dispatched one after another, so every stream sees them in bus order. */
  private dispatching: Promise<void> = Promise.resolve();

  constructor(deps: EventStreamDeps) {
    this.d = deps;
    deps.bus.subscribe((event) => {
      this.dispatching = this.dispatching
        .then(() => this.dispatch(event))
        .catch((err: Error) => {
          deps.logger.error('Event stream dispatch failed', { event: event.type, error: err.message });
        });
    });
  }

  /** Starts the bus and the periodic session check. */
  async start(): Promise<void> {
    await this.d.bus.start();
    this.sessionCheck = setInterval(() => void this.checkSessions(), SESSION_CHECK_MS);
    this.sessionCheck.unref();
    this.heartbeat = setInterval(() => {
      for (const stream of this.streams) this.write(stream, ': heartbeat\n\n');
    }, this.d.config.heartbeatSeconds * 1000);
    this.heartbeat.unref();
  }

  /** Ends every stream (reason shutdown) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sessionCheck) clearInterval(this.sessionCheck);
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const stream of [...this.streams]) this.end(stream, 'shutdown');
    await this.d.bus.close();
  }

  stats(): StreamCounters {
    return { open: this.streams.size, eventsSent: this.counters.eventsSent, endedByReason: { ...this.counters.endedByReason } };
  }

  /**
   * Opens a stream for a session's character: 503 past the instance's limit or once shutting
   * down; past the session's limit its oldest stream ends (reason replaced). The chat missed
   * since `resumeAfter` comes first, then live events.
   */
  async open(sessionId: number, player: Player, resumeAfter: number | null, sink: StreamSink): Promise<void> {
    const stream = this.add(sessionId, player, sink, null);
    sink.onDrain(() => this.drain(stream));
    this.write(stream, `retry: 2000\n\n`);
    await this.begin(stream, resumeAfter);
  }

  /** Opens a stream that hands its events to `listener` (the telnet door), live from now; the same limits as `open`. */
  async listen(sessionId: number, player: Player, listener: EventListener): Promise<void> {
    await this.begin(this.add(sessionId, player, null, listener), null);
  }

  private add(sessionId: number, player: Player, sink: StreamSink | null, listener: EventListener | null): Stream {
    // A request that reached a keep-alive connection as the shutdown began must not hold it open.
    if (this.stopped) throw new FeatureUnavailable('The server is shutting down.');
    if (this.streams.size >= this.d.config.streamsPerInstance) throw new FeatureUnavailable('Too many open event streams on this server; try again later.');
    const own = [...this.streams].filter((s) => s.sessionId === sessionId);
    for (const old of own.slice(0, Math.max(0, own.length - this.d.config.streamsPerSession + 1))) this.end(old, 'replaced');
    const stream: Stream = {
      sessionId,
      player: { ...player },
      sink,
      listener,
      chatCursor: 0,
      seq: 0,
      queue: [],
      blocked: false,
      pending: [],
      ended: false,
      missedChecks: 0,
    };
    // Registered before the replay is read, so nothing committed in between is missed.
    this.streams.add(stream);
    return stream;
  }

  /** The chat missed since `resumeAfter` (none without it), then the live events that came meanwhile. */
  private async begin(stream: Stream, resumeAfter: number | null): Promise<void> {
    const player = stream.player;
    if (resumeAfter === null) {
      stream.chatCursor = await this.d.repo.lastMessageId();
    } else {
      stream.chatCursor = resumeAfter;
      if (player.roomId) {
        const missed = await this.d.repo.recentMessages(player.worldId, player.roomId, player.characterId, CHAT_HISTORY, resumeAfter);
        for (const row of missed) this.sendChat(stream, row);
      }
    }
    const pending = stream.pending ?? [];
    stream.pending = null;
    for (const event of pending) await this.deliver(stream, event);
  }

  /** Ends a stream: an `end` event, then the connection closes (dropped at once when it cannot drain). */
  private end(stream: Stream, reason: StreamEndReason): void {
    if (stream.ended) return;
    stream.ended = true;
    this.streams.delete(stream);
    this.counters.endedByReason[reason] = (this.counters.endedByReason[reason] ?? 0) + 1;
    // Only SSE streams queue, so only they lag.
    if (reason === 'lagging') {
      stream.sink!.close(true);
      return;
    }
    const data: Schemas['EndEvent'] = { reason };
    this.counters.eventsSent++;
    if (stream.listener) {
      stream.listener.event('end', data);
      return;
    }
    stream.sink!.write(this.frame(stream, 'end', data));
    stream.sink!.close(stream.blocked);
  }

  /** The client went away (its sink, or the listener it listened with). */
  closed(subscriber: StreamSink | EventListener): void {
    for (const stream of this.streams) {
      if (stream.sink !== subscriber && stream.listener !== subscriber) continue;
      stream.ended = true;
      this.streams.delete(stream);
    }
  }

  private frame(stream: Stream, name: StreamEventName, data: object, id?: number): string {
    const eventId = id ?? `${stream.chatCursor}-${++stream.seq}`;
    return `id: ${eventId}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  private send(stream: Stream, name: StreamEventName, data: object, id?: number): void {
    if (stream.listener) {
      if (!stream.ended) stream.listener.event(name, data);
    } else {
      this.write(stream, this.frame(stream, name, data, id));
    }
    this.counters.eventsSent++;
  }

  private sendChat(stream: Stream, row: ChatRow): void {
    if (row.id <= stream.chatCursor) return;
    stream.chatCursor = row.id;
    this.send(stream, 'chat', chatMessage(row) satisfies Schemas['ChatEvent'], row.id);
  }

  /** Writes now, or queues while the connection is full; a queue past its limit ends the stream (lagging). */
  private write(stream: Stream, frame: string): void {
    if (stream.ended || !stream.sink) return;
    if (stream.blocked) {
      stream.queue.push(frame);
      if (stream.queue.length > this.d.config.queueLimit) this.end(stream, 'lagging');
      return;
    }
    if (!stream.sink.write(frame)) stream.blocked = true;
  }

  private drain(stream: Stream): void {
    stream.blocked = false;
    while (!stream.ended && !stream.blocked && stream.queue.length > 0) {
      if (!stream.sink!.write(stream.queue.shift()!)) stream.blocked = true;
    }
  }

  private async dispatch(event: BusEvent): Promise<void> {
    if (event.type === 'session.ended') {
      const ids = new Set(event.sessionIds);
      for (const stream of [...this.streams]) if (ids.has(stream.sessionId)) this.end(stream, event.reason);
      return;
    }
    if (event.type === 'session.changed' || event.type === 'account.changed') return;
    const targets = [...this.streams].filter((s) => event.type === 'reconnected' || s.player.worldId === event.worldId);
    if (targets.length === 0) return;
    // Chat rows are read once for every stream of this instance.
    const rows = event.type === 'chat' ? await this.d.repo.messagesByIds(event.messageIds) : [];
    for (const stream of targets) {
      if (stream.pending) stream.pending.push(event);
      else await this.deliver(stream, event, rows);
    }
  }

  /** What one stream's character sees of an event. */
  private async deliver(stream: Stream, event: BusEvent, chatRows?: ChatRow[]): Promise<void> {
    const me = stream.player;
    switch (event.type) {
      case 'chat': {
        const rows = chatRows ?? (await this.d.repo.messagesByIds(event.messageIds));
        for (const row of rows) {
          const visible = row.recipientId === null || row.recipientId === me.characterId || row.senderId === me.characterId;
          if (row.roomId === me.roomId && visible) this.sendChat(stream, row);
        }
        return;
      }
      case 'move': {
        if (event.characterId === me.characterId) {
          me.roomId = event.to;
          if (event.to !== null) {
            const look = await this.d.game.describeRoom(me, event.to);
            if (!stream.ended) this.send(stream, 'room', { room_id: event.to, look } satisfies Schemas['RoomEvent']);
          }
          return;
        }
        const who = { character: event.name, direction: event.direction, cause: event.cause };
        if (event.from !== null && event.from === me.roomId) this.send(stream, 'leave', { ...who, room_id: event.from } satisfies Schemas['LeaveEvent']);
        if (event.to !== null && event.to === me.roomId) this.send(stream, 'arrive', { ...who, room_id: event.to } satisfies Schemas['ArriveEvent']);
        return;
      }
      case 'item':
        if (event.roomId === me.roomId && event.characterId !== me.characterId) {
          this.send(stream, 'item', { character: event.name, item: event.item, action: event.action, room_id: event.roomId } satisfies Schemas['ItemEvent']);
        }
        return;
      case 'presence':
        if (event.characterId !== me.characterId) this.send(stream, 'presence', { character: event.name, online: event.online } satisfies Schemas['PresenceEvent']);
        return;
      case 'reconnected':
        // The chat committed while the bus was down, read back as a resume does.
        if (me.roomId) {
          for (const row of await this.d.repo.recentMessages(me.worldId, me.roomId, me.characterId, CHAT_HISTORY, stream.chatCursor)) this.sendChat(stream, row);
        }
        return;
      case 'session.ended':
      case 'session.changed':
      case 'account.changed':
        return;
    }
  }

  /**
   * Ends the streams whose session has expired, or vanished without its bus event (reason
   * expiry). A session must be gone at two checks in a row: a logout's own event, with its
   * reason, is usually a moment behind its delete.
   */
  private async checkSessions(): Promise<void> {
    if (this.checking || this.streams.size === 0) return;
    this.checking = true;
    try {
      const ids = [...new Set([...this.streams].map((s) => s.sessionId))];
      const live = new Set<number>();
      for (let i = 0; i < ids.length; i += SESSION_CHECK_CHUNK) {
        for (const id of await this.d.sessions.liveIds(ids.slice(i, i + SESSION_CHECK_CHUNK), toDbTime(this.d.clock()))) live.add(id);
      }
      for (const stream of [...this.streams]) {
        stream.missedChecks = live.has(stream.sessionId) ? 0 : stream.missedChecks + 1;
        if (stream.missedChecks >= 2) this.end(stream, 'expiry');
      }
    } catch (err) {
      this.d.logger.error('Event stream session check failed', { error: (err as Error).message });
    } finally {
      this.checking = false;
    }
  }
}
