/**
 * Session activity (last activity, slid expiry) kept in memory and written in batches, so a
 * request never waits on a write to record that it was made (docs/decisions.md, "The hot
 * path"). What is pending is written within FLUSH_DELAY_MS, before a sweep, and at close.
 * While the database refuses the writes (an outage) they are retried with backoff, and the
 * outage is logged once when it begins and once when it ends.
 */
import type { Logger } from '../../logging/logger.ts';
import type { SessionActivityRow, SessionRecord, SessionRepository } from '../../db/repositories/session-repository.ts';

const FLUSH_DELAY_MS = 1000;
/** The longest wait between retries while writes fail. */
const RETRY_MAX_MS = 30_000;

export class SessionActivity {
  private readonly sessions: SessionRepository;
  private readonly logger: Logger;
  /** By session id: the newest activity not yet known to be written. */
  private readonly pending = new Map<number, SessionActivityRow>();
  /** Armed while something is pending; unref'd, so it never keeps the process alive. */
  private timer: NodeJS.Timeout | undefined;
  /** The write under way; settles without rejecting. */
  private writing: Promise<void> | undefined;
  /** The next timer's delay: FLUSH_DELAY_MS, doubling while writes fail. */
  private delayMs = FLUSH_DELAY_MS;
  /** When the writes began to fail (Date.now()), while they do. */
  private failingSince: number | undefined;

  constructor(sessions: SessionRepository, logger: Logger) {
    this.sessions = sessions;
    this.logger = logger;
  }

  /** Remembers a session's activity; the latest stamp wins. */
  record(activity: SessionActivityRow): void {
    const known = this.pending.get(activity.id);
    if (known && known.lastActivity > activity.lastActivity) return;
    this.pending.set(activity.id, activity);
    this.schedule();
  }

  /** `session` as read from the database, with its pending activity when that is newer. */
  applyPending(session: SessionRecord): SessionRecord {
    const activity = this.pending.get(session.id);
    if (!activity || activity.lastActivity <= session.lastActivity) return session;
    return { ...session, lastActivity: activity.lastActivity, expiresAt: activity.expiresAt ?? session.expiresAt };
  }

  /**
   * Writes everything pending, after the write under way if there is one (writes never
   * overlap). On failure the entries stay pending, unless newer activity replaced them, and
   * the next flush is scheduled, later each time while the failures last.
   */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.pending.size === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    const write = this.sessions.recordActivity(batch);
    this.writing = write
      .then(
        () => {
          for (const row of batch) if (this.pending.get(row.id) === row) this.pending.delete(row.id);
          if (this.failingSince !== undefined) {
            this.logger.warn('Session activity written again', { sessions: batch.length, failing_ms: Date.now() - this.failingSince });
            this.failingSince = undefined;
          }
          this.delayMs = FLUSH_DELAY_MS;
        },
        (err: Error) => {
          if (this.failingSince === undefined) {
            this.failingSince = Date.now();
            this.logger.error('Session activity cannot be written; kept in memory and retried with backoff', { sessions: this.pending.size, error: err.message });
          }
          this.delayMs = Math.min(this.delayMs * 2, RETRY_MAX_MS);
          this.schedule();
        },
      )
      .finally(() => {
        this.writing = undefined;
      });
    await write;
  }

  /** Writes what is pending and stops the timer; the database must still be open. */
  async close(): Promise<void> {
    try {
      await this.flush();
    } catch (err) {
      this.logger.error('Session activity lost at close', { sessions: this.pending.size, error: (err as Error).message });
    } finally {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A failure is logged by flush() itself, once per outage.
      this.flush().catch(() => undefined);
    }, this.delayMs);
    this.timer.unref();
  }
}
