/**
 * Live play: the server-sent event streams of this instance (GET /events). Each stream follows
 * one session's character; bus events (published after their writes commit, by any instance)
 * become the events that character would see. Live delivery is at most once; chat is
 * gap-free across reconnects because a stream resumes from its Last-Event-ID out of the
 * database (docs/decisions.md).
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

/** Counters for /metrics, owned here and read at scrape time. */
export interface StreamCounters {
  open: number;
  eventsSent: number;
  endedByReason: Partial<Record<StreamEndReason, number>>;
}

/** How often the heartbeat timer looks for idle streams: a tenth of the interval, within these bounds. */
const HEARTBEAT_TICK_MS = 1000;
const HEARTBEAT_TICK_MIN_MS = 100;
/** How often open streams' sessions are checked for expiry (and for ends the bus missed). */
const SESSION_CHECK_MS = 1000;
/** Session ids per liveness query, well under every driver's parameter limit. */
const SESSION_CHECK_CHUNK = 500;
/** Largest message id a Last-Event-ID can name (ids are 32-bit). */
const MAX_MESSAGE_ID = 2_147_483_647;

interface Stream {
  sessionId: number;
  player: Player;
  sink: StreamSink;
  /** Last chat message id delivered (or the resume point): the first part of every event id. */
  chatCursor: number;
  seq: number;
  /** Frames waiting for the client to drain its connection. */
  queue: string[];
  blocked: boolean;
  /** When a frame was last written (Date.now()): a stream idle for the heartbeat interval gets a heartbeat. */
  lastWriteAt: number;
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

/** Streams by a key; a key whose last stream leaves is dropped. */
class StreamIndex<K> {
  private readonly map = new Map<K, Set<Stream>>();

  add(key: K, stream: Stream): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(stream);
  }

  remove(key: K, stream: Stream): void {
    const set = this.map.get(key);
    if (set?.delete(stream) && set.size === 0) this.map.delete(key);
  }

  get(key: K): ReadonlySet<Stream> {
    return this.map.get(key) ?? EMPTY;
  }
}

const EMPTY: ReadonlySet<Stream> = new Set();
const roomKey = (worldId: string, roomId: string | null): string => `${worldId}\n${roomId ?? ''}`;

export class EventStreams {
  private readonly d: EventStreamDeps;
  private readonly streams = new Set<Stream>();
  /**
   * The same streams by session, world, room and character, so that an event costs what its
   * audience costs, not what every open stream on the instance would (docs/decisions.md).
   */
  private readonly bySession = new StreamIndex<number>();
  private readonly byWorld = new StreamIndex<string>();
  private readonly byRoom = new StreamIndex<string>();
  private readonly byCharacter = new StreamIndex<number>();
  private readonly bySink = new Map<StreamSink, Stream>();
  private readonly counters: StreamCounters = { open: 0, eventsSent: 0, endedByReason: {} };
  private sessionCheck: NodeJS.Timeout | null = null;
  /**
   * One timer for every stream's heartbeat (a timer per stream would cost memory per idle
   * connection). It ticks every second (a tenth of shorter intervals) and writes to the streams
   * idle for the interval, so the writes of thousands of streams spread over the interval
   * instead of stalling the server at once.
   */
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
    const intervalMs = this.d.config.heartbeatSeconds * 1000;
    this.heartbeat = setInterval(() => {
      const idleSince = Date.now() - intervalMs;
      for (const stream of this.streams) if (stream.lastWriteAt <= idleSince) this.write(stream, ': heartbeat\n\n');
    }, Math.max(HEARTBEAT_TICK_MIN_MS, Math.min(HEARTBEAT_TICK_MS, intervalMs / 10)));
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
    // A request that reached a keep-alive connection as the shutdown began must not hold it open.
    if (this.stopped) throw new FeatureUnavailable('The server is shutting down.');
    if (this.streams.size >= this.d.config.streamsPerInstance) throw new FeatureUnavailable('Too many open event streams on this server; try again later.');
    const own = [...this.bySession.get(sessionId)];
    for (const old of own.slice(0, Math.max(0, own.length - this.d.config.streamsPerSession + 1))) this.end(old, 'replaced');
    const stream: Stream = {
      sessionId,
      player: { ...player },
      sink,
      chatCursor: 0,
      seq: 0,
      queue: [],
      lastWriteAt: Date.now(),
      blocked: false,
      pending: [],
      ended: false,
      missedChecks: 0,
    };
    sink.onDrain(() => this.drain(stream));
    // Registered before the replay is read, so nothing committed in between is missed.
    this.register(stream);
    this.write(stream, `retry: 2000\n\n`);
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

  private register(stream: Stream): void {
    const { player } = stream;
    this.streams.add(stream);
    this.bySink.set(stream.sink, stream);
    this.bySession.add(stream.sessionId, stream);
    this.byWorld.add(player.worldId, stream);
    this.byRoom.add(roomKey(player.worldId, player.roomId), stream);
    this.byCharacter.add(player.characterId, stream);
  }

