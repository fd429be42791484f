import type { Clock } from '../db/clock.ts';
import type { SessionRepository } from '../db/repositories/session-repository.ts';
import type { RedisState } from '../integrations/redis-counters.ts';
import type { components } from '../../generated/openapi.d.ts';

export type HealthReport = components['schemas']['Health'] | components['schemas']['HealthUnavailable'];

const DATABASE_TIMEOUT_MS = 2000;

/**
 * Answers whether this instance can serve: one database query, within a timeout. With `[limits]
 * redis_url`, also whether the limits count in Redis; that is known without asking Redis, and a
 * Redis that does not answer leaves the instance serving.
 */
export class HealthService {
  private readonly sessions: SessionRepository;
  private readonly clock: Clock;
  private readonly version: string;
  private readonly redis: (() => RedisState) | null;

  constructor(sessions: SessionRepository, clock: Clock, version: string, redis: (() => RedisState) | null) {
    this.sessions = sessions;
    this.clock = clock;
    this.version = version;
    this.redis = redis;
  }

  async check(): Promise<HealthReport> {
    const redis = this.redis ? { redis: this.redis() } : {};
    try {
      const activePlayers = await this.sessions.countActivePlayers(this.clock(), DATABASE_TIMEOUT_MS);
      return { status: 'ok', database: 'ok', active_players: activePlayers, ...redis, version: this.version };
    } catch {
      return { status: 'unavailable', database: 'error', ...redis, version: this.version };
    }
  }
}
