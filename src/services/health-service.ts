import type { Clock } from '../db/clock.ts';
import type { SessionRepository } from '../db/repositories/session-repository.ts';
import type { components } from '../../generated/openapi.d.ts';

export type HealthReport = components['schemas']['Health'] | components['schemas']['HealthUnavailable'];

const DATABASE_TIMEOUT_MS = 2000;

/** Answers whether this instance can serve: one database query, within a timeout. */
export class HealthService {
  private readonly sessions: SessionRepository;
  private readonly clock: Clock;
  private readonly version: string;

  constructor(sessions: SessionRepository, clock: Clock, version: string) {
    this.sessions = sessions;
    this.clock = clock;
    this.version = version;
  }

  async check(): Promise<HealthReport> {
    try {
      const activePlayers = await this.sessions.countActivePlayers(this.clock(), DATABASE_TIMEOUT_MS);
      return { status: 'ok', database: 'ok', active_players: activePlayers, version: this.version };
    } catch {
      return { status: 'unavailable', database: 'error', version: this.version };
    }
  }
}
