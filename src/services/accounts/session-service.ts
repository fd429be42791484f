/**
 * Server-side sessions: creation at login, validation on every protected request (expiry
 * enforced, role re-read from the account), sliding expiry capped at a maximum age, and the
 * bulk sweep.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../config/config.ts';
import { fromDbTime, toDbTime, type Clock } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import { sessionTokenHash, type SessionRecord, type SessionRepository } from '../../db/repositories/session-repository.ts';
import type { Presence } from '../presence/presence.ts';
import type { SessionCache } from './session-cache.ts';
import type { SessionActivity } from './session-activity.ts';
import { Unauthenticated } from '../../shared/errors.ts';

export type AuthenticatedSession = SessionRecord;

/** A new session: its handle and its token (the secret only the client keeps). */
export interface OpenedSession {
  id: number;
  token: string;
}

/** The one answer for every session that does not authenticate, so none can be told apart. */
export const INVALID_SESSION = 'Invalid or expired session';

const ACTIVITY_RESOLUTION_MS = 15_000;
/**
 * Expired sessions ended per sweep transaction: each batch commits on its own, so the sweep
 * makes progress however many expired at once (a busy hour, or after downtime), and no
 * transaction holds more row locks or announces more than this.
 */
export const SWEEP_BATCH = 500;

/** A client type worth storing: a short token, never markup or control characters. */
const CLIENT_TYPE = /^[a-z0-9._-]{1,32}$/;

/** `X-Client-Type`, trimmed and lower-cased, when that is a CLIENT_TYPE token; `unknown` otherwise (also when absent or blank). */
export function normalizeClientType(header: string | undefined): string {
  const value = (header ?? '').trim().toLowerCase();
  return CLIENT_TYPE.test(value) ? value : 'unknown';
}

function isExpired(session: SessionRecord, stamp: string): boolean {
  return (session.expiresAt !== null && session.expiresAt <= stamp) || (session.accountExpiresAt !== null && session.accountExpiresAt <= stamp);
}

/** Lookups waiting for one query: by token hash, whoever asked for it. */
type LookupBatch = Map<string, Array<{ resolve: (record: SessionRecord | undefined) => void; reject: (err: unknown) => void }>>;

export class SessionService {
  private readonly db: Db;
  private readonly sessions: SessionRepository;
  private readonly activity: SessionActivity;
  private readonly presence: Presence;
  private readonly cache: SessionCache;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly maxAgeMs: number;
  private readonly sliding: boolean;
  private pendingLookups: LookupBatch | null = null;

  /** How long a request keeps a session connected ([presence] idle_seconds). */
  private readonly idleMs: number;

  constructor(db: Db, sessions: SessionRepository, activity: SessionActivity, presence: Presence, cache: SessionCache, config: Config['session'], clock: Clock, idleMs: number) {
    this.idleMs = idleMs;
    this.db = db;
    this.sessions = sessions;
    this.activity = activity;
    this.presence = presence;
    this.cache = cache;
    this.clock = clock;
    this.ttlMs = config.ttlMinutes * 60_000;
    this.maxAgeMs = config.maxAgeDays * 86_400_000;
    this.sliding = config.slidingExpiration;
  }

  /**
   * The expiry of a session active at `now`: ttl_minutes ahead, but never later than max_age_days
   * after its creation. The cap is in `expires_at` itself, so validation, the sweep and every
   * listing of live sessions agree on when a session ends.
   */
  private expiryFrom(now: Date, createdAt: Date): string {
    return toDbTime(new Date(Math.min(now.getTime() + this.ttlMs, createdAt.getTime() + this.maxAgeMs)));
  }

  /**
   * Opens a session (inside the caller's transaction). The token goes to the client and is
   * not kept: the database stores only its hash.
   */
  async open(userId: number, clientType: string, trx: Knex): Promise<OpenedSession> {
    const now = this.clock();
    const token = randomUUID();
    const id = await this.sessions.create({ token, userId, clientType, createdAt: toDbTime(now), expiresAt: this.expiryFrom(now, now) }, trx);
    return { id, token };
  }