  private unregister(stream: Stream): void {
    const { player } = stream;
    stream.ended = true;
    this.streams.delete(stream);
    this.bySink.delete(stream.sink);
    this.bySession.remove(stream.sessionId, stream);
    this.byWorld.remove(player.worldId, stream);
    this.byRoom.remove(roomKey(player.worldId, player.roomId), stream);
    this.byCharacter.remove(player.characterId, stream);
  }

  /** Ends a stream: an `end` event, then the connection closes (dropped at once when it cannot drain). */
  private end(stream: Stream, reason: StreamEndReason): void {
    if (stream.ended) return;
    this.unregister(stream);
    this.counters.endedByReason[reason] = (this.counters.endedByReason[reason] ?? 0) + 1;
    if (reason === 'lagging') {
      stream.sink.close(true);
      return;
    }
    const data: Schemas['EndEvent'] = { reason };
    stream.sink.write(this.frame(stream, 'end', data));
    this.counters.eventsSent++;
    stream.sink.close(stream.blocked);
  }

  /** The client went away. */
  closed(sink: StreamSink): void {
    const stream = this.bySink.get(sink);
    if (stream) this.unregister(stream);
  }

  private frame(stream: Stream, name: StreamEventName, data: object, id?: number): string {
    const eventId = id ?? `${stream.chatCursor}-${++stream.seq}`;
    return `id: ${eventId}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  }

  private send(stream: Stream, name: StreamEventName, data: object): void {
    this.write(stream, this.frame(stream, name, data));
    this.counters.eventsSent++;
  }

  /** `frames` holds each row's frame once encoded: every stream that sees a message gets the same bytes. */
  private sendChat(stream: Stream, row: ChatRow, frames?: Map<number, string>): void {
    if (row.id <= stream.chatCursor) return;
    stream.chatCursor = row.id;
    let frame = frames?.get(row.id);
    if (frame === undefined) {
      const data: Schemas['ChatEvent'] = chatMessage(row);
      frame = this.frame(stream, 'chat', data, row.id);
      frames?.set(row.id, frame);
    }
    this.write(stream, frame);
    this.counters.eventsSent++;
  }

  /** Writes now, or queues while the connection is full; a queue past its limit ends the stream (lagging). */
  private write(stream: Stream, frame: string): void {
    if (stream.ended) return;
    stream.lastWriteAt = Date.now();
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
      if (!stream.sink.write(stream.queue.shift()!)) stream.blocked = true;
    }
  }

  private async dispatch(event: BusEvent): Promise<void> {
    if (event.type === 'session.ended') {
      for (const id of event.sessionIds) for (const stream of [...this.bySession.get(id)]) this.end(stream, event.reason);
      return;
    }
    if (event.type === 'session.changed' || event.type === 'account.changed') return;
    const targets = this.audience(event);
    if (targets.size === 0) return;
    // Chat rows are read once, and each message encoded once, for every stream of this instance.
    const rows = event.type === 'chat' ? await this.d.game.chatRows(event.messageIds) : [];
    const frames = new Map<number, string>();
    for (const stream of targets) {
      if (stream.pending) stream.pending.push(event);
      else await this.deliver(stream, event, rows, frames);
    }
  }

  /** The streams that may see something of an event: those in its rooms, its world, or the mover's own. */
  private audience(event: Exclude<BusEvent, { type: 'session.ended' | 'session.changed' | 'account.changed' }>): Set<Stream> {
    switch (event.type) {
      case 'reconnected':
        return new Set(this.streams);
      case 'presence':
        return new Set(this.byWorld.get(event.worldId));
      case 'chat':
        return new Set(event.roomIds.flatMap((roomId) => [...this.byRoom.get(roomKey(event.worldId, roomId))]));
      case 'item':
        return new Set(this.byRoom.get(roomKey(event.worldId, event.roomId)));
      case 'move':
        return new Set([
          ...this.byCharacter.get(event.characterId),
          ...(event.from === null ? [] : this.byRoom.get(roomKey(event.worldId, event.from))),
          ...(event.to === null ? [] : this.byRoom.get(roomKey(event.worldId, event.to))),
        ]);
    }
  }

  /** What one stream's character sees of an event. */
  private async deliver(stream: Stream, event: BusEvent, chatRows?: ChatRow[], frames?: Map<number, string>): Promise<void> {
    const me = stream.player;
    switch (event.type) {
      case 'chat': {
        const rows = chatRows ?? (await this.d.game.chatRows(event.messageIds));
        for (const row of rows) {
          const visible = row.recipientId === null || row.recipientId === me.characterId || row.senderId === me.characterId;
          if (row.roomId === me.roomId && visible) this.sendChat(stream, row, frames);
        }
        return;
      }
      case 'move': {
        if (event.characterId === me.characterId) {
          if (!stream.ended) this.byRoom.remove(roomKey(me.worldId, me.roomId), stream);
          me.roomId = event.to;
          if (!stream.ended) this.byRoom.add(roomKey(me.worldId, me.roomId), stream);
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
