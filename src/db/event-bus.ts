/**
 * The bus that carries game events between server instances once their writes have committed.
 * SQLite serves one instance, so its bus is in-process. On PostgreSQL every instance LISTENs
 * on one dedicated connection and publishers NOTIFY through the pool: the database delivers a
 * notification only when the transaction that sent it commits, to every instance alike (the
 * sender included). Every payload is bounded whatever the data (PostgreSQL refuses a NOTIFY of
 * 8000 bytes or more): chat is named by message id and read back by the listening instance, a
 * list of ids is published in events of at most MAX_IDS_PER_EVENT, and `encodeEvent` refuses
 * anything larger on either database, so an unbounded event fails in every test run.
 */
import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../logging/logger.ts';

export type StreamEndReason = 'logout' | 'kick' | 'expiry' | 'ban' | 'password_change' | 'deleted' | 'shutdown' | 'replaced' | 'lagging';

/** How a character came to leave or enter a room. */
export type MoveCause = 'walk' | 'recall' | 'login' | 'logout';

/**
 * On what a script did (its chat, its NPC's walk): the happening it belongs to (a number that
 * names it on the instance where it began: a player's action, a timer's firing, a load), how
 * many scripts led to it (`depth`, stopped at `[scripts] chain_depth`), and the script that did
 * it (`by`, which is not woken by its own doing). Events that carry it are only read on the
 * instance that published them (src/services/scripts/script-service.ts); `by` is a script key
 * of at most about 80 characters, so the payload stays bounded.
 */
export interface ScriptCause {
  happening: number;
  depth: number;
  by: string;
}

export type BusEvent =
  /** `worldWide`: messages of WORLD_CHANNELS (ooc, tell), for every stream of the world rather than those in `roomIds`. */
  | { type: 'chat'; worldId: string; roomIds: string[]; messageIds: number[]; worldWide?: true; cause?: ScriptCause }
  | { type: 'move'; worldId: string; characterId: number; name: string; from: string | null; to: string | null; direction: string | null; cause: MoveCause }
  /**
   * An item taken or dropped by a character, or one that appears in or vanishes from a room by a
   * builder's change (`characterId` and `name` null).
   */
  | { type: 'item'; worldId: string; roomId: string; characterId: number | null; name: string | null; item: string; action: 'take' | 'drop' | 'appear' | 'vanish'; itemRowId?: number }
  /** `linkdead`: a character still online lost its connection (true) or has it again (false); absent when it came or went. */
  | { type: 'presence'; worldId: string; characterId: number; name: string; online: boolean; linkdead?: boolean }
  | { type: 'session.ended'; sessionIds: number[]; reason: StreamEndReason }
  /** Characters of the world got their first or lost their last open event stream, or requested again after an idle gap (for the lists of who is link-dead). */
  | { type: 'connection'; worldId: string }
  /** A session now plays another character (for the session caches). */
  | { type: 'session.changed'; sessionIds: number[] }
  /** An account's role or standing changed (for the session caches; a mute too). */
  | { type: 'account.changed'; userId: number }
  /** The characters an account ignores changed (src/services/moderation/ignores.ts). */
  | { type: 'ignores.changed'; userId: number }
  /** A staff announcement (`wall`) for every stream of every world; `text` at most 500 characters before HTML escaping. */
  | { type: 'announcement'; from: string; text: string; sentAt: string }
  /**
   * Builders changed these rooms of a world (`roomIds`: every instance reads the rows written
   * since its revision, src/services/building/world-sync.ts), or the items lying in `itemRoomIds`
   * or held by `characterIds` (the caches drop them); `scripts` names the scripts saved
   * (`npc:<id>`, `room:<id>`, `item:<row id>`), which load again.
   */
  | { type: 'world.changed'; worldId: string; roomIds: string[]; itemRoomIds: string[]; characterIds: number[]; scripts?: string[] }
  /** An NPC walked (its script moved it), or was placed or removed (`from` or `to` null). */
  | { type: 'npc.move'; worldId: string; npcId: string; name: string; from: string | null; to: string | null; direction: string | null; cause?: ScriptCause }
  /** From the bus itself, to this instance only: it listens again after losing its connection. */
  | { type: 'reconnected' };

/** Under PostgreSQL's NOTIFY limit (8000 bytes), with room for the channel name. */
export const MAX_PAYLOAD_BYTES = 7800;
/** Ids of one event's list (sessions, messages): at most 11 bytes each in JSON, so 500 stay under 6 KB. */
export const MAX_IDS_PER_EVENT = 500;

/** `ids` in pieces of at most MAX_IDS_PER_EVENT, for one event each. */
export function idChunks(ids: readonly number[]): number[][] {
  const chunks: number[][] = [];
  for (let i = 0; i < ids.length; i += MAX_IDS_PER_EVENT) chunks.push(ids.slice(i, i + MAX_IDS_PER_EVENT));
  return chunks;
}

/** The event as its payload; throws for one over MAX_PAYLOAD_BYTES (a publisher that did not bound a list). */
export function encodeEvent(event: BusEvent): string {
  const payload = JSON.stringify(event);
  // A UTF-8 byte has at least one UTF-16 unit: only a long string needs counting.
  const bytes = payload.length * 3 <= MAX_PAYLOAD_BYTES ? payload.length : Buffer.byteLength(payload);
  if (bytes > MAX_PAYLOAD_BYTES) throw new Error(`Event bus payload of ${bytes} bytes (${event.type}) is over the limit of ${MAX_PAYLOAD_BYTES}`);
  return payload;
}

