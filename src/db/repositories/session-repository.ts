import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import type { Role } from '../../services/accounts/roles.ts';

/** A session joined with its account, as every protected request needs it. */
export interface SessionRecord {
  id: number;
  sessionId: string;
  userId: number;
  username: string;
  role: Role;
  isActive: boolean;
  characterId: number | null;
  worldId: string | null;
  clientType: string;
  lastActivity: string;
  expiresAt: string | null;
}

export interface NewSession {
  sessionId: string;
  userId: number;
  clientType: string;
  createdAt: string;
  expiresAt: string | null;
}

/** SQL for the `sessions` table. */
export class SessionRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async create(session: NewSession, trx: Knex = this.db): Promise<void> {
    await trx('sessions').insert({
      session_id: session.sessionId,
      user_id: session.userId,
      client_type: session.clientType,
      created_at: session.createdAt,
      last_activity: session.createdAt,
      expires_at: session.expiresAt,
    });
  }

  async find(sessionId: string): Promise<SessionRecord | undefined> {
    const row = await this.db('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .where('s.session_id', sessionId)
      .first(
        's.id',
        's.session_id',
        's.user_id',
        'u.username',
        'u.role',
        'u.is_active',
        's.character_id',
        's.world_id',
        's.client_type',
        's.last_activity',
        's.expires_at',
      );
    if (!row) return undefined;
    return {
      id: row.id,
      sessionId: row.session_id,
      userId: row.user_id,
      username: row.username,
      role: row.role,
      isActive: Boolean(row.is_active),
      characterId: row.character_id,
      worldId: row.world_id,
      clientType: row.client_type,
      lastActivity: row.last_activity,
      expiresAt: row.expires_at,
    };
  }

  /** Records activity; `expiresAt` is given when the expiry slides. */
  async touch(id: number, lastActivity: string, expiresAt?: string): Promise<void> {
    await this.db('sessions')
      .where({ id })
      .update(expiresAt === undefined ? { last_activity: lastActivity } : { last_activity: lastActivity, expires_at: expiresAt });
  }

  async bindCharacter(sessionId: string, characterId: number, worldId: string, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ session_id: sessionId }).update({ character_id: characterId, world_id: worldId });
  }

  async delete(sessionId: string, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ session_id: sessionId }).delete();
  }

  async deleteForUser(userId: number, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ user_id: userId }).delete();
  }

  async deleteExpired(now: Date): Promise<number> {
    return this.db('sessions').whereNotNull('expires_at').andWhere('expires_at', '<=', toDbTime(now)).delete();
  }

  /** Distinct characters bound to an unexpired session (the "active players"). */
  async countActivePlayers(now: Date, timeoutMs = 5000): Promise<number> {
    const row = await this.db('sessions')
      .timeout(timeoutMs)
      .whereNotNull('character_id')
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', toDbTime(now)))
      .countDistinct({ n: 'character_id' })
      .first();
    return Number(row?.n ?? 0);
  }
}
