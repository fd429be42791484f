/**
 * Live play: the event streams of this instance, the server-sent ones of GET /events and the
 * feeds of the telnet door. Each stream follows one session's character; bus events (published
 * after their writes commit, by any instance) become the events that character would see. Live
 * delivery is at most once; chat is gap-free across reconnects because a stream resumes from
 * its Last-Event-ID out of the database (docs/decisions.md). Memory is bounded per stream in bytes (backlog_bytes), per
 * account and per address (StreamQuota), and a frame every stream receives alike is encoded
 * once and shared by their connections. Streams are indexed by session, world, room and
 * character, so an event costs what its audience costs, not what every open stream would.
 */
import type { components } from '../../../generated/openapi.d.ts';
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import { idChunks, type BusEvent, type EventBus, type StreamEndReason } from '../../db/event-bus.ts';
import { WORLD_CHANNELS, type ChatReader, type ChatRow, type GameRepository } from '../../db/repositories/game-repository.ts';
import type { SessionRepository } from '../../db/repositories/session-repository.ts';
import type { Logger } from '../../logging/logger.ts';
import { FeatureUnavailable, TooManyRequests } from '../../shared/errors.ts';
import type { Actor } from './command-table.ts';
import { CHAT_HISTORY } from './game-service.ts';
import { chatMessage, readable, type GameCore } from './game-core.ts';
import type { StreamHolder, StreamQuota, StreamTicket } from './stream-quota.ts';
import type { IgnoreLists } from '../moderation/ignores.ts';

type Schemas = components['schemas'];

/** Where a stream's frames go: the HTTP layer adapts its response to this. */
export interface StreamSink {
  /** Writes (part of) a frame; a Buffer may be shared by many sinks and is never copied per sink. */
  write(chunk: string | Buffer): void;
  /** Bytes written that the client has not taken yet. */
  buffered(): number;
  /** Calls `listener` once when the client's connection is gone: at once if it already is. */
  onClose(listener: () => void): void;
  /** Ends the response; a client that has not taken what is buffered within `drainMs` is dropped. */
  close(drainMs: number): void;
}

export type StreamEventName = 'chat' | 'arrive' | 'leave' | 'item' | 'presence' | 'room' | 'announcement' | 'end';

/**
 * A stream's other kind of subscriber (the telnet door): it takes each event as its name and
 * data instead of SSE text, and minds its own connection (no heartbeat, no backlog here).
 */
export interface EventListener {
  event(name: StreamEventName, data: object): void;
}

/** The indexes open streams are kept in besides the set of them all. */
export type StreamIndexName = 'session' | 'world' | 'room' | 'character';

/** Counters for /metrics, owned here and read at scrape time. */
export interface StreamCounters {
  open: number;
  /** Bytes written that clients have not read yet, over all open streams. */
  backlogBytes: number;
  eventsSent: number;
  endedByReason: Partial<Record<StreamEndReason, number>>;
  /**
   * What each index holds: its keys, and the streams over all of them (each open stream once
   * per index). With every stream closed both are 0: anything left is a stream not forgotten.
   */
  indexes: Record<StreamIndexName, { keys: number; streams: number }>;
  /** Sessions waiting for the next lease write, sessions leased, characters told link-dead and not back. */
  leasesPending: number;
  leasedSessions: number;
  linkdeadTold: number;
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
/**
 * How long this instance's lease on the sessions it holds streams for lasts, and how often it is
 * renewed: an instance that dies stops counting as their connection within LEASE_MS.
 */
const LEASE_MS = 30_000;
const LEASE_RENEW_MS = 10_000;
/**
 * How long an ended stream's client has to take what it was sent, its `end` event last, before
 * the connection is dropped: a lagging client too gets its `end`, and holds the stream's memory
 * no longer than this.
 */
const END_DRAIN_MS = 5_000;
/** When a full per-account or per-address limit is worth trying again. */
const STREAM_LIMIT_RETRY_SECONDS = 10;
/** Whom a stream's account ignores until it has read its list. */
const NOBODY: ReadonlySet<number> = new Set();

interface Stream {
  sessionId: number;
  player: Actor;
  /** The character, and whom its account ignores (read as the stream begins, again when it changes). */
  reader: ChatReader;
  /** Exactly one of the two: SSE frames go to `sink`, events to `listener`. */
  sink: StreamSink | null;
  listener: EventListener | null;
  /** Last chat message id delivered (or the resume point): the first part of every event id. */
  chatCursor: number;
  seq: number;
  /** The per-account and per-address place this stream holds, and the address it counts under. */
  ticket: StreamTicket;
  address: string;
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

/**
 * The parts of frames that every stream receiving a bus event gets alike, encoded once per
 * event: a chat frame whole (its id is the message id), other events from their `event:` line
 * on (each stream writes its own `id:` line first).
 */
class SharedFrames {
  private readonly frames = new Map<string, Buffer>();

