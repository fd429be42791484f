/**
 * Failed password attempts per account, counted in fixed windows in this process (like the
 * HTTP limits, each instance keeps its own count). Keyed by the account's id, never by the
 * name a client typed: only accounts that exist are counted, and failures for `ROOT` cannot
 * use up `root`'s allowance. Over the limit a wrong password answers 429 instead of 401 while
 * the right one still gets in, so a guesser can never lock the owner out (docs/decisions.md).
 */
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../db/clock.ts';
import { TooManyRequests } from '../errors.ts';

/** Windows kept before the expired ones are dropped: bounds memory under a guessing spree. */
const PRUNE_AT = 10_000;

export class FailedAttempts {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly enabled: boolean;
  private readonly clock: Clock;
  private readonly windows = new Map<number, { count: number; resetAt: number }>();

  constructor(limit: number, rateLimit: Config['rateLimit'], clock: Clock) {
    this.limit = limit;
    this.windowMs = rateLimit.windowSeconds * 1000;
    this.enabled = rateLimit.enabled;
    this.clock = clock;
  }

  /** Counts a failure of the account: the 429 to answer once it is over the limit, else null. */
  record(userId: number): TooManyRequests | null {
    if (!this.enabled) return null;
    const now = this.clock().getTime();
    let window = this.windows.get(userId);
    if (window === undefined || window.resetAt <= now) {
      if (this.windows.size >= PRUNE_AT) this.prune(now);
      window = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(userId, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return null;
    return new TooManyRequests('failed attempts', Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
  }

  private prune(now: number): void {
    for (const [userId, window] of this.windows) if (window.resetAt <= now) this.windows.delete(userId);
  }
}
