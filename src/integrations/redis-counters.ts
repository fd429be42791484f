/**
 * Abuse-limit counts in Redis (`[limits] redis_url`), shared by every instance that names the
 * same server: one Lua script counts a hit and opens a new window when the key's last one has
 * ended, atomically. While Redis cannot be reached the counts fall back to this process's
 * memory (each instance then counts alone, as on one instance) rather than refusing every login
 * or letting every guess through; a warning says so once per outage.
 */
import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../logging/logger.ts';

/** The count after one hit and when its window ends; the window's own end is the key's expiry. */
const SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local reset = tonumber(redis.call('HGET', KEYS[1], 'reset_at') or '0')
local hits
if reset <= now then
  reset = now + window
  hits = 1
  redis.call('HSET', KEYS[1], 'hits', 1, 'reset_at', reset)
  redis.call('PEXPIRE', KEYS[1], window)
else
  hits = redis.call('HINCRBY', KEYS[1], 'hits', 1)
end
return {hits, tostring(reset)}
`;
const SHA1 = createHash('sha1').update(SCRIPT).digest('hex');

/** How long a command may wait for Redis before the memory fallback answers. */
const COMMAND_TIMEOUT_MS = 500;

interface WindowCount {
  hits: number;
  resetAt: number;
}

interface Fallback {
  increment(key: string, windowMs: number, now: number): Promise<WindowCount>;
}

export class RedisCounters {
  private readonly client: ReturnType<typeof createClient>;
  private readonly prefix: string;
  private readonly fallback: Fallback;
  private readonly logger: Logger;
  private degraded = false;

  /** `prefix` keeps databases (and test runs) sharing one Redis apart. */
  constructor(options: { url: string; prefix: string; fallback: Fallback; logger: Logger }) {
    this.prefix = options.prefix;
    this.fallback = options.fallback;
    this.logger = options.logger;
    this.client = createClient({
      url: options.url,
      // Fail at once while disconnected: the fallback answers instead of a queue that grows.
      disableOfflineQueue: true,
      socket: { connectTimeout: 2000, reconnectStrategy: (retries: number) => Math.min(250 * 2 ** retries, 10_000) },
    });
    // Without a listener an error event would crash the process; the failing calls say enough.
    this.client.on('error', () => undefined);
    this.client.on('ready', () => {
      if (this.degraded) this.logger.info('Redis reachable again: limits are shared again');
      this.degraded = false;
    });
  }

  /** Connects in the background: a server whose Redis is down still starts, counting in memory. */
  start(): void {
    this.client.connect().catch((err: Error) => this.degrade(err));
  }

  async increment(key: string, windowMs: number, now: number): Promise<WindowCount> {
    const options = { keys: [`${this.prefix}${key}`], arguments: [String(now), String(windowMs)] };
    try {
      if (!this.client.isReady) throw new Error('not connected');
      const reply = (await withTimeout(
        this.client.evalSha(SHA1, options).catch((err: Error) => {
          if (!err.message.startsWith('NOSCRIPT')) throw err;
          return this.client.eval(SCRIPT, options);
        }),
      )) as [number, string];
      return { hits: Number(reply[0]), resetAt: Number(reply[1]) };
    } catch (err) {
      this.degrade(err as Error);
      return this.fallback.increment(key, windowMs, now);
    }
  }

  private degrade(err: Error): void {
    if (!this.degraded) this.logger.warn('Redis unreachable: limits count per instance until it answers', { error: err.message });
    this.degraded = true;
  }

  async close(): Promise<void> {
    if (!this.client.isOpen) return;
    if (this.client.isReady) await this.client.close().catch(() => undefined);
    else this.client.destroy();
  }
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
