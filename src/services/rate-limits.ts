/**
 * The abuse limits every front door shares: logins, registrations and password changes per
 * client address, registrations per requested username, and the play throttle per session.
 * Each limit is one counter (express-rate-limit's store), so the HTTP routes (through their
 * middleware, src/http/middleware/rate-limit.ts) and the telnet door (through `hit`) count
 * into the same buckets: ten tries over HTTP and ten over telnet are twenty tries. The counters
 * live in this process, so with several instances each enforces its own share. Failed
 * passwords per account are counted by the account service (failed-attempts.ts).
 */
import { ipKeyGenerator, MemoryStore, type Options, type Store } from 'express-rate-limit';
import type { Config } from '../config/config.ts';
import { TooManyRequests } from './errors.ts';

/** One limit: at most `limit` attempts per key in each window of `windowMs`. */
export class AttemptLimit {
  readonly store: Store;
  readonly limit: number;
  readonly windowMs: number;
  readonly enabled: boolean;
  /** What the 429 message counts ("Too many attempts", "Too many commands"). */
  readonly what: string;

  constructor(limit: number, windowSeconds: number, enabled: boolean, what = 'attempts') {
    this.limit = limit;
    this.windowMs = windowSeconds * 1000;
    this.enabled = enabled;
    this.what = what;
    const store = new MemoryStore();
    // Callers outside HTTP count too, before any middleware has set the store up; the memory
    // store reads only the window from its options.
    store.init({ windowMs: this.windowMs } as Options);
    this.store = store;
  }

  /** Counts an attempt for `key`: the 429 to raise once past the limit, else null. */
  async hit(key: string): Promise<TooManyRequests | null> {
    if (!this.enabled) return null;
    const { totalHits, resetTime } = await this.store.increment(key);
    return totalHits <= this.limit ? null : this.exceeded(resetTime);
  }

  /** The 429 of this limit for a window that ends at `resetTime`. */
  exceeded(resetTime: Date | undefined): TooManyRequests {
    return new TooManyRequests(this.what, Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now()) - Date.now()) / 1000)));
  }
}

export interface RateLimits {
  loginByAddress: AttemptLimit;
  registerByAddress: AttemptLimit;
  registerByUsername: AttemptLimit;
  changePasswordByAddress: AttemptLimit;
  /** Keyed by the session's row id, never its token (a counter keyed by a secret keeps it in memory). */
  commandBySession: AttemptLimit;
}

export function createRateLimits(config: Config['rateLimit']): RateLimits {
  const limit = (count: number, windowSeconds = config.windowSeconds, what?: string) => new AttemptLimit(count, windowSeconds, config.enabled, what);
  return {
    loginByAddress: limit(config.loginPerAddress),
    registerByAddress: limit(config.registerPerAddress),
    registerByUsername: limit(config.registerPerUsername),
    changePasswordByAddress: limit(config.changePasswordPerAddress),
    commandBySession: limit(config.commandPerSession, config.commandWindowSeconds, 'commands'),
  };
}

/** The key of a client address: IPv6 addresses count by their /56, as express-rate-limit does. */
export function addressKey(address: string): string {
  return ipKeyGenerator(address);
}

/** The key of a requested username: trimmed and lower-cased, so letter case buys no extra tries. */
export function usernameKey(username: string): string {
  return username.trim().toLowerCase();
}
