/**
 * Abuse limits as a service, for every front door alike (HTTP today; any other one calls the
 * same `Limit`s): attempts per client address (login, registration, password change), per
 * requested username (registration), failed passwords per account, and the play throttle per
 * session. Each counts hits in fixed windows in a `CounterStore`: this process's memory on
 * SQLite, which serves one instance; the database on PostgreSQL, or Redis when `[limits]
 * redis_url` is set, so that a limit is the same with one instance or ten (docs/decisions.md,
 * "Rate limits").
 */
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { Address6 } from 'ip-address';
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../db/clock.ts';
import { TooManyRequests } from '../../shared/errors.ts';

/** One key's window after a hit: the hits counted in it (this one included) and when it ends. */
export interface WindowCount {
  hits: number;
  /** Epoch milliseconds. */
  resetAt: number;
}

/** Where the counts live. A window opens at a key's first hit and lasts `windowMs`. */
export interface CounterStore {
  /**
   * Counts `amount` hits of `key` at `now` (epoch milliseconds), opening a new window when the
   * last one has ended; an amount of 0 reads the count (Limit.check).
   */
  increment(key: string, windowMs: number, now: number, amount?: number): Promise<WindowCount>;
}

/** Longer keys (a username as sent, up to the body limit) are counted by their hash, so stored keys stay short. */
const MAX_KEY_LENGTH = 128;

/** Windows kept before the ended ones are dropped: bounds memory under a guessing spree. */
const PRUNE_AT = 10_000;

/** This process's counts. */
export class MemoryCounters implements CounterStore {
  private readonly windows = new Map<string, WindowCount>();

  async increment(key: string, windowMs: number, now: number, amount = 1): Promise<WindowCount> {
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      if (this.windows.size >= PRUNE_AT) this.prune(now);
      window = { hits: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.hits += amount;
    return { ...window };
  }

  private prune(now: number): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/** One limit: at most `max` hits per key in each window of `windowSeconds`. */
export class Limit {
  private readonly store: CounterStore;
  private readonly name: string;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly what: string;
  private readonly enabled: boolean;
  private readonly clock: Clock;

  constructor(options: { store: CounterStore; name: string; max: number; windowSeconds: number; what: string; enabled: boolean; clock: Clock }) {
    this.store = options.store;
    this.name = options.name;
    this.max = options.max;
    this.windowMs = options.windowSeconds * 1000;
    this.what = options.what;
    this.enabled = options.enabled;
    this.clock = options.clock;
  }

  /** Counts one hit of `key`: the 429 to answer once the key is past the limit, else null. */
  async hit(key: string): Promise<TooManyRequests | null> {
    return this.count(key, 1, (hits) => hits > this.max);
  }

  /**
   * Counts nothing: the 429 when the key's window already holds `max` hits (one more would pass
   * the limit), else null. For limits that count only what failed, checked before the attempt.
   */
  async check(key: string): Promise<TooManyRequests | null> {
    return this.count(key, 0, (hits) => hits >= this.max);
  }

  private async count(key: string, amount: number, refused: (hits: number) => boolean): Promise<TooManyRequests | null> {
    if (!this.enabled) return null;
    const now = this.clock().getTime();
    const id = key.length > MAX_KEY_LENGTH ? createHash('sha256').update(key).digest('hex') : key;
    const window = await this.store.increment(`${this.name}:${id}`, this.windowMs, now, amount);
    if (!refused(window.hits)) return null;
    return new TooManyRequests(this.what, Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
  }
}

export interface Limits {
  /**
   * Failed logins per client address (key with `addressKey`): checked before a login, counted
   * when it fails, so logging in with the right password costs nothing (docs/decisions.md,
   * "Failed logins count, per address and per name").
   */
  loginByAddress: Limit;
  /** Failed logins per client address and requested username (`${address} ${usernameKey}`), checked and counted alike. */
  loginByAddressAndName: Limit;
  /** Usernames the telnet door looks up per client address: a word typed at `Username:` that is no account's. */
  usernameLookupByAddress: Limit;
  registerByAddress: Limit;
  /** Registration attempts per requested username (trimmed, lower-cased). */
  registerByUsername: Limit;
  changePasswordByAddress: Limit;
  /** Game commands per session row id (never the token, which the store would then hold). */
  commandBySession: Limit;
  /** Out-of-character messages per character id, on top of the command throttle. */
  oocByCharacter: Limit;
  /** Reports to staff per account id. */
  reportByAccount: Limit;
  /** World-building changes per account id, through either door. */
  buildByAccount: Limit;
  /** Wrong passwords per account id at login; the right password is never refused. */
  failedLogins: Limit;
  /** Wrong current passwords per account id at a password change. */
  failedPasswordChanges: Limit;
}

export function createLimits(config: Config['rateLimit'], store: CounterStore, clock: Clock): Limits {
  const limit = (name: string, max: number, what = 'attempts', windowSeconds = config.windowSeconds): Limit =>
    new Limit({ store, name, max, windowSeconds, what, enabled: config.enabled, clock });
  return {
    loginByAddress: limit('login-address', config.loginPerAddress),
    loginByAddressAndName: limit('login-address-name', config.loginPerUsername, 'failed attempts'),
    usernameLookupByAddress: limit('username-lookup-address', config.loginPerAddress),
    registerByAddress: limit('register-address', config.registerPerAddress),
    registerByUsername: limit('register-username', config.registerPerUsername),
    changePasswordByAddress: limit('change-password-address', config.changePasswordPerAddress),
    commandBySession: limit('command-session', config.commandPerSession, 'commands', config.commandWindowSeconds),
    oocByCharacter: limit('ooc-character', config.oocPerCharacter, 'out-of-character messages', config.oocWindowSeconds),
    reportByAccount: limit('report-account', config.reportPerAccount, 'reports', config.reportWindowSeconds),
    buildByAccount: limit('build-account', config.buildPerAccount, 'building changes', config.buildWindowSeconds),
    failedLogins: limit('failed-login', config.loginPerUsername, 'failed attempts'),
    failedPasswordChanges: limit('failed-password-change', config.changePasswordPerUsername, 'failed attempts'),
  };
}

/**
 * The key a client address is counted by. An IPv6 client usually holds a whole /56 or more and
 * could take a fresh address for every try, so IPv6 counts by its /56; an IPv4-mapped address
 * counts as the IPv4 address it is.
 */
export function addressKey(ip: string): string {
  if (!isIPv6(ip)) return ip;
  const address = new Address6(ip);
  if (address.isMapped4()) return address.to4().correctForm();
  return new Address6(`${ip}/56`).networkForm();
}
