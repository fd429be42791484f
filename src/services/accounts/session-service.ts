/**
 * Server-side sessions: creation at login, validation on every protected request (expiry
 * enforced, role re-read from the account), sliding expiry, and the bulk sweep.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../config/config.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { SessionRecord, SessionRepository } from '../../db/repositories/session-repository.ts';
import { Unauthenticated } from '../errors.ts';

export type AuthenticatedSession = SessionRecord;

/** The one answer for every session that does not authenticate, so none can be told apart. */
export const INVALID_SESSION = 'Invalid or expired session';

const ACTIVITY_RESOLUTION_MS = 15_000;

/** `X-Client-Type`, trimmed and lower-cased; `unknown` when absent or blank. */
export function normalizeClientType(header: string | undefined): string {
  const value = (header ?? '').trim().toLowerCase();
  return value === '' ? 'unknown' : value.slice(0, 64);
}

export class SessionService {
  private readonly sessions: SessionRepository;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly sliding: boolean;

  constructor(sessions: SessionRepository, config: Config['session'], clock: Clock) {
    this.sessions = sessions;
    this.clock = clock;
    this.ttlMs = config.ttlMinutes * 60_000;
    this.sliding = config.slidingExpiration;
  }

  private expiryFrom(now: Date): string {
    return toDbTime(new Date(now.getTime() + this.ttlMs));
  }

  /** Opens a session (inside the caller's transaction) and returns its id. */
  async open(userId: number, clientType: string, trx: Knex): Promise<string> {
    const now = this.clock();
    const sessionId = randomUUID();
    await this.sessions.create({ sessionId, userId, clientType, createdAt: toDbTime(now), expiresAt: this.expiryFrom(now) }, trx);
    return sessionId;
  }

  /** 401 for a missing, unknown, expired or orphaned session; otherwise records the activity. */
  async validate(sessionId: string | undefined): Promise<AuthenticatedSession> {
    if (!sessionId) throw new Unauthenticated(INVALID_SESSION);
    const session = await this.sessions.find(sessionId);
    if (!session || !session.isActive) throw new Unauthenticated(INVALID_SESSION);
    const now = this.clock();
    const stamp = toDbTime(now);
    if (session.expiresAt !== null && session.expiresAt <= stamp) {
      await this.sessions.delete(sessionId);
      throw new Unauthenticated(INVALID_SESSION);
    }
    // Clients poll every second; recording activity (and sliding the expiry) at most every
    // ACTIVITY_RESOLUTION_MS spares a write per poll and shortens a 480-minute life by seconds.
    if (now.getTime() - Date.parse(`${session.lastActivity.replace(' ', 'T')}Z`) < ACTIVITY_RESOLUTION_MS) return session;
    const expiresAt = this.sliding ? this.expiryFrom(now) : undefined;
    await this.sessions.touch(session.id, stamp, expiresAt);
    return { ...session, lastActivity: stamp, ...(expiresAt === undefined ? {} : { expiresAt }) };
  }

  async close(sessionId: string): Promise<boolean> {
    return (await this.sessions.delete(sessionId)) > 0;
  }

  async sweepExpired(): Promise<number> {
    return this.sessions.deleteExpired(this.clock());
  }
}
