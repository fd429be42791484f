/**
 * Abuse-limit counts in Redis (`[limits] redis_url`), shared by every instance that names the
 * same server: one Lua script counts a hit and opens a new window when the key's last one has
 * ended, atomically. While Redis cannot be reached, or after a command it did not answer in
 * time, the counts fall back to this process's memory (each instance then counts alone, as on
 * one instance) rather than refusing every login or letting every guess through, and no request
 * waits for Redis until a background probe gets an answer; a warning says so once per outage.
 */
import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logging/logger.ts';

/** The count after `amount` hits (0 reads it) and when its window ends; the window's own end is the key's expiry. */
const SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local amount = tonumber(ARGV[3] or '1')
local reset = tonumber(redis.call('HGET', KEYS[1], 'reset_at') or '0')
local hits
if reset <= now then
  reset = now + window
  hits = amount
  redis.call('HSET', KEYS[1], 'hits', amount, 'reset_at', reset)
  redis.call('PEXPIRE', KEYS[1], window)
else
  hits = redis.call('HINCRBY', KEYS[1], 'hits', amount)
end
return {hits, tostring(reset)}
`;
const SHA1 = createHash('sha1').update(SCRIPT).digest('hex');

/** How long a command (or a probe) may wait for Redis before this instance stops asking it. */
const COMMAND_TIMEOUT_MS = 500;
/** How long opening a connection may take. */
const CONNECT_TIMEOUT_MS = 2000;
/** How often a Redis that does not answer is probed. */
const PROBE_INTERVAL_MS = 1000;

interface WindowCount {
  hits: number;
  resetAt: number;
}

interface Fallback {
  increment(key: string, windowMs: number, now: number, amount?: number): Promise<WindowCount>;
}

/** `ok`: the counts go to Redis; `degraded`: they are counted in this process until Redis answers. */
export type RedisState = 'ok' | 'degraded';

/** A client that does not reconnect by itself: the probe does, so there is one way back to shared counts. */
function newClient(url: string) {
  return createClient({
    url,
    // Fail at once while disconnected: the fallback answers instead of a queue that grows.
    disableOfflineQueue: true,
    socket: { connectTimeout: CONNECT_TIMEOUT_MS, reconnectStrategy: false },
  });
}

type Client = ReturnType<typeof newClient>;

export class RedisCounters {
  private readonly url: string;
  private readonly prefix: string;
  private readonly fallback: Fallback;
  private readonly logger: Logger;
  private client: Client | null = null;
  /** True once Redis answered a probe, until one of its commands fails or times out. */
  private shared = false;
  private warned = false;
  private probing = false;
  private closed = false;
  /** Ends the wait between two probes early (at close). */
  private wake: (() => void) | null = null;

  /** `prefix` keeps databases (and test runs) sharing one Redis apart. */
  constructor(options: { url: string; prefix: string; fallback: Fallback; logger: Logger }) {
    this.url = options.url;
    this.prefix = options.prefix;
    this.fallback = options.fallback;
    this.logger = options.logger;
  }

  /** Connects in the background: a server whose Redis is down still starts, counting in memory. */
  start(): void {
    this.probe();
  }

  state(): RedisState {
    return this.shared ? 'ok' : 'degraded';
  }

  async increment(key: string, windowMs: number, now: number, amount = 1): Promise<WindowCount> {
    const client = this.client;
    if (this.shared && client !== null) {
      const options = { keys: [`${this.prefix}${key}`], arguments: [String(now), String(windowMs), String(amount)] };
      try {
        const reply = (await withTimeout(
          client.evalSha(SHA1, options).catch((err: Error) => {
            if (!err.message.startsWith('NOSCRIPT')) throw err;
            return client.eval(SCRIPT, options);
          }),
          COMMAND_TIMEOUT_MS,
        )) as [number, string];
        return { hits: Number(reply[0]), resetAt: Number(reply[1]) };
      } catch (err) {
        this.lose(client, err as Error);
      }
    }
    return this.fallback.increment(key, windowMs, now, amount);
  }

  /**
   * After one failure or timeout the counts stay in memory, so no later request waits for a
   * Redis that hangs, until a probe gets an answer. The connection goes too: it may hold a
   * command that is never answered, and Redis answers in order.
   */
  private lose(client: Client, err: Error | null): void {
    // The requests that were waiting on a connection already given up have nothing to add.
    if (client !== this.client) return;
    if (err) this.warnOnce(err);
    this.shared = false;
    this.drop();
    this.probe();
  }

  /** Probes Redis (a new connection, then PING) every PROBE_INTERVAL_MS until it answers. */
  private probe(): void {
    if (this.probing || this.closed) return;
    this.probing = true;
    void this.probeUntilAnswered();
  }

  private async probeUntilAnswered(): Promise<void> {
    // `probing` clears in the same step that shares the counts again, so a failure right after
    // starts a new probe.
    try {
      while (!this.closed) {
        const client = this.client ?? this.open();
        try {
          if (!client.isReady) await withTimeout(client.connect(), CONNECT_TIMEOUT_MS);
          await withTimeout(client.ping(), COMMAND_TIMEOUT_MS);
          if (client !== this.client) continue;
          this.shared = true;
          if (this.warned) this.logger.info('Redis answers again: limits are shared again');
          this.warned = false;
          return;
        } catch (err) {
          if (this.closed) return;
          this.warnOnce(err as Error);
          if (client === this.client) this.drop();
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, PROBE_INTERVAL_MS).unref();
          this.wake = () => (clearTimeout(timer), resolve());
        });
        this.wake = null;
      }
    } finally {
      this.probing = false;
    }
  }

  private open(): Client {
    const client = newClient(this.url);
    // Without a listener an error event would crash the process. A connection that breaks while
    // the counts go to Redis is given up at once, not at the next command; the probe opens the
    // next one straight away and warns only when that fails (an idle connection a network cut
    // is no outage).
    client.on('error', () => {
      if (this.shared) this.lose(client, null);
    });
    this.client = client;
    return client;
  }

  private drop(): void {
    const client = this.client;
    this.client = null;
    // Its pending commands fail now; their requests count in memory.
    client?.destroy();
  }

  private warnOnce(err: Error): void {
    if (!this.warned) this.logger.warn('Redis unreachable: limits count per instance until it answers', { error: err.message });
    this.warned = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    this.shared = false;
    this.drop();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