  get(key: string, encode: () => string): Buffer {
    let frame = this.frames.get(key);
    if (frame === undefined) this.frames.set(key, (frame = Buffer.from(encode())));
    return frame;
  }
}

function frameBody(name: StreamEventName, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

function chatFrame(row: ChatRow): string {
  const data: Schemas['ChatEvent'] = chatMessage(row);
  return `id: ${row.id}\n${frameBody('chat', data)}`;
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

  size(): { keys: number; streams: number } {
    let streams = 0;
    for (const set of this.map.values()) streams += set.size;
    return { keys: this.map.size, streams };
  }
}

const EMPTY: ReadonlySet<Stream> = new Set();
const roomKey = (worldId: string, roomId: string | null): string => `${worldId}\n${roomId ?? ''}`;

export interface EventStreamDeps {
  bus: EventBus;
  quota: StreamQuota;
  /** This instance, as the holder of stream leases in the database (docs/decisions.md, "Presence means connected"). */
  instanceId: string;
  game: GameCore;
  repo: GameRepository;
  sessions: SessionRepository;
  ignores: IgnoreLists;
  config: Config['events'];
  clock: Clock;
  logger: Logger;
}

export class EventStreams {
  private readonly d: EventStreamDeps;
  private readonly streams = new Set<Stream>();
  /** The same streams by session, world, room and character. */
  private readonly bySession = new StreamIndex<number>();
  private readonly byWorld = new StreamIndex<string>();
  private readonly byRoom = new StreamIndex<string>();
  private readonly byCharacter = new StreamIndex<number>();
  private readonly counters = { eventsSent: 0, endedByReason: {} as StreamCounters['endedByReason'] };
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
  /** Sessions whose streams on this instance opened or closed since the last lease write. */
  private readonly marked = new Map<number, { worldId: string; address: string; characterId: number }>();
  /** Characters the bus told link-dead and not back since (linkdeadChanged); at most the world's link-dead. */
  private readonly toldLinkdead = new Set<number>();
  /** Sessions this instance holds a lease for (it has open streams of them). */
  private readonly leased = new Set<number>();
  /** Lease writes go one after another, each writing the marked sessions' stream counts as they are then. */
  private leaseWrites: Promise<void> = Promise.resolve();
  private leaseTimer: NodeJS.Timeout | null = null;

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
    this.leaseTimer = setInterval(() => void this.renewLeases().catch((err: Error) => this.d.logger.error('Event stream lease renewal failed', { error: err.message })), LEASE_RENEW_MS);
    this.leaseTimer.unref();
  }

  /** Renews this instance's leases (its timer does, and the link-dead sweep first, as it reads them). */
  async renewLeases(): Promise<void> {
    await this.leaseWrites;
    if (this.leased.size > 0) await this.d.sessions.renewLeases(this.d.instanceId, toDbTime(new Date(this.d.clock().getTime() + LEASE_MS)));
  }

  /**
   * Marks the stream's session for the next lease write. Writes go one after another, each
   * taking every session marked before it began, so a crowd opening streams at once costs a
   * few writes, not one each.
   */
  private lease(stream: Stream): void {
    if (this.stopped) return;
    const queued = this.marked.size > 0;
    this.marked.set(stream.sessionId, { worldId: stream.player.worldId, address: stream.address, characterId: stream.player.characterId });
    if (queued) return;
    this.leaseWrites = this.leaseWrites
      .then(() => this.writeLeases())
      .catch((err: Error) => {
        this.d.logger.error('Event stream lease write failed', { error: err.message });
      });
  }

  /**
   * The leases of the marked sessions as their streams on this instance are now. A session that
   * got its first stream or lost its last changed its character's connectedness: the session
   * caches and the lists of every instance hear it (the lists once per world), and so do the
   * world's players (linkdeadChanged).
   */
  private async writeLeases(): Promise<void> {
    const marked = [...this.marked];
    this.marked.clear();
    let leases = marked
      .map(([sessionId, { worldId, address, characterId }]) => ({ sessionId, worldId, address, characterId, streams: this.bySession.get(sessionId).size }))
      .filter((lease) => lease.streams > 0 || this.leased.has(lease.sessionId));
    if (leases.length === 0) return;
    const now = this.d.clock();
    const write = (some: typeof leases) => this.d.sessions.writeLeases(this.d.instanceId, some, toDbTime(new Date(now.getTime() + LEASE_MS)), toDbTime(now));
    try {
      await write(leases);
    } catch {
      // A session deleted meanwhile has no lease to write; it must not cost the others theirs.
      const written: typeof leases = [];
      for (const lease of leases) {
        await write([lease]).then(
          () => written.push(lease),
          (err: Error) => this.d.logger.error('Event stream lease write failed', { session_id: lease.sessionId, error: err.message }),
        );
      }
      leases = written;
    }
    const changed = leases.filter((lease) => lease.streams > 0 !== this.leased.has(lease.sessionId));
    for (const lease of changed) {
      if (lease.streams > 0) this.leased.add(lease.sessionId);
      else this.leased.delete(lease.sessionId);
    }
    // Who was told link-dead before, on any instance.
    const wasLinkdead = new Set(changed.filter((lease) => lease.streams > 0 && this.toldLinkdead.has(lease.characterId)).map((lease) => lease.characterId));
    for (const sessionIds of idChunks(changed.map((lease) => lease.sessionId))) await this.d.bus.publish({ type: 'session.changed', sessionIds });
    for (const worldId of new Set(changed.map((lease) => lease.worldId))) await this.d.bus.publish({ type: 'connection', worldId });
    await this.linkdeadChanged(changed, wasLinkdead);
  }

  /**
   * Tells the world's players when a character went link-dead (its last stream closed and
   * nothing else keeps it connected) or came back from being link-dead (a stream opened), as a
   * `presence` event with `linkdead`, so clients mark it without asking (the play client's room
   * and Online list). Opening a stream is told only for a character told link-dead before (any
   * instance's event: toldLinkdead), so a crowd entering the world costs no event each.
   */
  private async linkdeadChanged(changed: ReadonlyArray<{ worldId: string; characterId: number; streams: number }>, wasLinkdead: ReadonlySet<number>): Promise<void> {
    const byWorld = new Map<string, number[]>();
    for (const lease of changed) {
      if (lease.streams > 0 && !wasLinkdead.has(lease.characterId)) continue;
      byWorld.set(lease.worldId, [...(byWorld.get(lease.worldId) ?? []), lease.characterId]);
    }
    const now = this.d.clock();
    const idleSince = new Date(now.getTime() - this.d.game.state.idleWindowMs);
    for (const [worldId, ids] of byWorld) {
      for (const chunk of idChunks([...new Set(ids)])) {
        for (const c of await this.d.repo.activeCharacters(worldId, now, idleSince, chunk)) {
          // Opened streams: only those now connected; closed ones: only those now link-dead.
          if (c.linkdead === wasLinkdead.has(c.id)) continue;
          await this.d.bus.publish({ type: 'presence', worldId, characterId: c.id, name: c.name, online: true, linkdead: c.linkdead });
        }
      }
    }
  }

  /** Ends every stream (reason shutdown) and stops listening. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sessionCheck) clearInterval(this.sessionCheck);
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    for (const stream of [...this.streams]) this.end(stream, 'shutdown');
    await this.leaseWrites;
    try {
      if (this.leased.size > 0) await this.d.sessions.dropLeases(this.d.instanceId, toDbTime(this.d.clock()));
    } catch (err) {
      // They lapse within LEASE_MS anyway.
      this.d.logger.error('Event stream leases not dropped at shutdown', { error: (err as Error).message });
    }
    await this.d.bus.close();
  }

  stats(): StreamCounters {
    let backlogBytes = 0;
    for (const stream of this.streams) backlogBytes += stream.sink?.buffered() ?? 0;
    return {
      open: this.streams.size,
      backlogBytes,
      eventsSent: this.counters.eventsSent,
      endedByReason: { ...this.counters.endedByReason },
      indexes: { session: this.bySession.size(), world: this.byWorld.size(), room: this.byRoom.size(), character: this.byCharacter.size() },
      leasesPending: this.marked.size,
      leasedSessions: this.leased.size,
      linkdeadTold: this.toldLinkdead.size,
    };
  }

  /**
   * Opens a stream for a session's character: 503 past the instance's limit or once shutting
   * down; past the session's limit its oldest stream ends (reason replaced); 429 past the
   * account's or the address's limit. The chat missed since `resumeAfter` comes first, then
   * live events. A client already gone opens nothing.
   */
  async open(sessionId: number, holder: StreamHolder, player: Actor, resumeAfter: number | null, sink: StreamSink): Promise<void> {
    const stream = await this.add(sessionId, holder, player, sink, null);
    // The close listener comes right after registration, and fires at once for a client that
    // hung up while the request was being authenticated: such a stream must not stay
    // registered with no socket.
    sink.onClose(() => this.closed(stream));
    if (stream.ended) return;
    this.write(stream, `retry: 2000\n\n`);
    await this.begin(stream, resumeAfter);
  }

  /** Opens a stream that hands its events to `listener` (the telnet door), live from now; the same limits as `open`. */
  async listen(sessionId: number, holder: StreamHolder, player: Actor, listener: EventListener): Promise<void> {
    await this.begin(await this.add(sessionId, holder, player, null, listener), null);
  }

  private async add(sessionId: number, holder: StreamHolder, player: Actor, sink: StreamSink | null, listener: EventListener | null): Promise<Stream> {
    // A request that reached a keep-alive connection as the shutdown began must not hold it open.
    if (this.stopped) throw new FeatureUnavailable('The server is shutting down.');
    if (this.streams.size >= this.d.config.streamsPerInstance) throw new FeatureUnavailable('Too many open event streams on this server; try again later.');
    const own = [...this.bySession.get(sessionId)];
    for (const old of own.slice(0, Math.max(0, own.length - this.d.config.streamsPerSession + 1))) this.end(old, 'replaced');
    const ticket = await this.d.quota.acquire(holder);
    if (ticket === 'account') throw new TooManyRequests(`open event streams for this account (at most ${this.d.config.streamsPerAccount})`, STREAM_LIMIT_RETRY_SECONDS);
    if (ticket === 'address') throw new TooManyRequests(`open event streams from this address (at most ${this.d.config.streamsPerAddress})`, STREAM_LIMIT_RETRY_SECONDS);
    const stream: Stream = {
      sessionId,
      player: { ...player },
      reader: { characterId: player.characterId, ignored: NOBODY },
      sink,
      listener,
      chatCursor: 0,
      seq: 0,
      ticket,
      address: holder.address,
      lastWriteAt: Date.now(),
      pending: [],
      ended: false,
      missedChecks: 0,
    };
    // Registered before the replay is read, so nothing committed in between is missed.
    this.register(stream);
    return stream;
  }

  /** The chat missed since `resumeAfter` (none without it), then the live events that came meanwhile. */
  private async begin(stream: Stream, resumeAfter: number | null): Promise<void> {
    const player = stream.player;
    // The newest message first, right after registration: a message committed in between would
    // count as seen, so nothing may widen that gap. Then whom the account ignores: a change made
    // meanwhile is among the pending events, which read the list again.
    if (resumeAfter === null) stream.chatCursor = await this.d.repo.lastMessageId();
    await this.readIgnored(stream);
    if (resumeAfter !== null) {
      stream.chatCursor = resumeAfter;
      if (player.roomId) {
        const missed = await this.d.repo.recentMessages(player.worldId, player.roomId, stream.reader, CHAT_HISTORY, resumeAfter);
        for (const row of missed) this.sendChat(stream, row, null);
      }
    }
    const pending = stream.pending ?? [];
    stream.pending = null;
    for (const event of pending) await this.deliver(stream, event);
  }

  private async readIgnored(stream: Stream): Promise<void> {
    stream.reader = { characterId: stream.player.characterId, ignored: await this.d.ignores.ignoredBy(stream.player.accountId) };
  }

  /** Ends a stream: an `end` event, then the connection closes (dropped when the client does not take it within END_DRAIN_MS). */
  private end(stream: Stream, reason: StreamEndReason): void {
    if (stream.ended) return;
    this.forget(stream);
    this.counters.endedByReason[reason] = (this.counters.endedByReason[reason] ?? 0) + 1;
    const data: Schemas['EndEvent'] = { reason };
    if (stream.listener) {
      this.counters.eventsSent++;
      stream.listener.event('end', data);
      return;
    }
    const sink = stream.sink!;
    sink.write(`id: ${this.nextId(stream)}\n${frameBody('end', data)}`);
    this.counters.eventsSent++;
    sink.close(END_DRAIN_MS);
  }

  /** The client went away: its sink closed, or the listener's connection (the telnet door) is gone. */
  closed(subscriber: Stream | EventListener): void {
    for (const stream of 'event' in subscriber ? this.byListener(subscriber) : [subscriber]) if (!stream.ended) this.forget(stream);
  }

  private byListener(listener: EventListener): Stream[] {
    return [...this.streams].filter((s) => s.listener === listener);
  }

  private register(stream: Stream): void {
    const { player } = stream;
    this.streams.add(stream);
    this.bySession.add(stream.sessionId, stream);
    this.byWorld.add(player.worldId, stream);
    this.byRoom.add(roomKey(player.worldId, player.roomId), stream);
    this.byCharacter.add(player.characterId, stream);
    this.lease(stream);
  }

  private forget(stream: Stream): void {
    const { player } = stream;
    stream.ended = true;
    this.streams.delete(stream);
    this.bySession.remove(stream.sessionId, stream);
    this.byWorld.remove(player.worldId, stream);
    this.byRoom.remove(roomKey(player.worldId, player.roomId), stream);
    this.byCharacter.remove(player.characterId, stream);
    stream.ticket.release();
    this.lease(stream);
  }

  private nextId(stream: Stream): string {
    return `${stream.chatCursor}-${++stream.seq}`;
  }

  /**
   * An event other than chat. A listener takes its name and data; an SSE stream gets its own id
   * line, then the body: encoded once per bus event and shared by every stream given the same
   * `frames`, or for this stream alone without them.
   */
  private send(stream: Stream, name: StreamEventName, data: () => object, frames: SharedFrames | null): void {
    if (stream.ended) return;
    this.counters.eventsSent++;
    if (stream.listener) {
      stream.listener.event(name, data());
      return;
    }
    this.write(stream, `id: ${this.nextId(stream)}\n`);
    this.write(stream, frames ? frames.get(name, () => frameBody(name, data())) : frameBody(name, data()));
  }

  /** A chat message; with `frames`, its SSE frame is encoded once for every stream given them. */
  private sendChat(stream: Stream, row: ChatRow, frames: SharedFrames | null): void {
    if (row.id <= stream.chatCursor || stream.ended) return;
    stream.chatCursor = row.id;
    this.counters.eventsSent++;
    if (stream.listener) stream.listener.event('chat', chatMessage(row) satisfies Schemas['ChatEvent']);
    else this.write(stream, frames ? frames.get(`chat ${row.id}`, () => chatFrame(row)) : chatFrame(row));
  }

  /**
   * Hands the frame to the connection, which keeps what the client has not read yet; a stream
   * holding more than backlog_bytes for its client is dropped (lagging), so nothing grows
   * without bound.
   */
  private write(stream: Stream, chunk: Buffer | string): void {
    const sink = stream.sink;
    if (stream.ended || !sink) return;
    stream.lastWriteAt = Date.now();
    sink.write(chunk);
    if (sink.buffered() > this.d.config.backlogBytes) this.end(stream, 'lagging');
  }

  private async dispatch(event: BusEvent): Promise<void> {
    if (event.type === 'presence') {
      if (event.linkdead === true) this.toldLinkdead.add(event.characterId);
      else this.toldLinkdead.delete(event.characterId);
    } else if (event.type === 'reconnected') this.toldLinkdead.clear();
    if (event.type === 'session.ended') {
      for (const id of event.sessionIds) for (const stream of [...this.bySession.get(id)]) this.end(stream, event.reason);
      return;
    }
    // A world change reaches the streams through roomsChanged, once this instance has applied it.
    if (event.type === 'session.changed' || event.type === 'account.changed' || event.type === 'world.changed' || event.type === 'connection') return;
    const targets = [...this.audience(event)];
    if (targets.length === 0) return;
    // Chat rows are read once for every stream of this instance, and each frame encoded once.
    const rows = event.type === 'chat' ? await this.d.game.chatRows(event.messageIds) : [];
    const frames = new SharedFrames();
    // Moves made while the bus was down were never told: where each character is now.
    const rooms = event.type === 'reconnected' ? await this.roomsOf(targets) : undefined;
    for (const stream of targets) {
      if (stream.pending) stream.pending.push(event);
      else await this.deliver(stream, event, rows, frames, rooms);
    }
  }

  /** The streams that may see something of an event: those in its rooms, its world, the mover's own, or the account's. */
  private audience(event: Exclude<BusEvent, { type: 'session.ended' | 'session.changed' | 'account.changed' | 'world.changed' | 'connection' }>): Set<Stream> {
    switch (event.type) {
      case 'reconnected':
      case 'announcement':
        return new Set(this.streams);
      case 'ignores.changed':
        // Rare enough to look through every stream rather than keep an index by account.
        return new Set([...this.streams].filter((s) => s.player.accountId === event.userId));
      case 'presence':
        return new Set(this.byWorld.get(event.worldId));
      case 'chat':
        if (event.worldWide) return new Set(this.byWorld.get(event.worldId));
        return new Set(event.roomIds.flatMap((roomId) => [...this.byRoom.get(roomKey(event.worldId, roomId))]));
      case 'item':
        return new Set(this.byRoom.get(roomKey(event.worldId, event.roomId)));
      case 'npc.move':
        return new Set([event.from, event.to].flatMap((roomId) => (roomId === null ? [] : [...this.byRoom.get(roomKey(event.worldId, roomId))])));
      case 'move':
        return new Set([
          ...this.byCharacter.get(event.characterId),
          ...(event.from === null ? [] : this.byRoom.get(roomKey(event.worldId, event.from))),
          ...(event.to === null ? [] : this.byRoom.get(roomKey(event.worldId, event.to))),
        ]);
    }
  }

  private async roomsOf(streams: readonly Stream[]): Promise<Map<number, string | null>> {
    const rooms = new Map<number, string | null>();
    for (const ids of idChunks([...new Set(streams.map((s) => s.player.characterId))])) {
      for (const [id, room] of await this.d.repo.roomsOf(ids)) rooms.set(id, room);
    }
    return rooms;
  }

  /** Builders changed these rooms (applied on this instance): each stream standing in one gets its `room` again. */
  async roomsChanged(worldId: string, roomIds: readonly string[]): Promise<void> {
    const event: BusEvent = { type: 'world.changed', worldId, roomIds: [...roomIds], itemRoomIds: [], characterIds: [] };
    for (const stream of new Set(roomIds.flatMap((roomId) => [...this.byRoom.get(roomKey(worldId, roomId))]))) {
      if (stream.pending) stream.pending.push(event);
      else await this.deliver(stream, event);
    }
  }

  /** Tells the stream its character is in `roomId` now, with the room's `look`. */
  private async sendRoom(stream: Stream, roomId: string | null): Promise<void> {
    const me = stream.player;
    if (!stream.ended) this.byRoom.remove(roomKey(me.worldId, me.roomId), stream);
    me.roomId = roomId;
    if (!stream.ended) this.byRoom.add(roomKey(me.worldId, me.roomId), stream);
    if (roomId === null) return;
    const shown = await this.d.game.showRoom(stream.player, roomId);
    if (shown) this.send(stream, 'room', () => ({ room_id: roomId, look: shown.look, room: shown.room }) satisfies Schemas['RoomEvent'], null);
  }

  /** What one stream's character sees of an event. */
  private async deliver(stream: Stream, event: BusEvent, chatRows?: ChatRow[], frames = new SharedFrames(), rooms?: Map<number, string | null>): Promise<void> {
    const me = stream.player;
    switch (event.type) {
      case 'chat': {
        const rows = chatRows ?? (await this.d.game.chatRows(event.messageIds));
        for (const row of rows) {
          if ((row.roomId === me.roomId || WORLD_CHANNELS.includes(row.channel)) && readable(row, stream.reader)) this.sendChat(stream, row, frames);
        }
        return;
      }
      case 'ignores.changed':
        await this.readIgnored(stream);
        return;
      case 'announcement':
        this.send(stream, 'announcement', () => ({ from: event.from, text: event.text, sent_at: event.sentAt }) satisfies Schemas['AnnouncementEvent'], frames);
        return;
      case 'move': {
        if (event.characterId === me.characterId) {
          // Only a change of room is told: the arrival of the login that opened this stream
          // may be heard after it opened, and the client already stands there.
          if (event.to !== me.roomId) await this.sendRoom(stream, event.to);
          return;
        }
        const who = { character: event.name, direction: event.direction, cause: event.cause };
        if (event.from !== null && event.from === me.roomId) {
          this.send(stream, 'leave', () => ({ ...who, room_id: event.from! }) satisfies Schemas['LeaveEvent'], frames);
        }
        if (event.to !== null && event.to === me.roomId) {
          this.send(stream, 'arrive', () => ({ ...who, room_id: event.to! }) satisfies Schemas['ArriveEvent'], frames);
        }
        return;
      }
      case 'npc.move': {
        const who = { character: event.name, direction: event.direction, cause: 'walk' as const, npc: true, npc_id: event.npcId };
        if (event.from !== null && event.from === me.roomId) this.send(stream, 'leave', () => ({ ...who, room_id: event.from! }) satisfies Schemas['LeaveEvent'], frames);
        if (event.to !== null && event.to === me.roomId) this.send(stream, 'arrive', () => ({ ...who, room_id: event.to! }) satisfies Schemas['ArriveEvent'], frames);
        return;
      }
      case 'item':
        if (event.roomId === me.roomId && event.characterId !== me.characterId) {
          this.send(stream, 'item', () => ({ character: event.name, item: event.item, action: event.action, room_id: event.roomId }) satisfies Schemas['ItemEvent'], frames);
        }
        return;
      case 'presence':
        if (event.characterId !== me.characterId) {
          const linkdead = event.linkdead === undefined ? {} : { linkdead: event.linkdead };
          this.send(stream, 'presence', () => ({ character: event.name, online: event.online, ...linkdead }) satisfies Schemas['PresenceEvent'], frames);
        }
        return;
      case 'reconnected': {
        // Whom the account ignores may have changed while the bus was down.
        await this.readIgnored(stream);
        // A move made while the bus was down: the room first, as its live event would have.
        const room = (rooms ?? (await this.d.repo.roomsOf([me.characterId]))).get(me.characterId);
        if (room !== undefined && room !== me.roomId) await this.sendRoom(stream, room);
        // The chat committed while the bus was down, read back as a resume does.
        if (me.roomId) {
          for (const row of await this.d.repo.recentMessages(me.worldId, me.roomId, stream.reader, CHAT_HISTORY, stream.chatCursor)) this.sendChat(stream, row, null);
        }
        return;
      }
      case 'session.ended':
      case 'session.changed':
      case 'account.changed':
      case 'connection':
        return;
      case 'world.changed':
        if (me.roomId !== null && event.roomIds.includes(me.roomId)) await this.sendRoom(stream, me.roomId);
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