  /**
   * 401 for a missing, unknown, expired or orphaned session, or one of a deactivated or expired
   * account; otherwise records the activity (in memory, written within a second: see
   * session-activity.ts). Served from the session cache when it can be.
   */
  async validate(token: string | undefined): Promise<AuthenticatedSession> {
    if (!token) throw new Unauthenticated(INVALID_SESSION);
    const now = this.clock();
    const stamp = toDbTime(now);
    const key = sessionTokenHash(token);
    let session = this.cache.get(key, now.getTime());
    // A remembered session that looks expired is read again: another instance may have slid it.
    if (!session || isExpired(session, stamp)) {
      const version = this.cache.version;
      const stored = await this.lookup(key, stamp);
      // Activity not yet written is newer than the row: without it a slid session could look expired.
      session = stored && this.activity.applyPending(stored);
      if (session) this.cache.set(key, session, now.getTime(), version);
    }
    if (!session || !session.isActive) throw new Unauthenticated(INVALID_SESSION);
    // An expired session is left to the sweep, which also tells the world its character left.
    if (isExpired(session, stamp)) throw new Unauthenticated(INVALID_SESSION);
    // Link-dead too long, its character left the lists: this request brings it back.
    if (session.away) {
      await this.presence.comeBack(session);
      const back = { ...session, away: false, lastActivity: stamp };
      this.cache.update(key, session, back);
      return back;
    }
    // Clients poll every second; recording activity (and sliding the expiry) at most every
    // ACTIVITY_RESOLUTION_MS keeps the batches small and shortens a 480-minute life by seconds.
    // A request after the session's last stream closed is recorded at once: it connects the
    // character again (docs/decisions.md, "Presence means connected").
    const sinceStream = session.disconnectedAt !== null && session.disconnectedAt >= session.lastActivity;
    const sinceActivity = now.getTime() - fromDbTime(session.lastActivity).getTime();
    if (!sinceStream && sinceActivity < ACTIVITY_RESOLUTION_MS) return session;
    const expiresAt = this.sliding ? this.expiryFrom(now, fromDbTime(session.createdAt)) : undefined;
    const slid = expiresAt === undefined ? {} : { expiresAt };
    this.activity.record({ id: session.id, lastActivity: stamp, ...slid });
    const touched = { ...session, lastActivity: stamp, ...slid };
    this.cache.update(key, session, touched);
    // The session may have been link-dead: written now, so every instance's lists see it connected.
    // One with an open stream was connected all along (each such request used to make every
    // instance reload the world's whole list).
    if (!session.streaming && (sinceStream || sinceActivity >= this.idleMs) && session.characterId !== null && session.worldId !== null) {
      try {
        await this.activity.flush();
        await this.presence.connected(session.worldId);
      } catch {
        // The activity stays pending and is retried; the lists catch up when it is written.
      }
    }
    return touched;
  }

  /**
   * The stored session for a token hash. Lookups asked for in one turn of the event loop are
   * read with one query: under load many arrive together, and one query a session would queue
   * them behind each other on the database.
   */
  private lookup(tokenHash: string, stamp: string): Promise<SessionRecord | undefined> {
    let batch = this.pendingLookups;
    if (!batch) {
      const created = (batch = this.pendingLookups = new Map());
      setImmediate(() => void this.readLookups(created, stamp));
    }
    return new Promise((resolve, reject) => {
      const waiting = batch.get(tokenHash);
      if (waiting) waiting.push({ resolve, reject });
      else batch.set(tokenHash, [{ resolve, reject }]);
    });
  }

  private async readLookups(batch: LookupBatch, stamp: string): Promise<void> {
    if (this.pendingLookups === batch) this.pendingLookups = null;
    try {
      const found = await this.sessions.findByTokenHashes([...batch.keys()], stamp);
      for (const [tokenHash, waiting] of batch) for (const w of waiting) w.resolve(found.get(tokenHash));
    } catch (err) {
      for (const waiting of batch.values()) for (const w of waiting) w.reject(err);
    }
  }

  /** Writes the activity validation has recorded so far (the timer does it within a second). */
  async flushActivity(): Promise<void> {
    await this.activity.flush();
  }

  /**
   * Removes the expired sessions, SWEEP_BATCH per transaction; their characters that nobody else
   * plays leave. Returns how many ended.
   */
  async sweepExpired(): Promise<number> {
    // Activity first, so the sweep never ends a session this instance has seen in use.
    await this.activity.flush();
    const now = toDbTime(this.clock());
    let total = 0;
    for (;;) {
      const ended = await this.db.transaction(async (trx) => {
        const batch = await this.sessions.deleteExpired(now, SWEEP_BATCH, trx);
        await this.presence.ended(batch, 'expiry', trx);
        return batch.length;
      });
      total += ended;
      if (ended < SWEEP_BATCH) return total;
    }
  }
}
