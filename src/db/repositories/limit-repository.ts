/**
 * SQL of the shared abuse-limit counts (src/services/limits/limits.ts): one statement counts a
 * hit, opening a new window when the key's last one has ended, so instances counting the same
 * key at once never lose a hit.
 */
import type { Db } from '../database.ts';
import { lockKey } from '../database.ts';

export class LimitRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Counts `amount` hits (0 reads the count). */
  async increment(key: string, windowMs: number, now: number, amount = 1): Promise<{ hits: number; resetAt: number }> {
    const result = await this.db.raw(
      `insert into limit_windows (key, hits, reset_at) values (?, ?, ?)
       on conflict (key) do update set
         hits = case when limit_windows.reset_at <= ? then excluded.hits else limit_windows.hits + excluded.hits end,
         reset_at = case when limit_windows.reset_at <= ? then excluded.reset_at else limit_windows.reset_at end
       returning hits, reset_at`,
      [key, amount, now + windowMs, now, now],
    );
    // pg answers { rows }, sqlite3 the rows themselves.
    const row = ((result as { rows?: unknown[] }).rows ?? result)[0] as { hits: number | string; reset_at: number | string };
    return { hits: Number(row.hits), resetAt: Number(row.reset_at) };
  }

  /** Deletes the windows that ended before `now`; instances pruning at once take turns. */
  async pruneEnded(now: number): Promise<number> {
    return this.db.transaction(async (trx): Promise<number> => {
      await lockKey(trx, 'limit-windows');
      return trx('limit_windows').where('reset_at', '<=', now).del();
    });
  }
}