export interface EventBus {
  /** Publishes after commit: pass the transaction to have it delivered when (and only if) it commits; without one, call after the write. */
  publish(event: BusEvent, trx?: Knex.Transaction): Promise<void>;
  /** Hears every instance's events, this one's included (on PostgreSQL through the database). */
  subscribe(handler: (event: BusEvent) => void): void;
  /**
   * Hears this instance's own events the moment they commit, before the request that published
   * them answers: what a cache needs to read its own writes. Such a handler hears them again
   * through `subscribe`, later, so it must only invalidate.
   */
  onCommitted(handler: (event: BusEvent) => void): void;
  /** False while events of other instances may be missed (PostgreSQL: the LISTEN connection is down). */
  connected(): boolean;
  /** Starts receiving (PostgreSQL: opens the LISTEN connection). */
  start(): Promise<void>;
  close(): Promise<void>;
}

type Handler = (event: BusEvent) => void;

/** Runs `deliver` once the write is committed: at `trx`'s commit (never after a rollback), or now. */
function afterCommit(trx: Knex.Transaction | undefined, deliver: () => void): void {
  // A transaction commits when its promise resolves.
  if (trx) trx.executionPromise.then(deliver, () => undefined);
  else deliver();
}

/** One instance: events go straight to the subscribers. */
export class InProcessEventBus implements EventBus {
  private readonly handlers: Handler[] = [];
  private readonly committedHandlers: Handler[] = [];

  async publish(event: BusEvent, trx?: Knex.Transaction): Promise<void> {
    // Bounded here as on PostgreSQL, so that a test on SQLite catches an unbounded event too.
    encodeEvent(event);
    afterCommit(trx, () => {
      for (const handler of this.committedHandlers) handler(event);
      for (const handler of this.handlers) handler(event);
    });
  }

  subscribe(handler: Handler): void {
    this.handlers.push(handler);
  }

  onCommitted(handler: Handler): void {
    this.committedHandlers.push(handler);
  }

  connected(): boolean {
    return true;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}
}

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/** PostgreSQL LISTEN/NOTIFY; the channel is per schema, so instances on other schemas of the database do not hear each other. */
export class PostgresEventBus implements EventBus {
  private readonly handlers: Handler[] = [];
  private readonly committedHandlers: Handler[] = [];
  private readonly channel: string;
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly db: Knex;
  private readonly url: string;
  private readonly logger: Logger;

  constructor(db: Knex, url: string, schema: string | undefined, logger: Logger) {
    this.db = db;
    this.url = url;
    this.logger = logger;
    this.channel = schema ? `mud_events_${schema}` : 'mud_events';
  }

  async publish(event: BusEvent, trx?: Knex.Transaction): Promise<void> {
    const notify = (trx ?? this.db).raw('select pg_notify(?, ?)', [this.channel, encodeEvent(event)]);
    afterCommit(trx, () => {
      for (const handler of this.committedHandlers) handler(event);
    });
    // Inside a transaction a failure must roll it back; after a committed write it only costs
    // live delivery, which is at most once, so the request that made the write still succeeds.
    if (trx) {
      await notify;
      return;
    }
    try {
      await notify;
    } catch (err) {
      this.logger.error('Event bus publish failed', { event: event.type, error: (err as Error).message });
    }
  }

  subscribe(handler: Handler): void {
    this.handlers.push(handler);
  }

  onCommitted(handler: Handler): void {
    this.committedHandlers.push(handler);
  }

  connected(): boolean {
    return this.client !== null;
  }

  async start(): Promise<void> {
    await this.connect(false);
  }

  private emit(event: BusEvent): void {
    for (const handler of this.handlers) handler(event);
  }

  private async connect(reconnecting: boolean): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (msg) => {
      // Nothing before `reconnected` below: its chat catch-up must precede every live event.
      if (this.client !== client || msg.channel !== this.channel || !msg.payload) return;
      let event: BusEvent;
      try {
        event = JSON.parse(msg.payload) as BusEvent;
      } catch {
        return;
      }
      this.emit(event);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    // Closed while connecting (a reconnect in flight at shutdown): a connection kept now would hold the process open.
    if (this.closed) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    // Chat committed while the connection was down was never heard: the streams read it back
    // (src/services/game/event-streams.ts), or a later live chat would hide the gap from resume.
    if (reconnecting) this.emit({ type: 'reconnected' });
  }

  /** Events published while the connection is down are lost (live delivery is at most once), but for chat, which `reconnected` makes the streams read back. */
  private lost(client: pg.Client, err: Error): void {
    if (this.closed || this.client !== client) return;
    this.client = null;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    this.logger.warn('Event bus connection lost; reconnecting', { error: err.message, retry_ms: this.retryMs });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect(true).catch((err: Error) => {
        if (this.closed) return;
        this.logger.warn('Event bus reconnect failed', { error: err.message });
        this.scheduleReconnect();
      });
    }, delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}
