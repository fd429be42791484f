import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isPostgres, type Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import { insertedId } from '../inserted-id.ts';
import type { Role } from '../../shared/roles.ts';

/**
 * The form a session token is stored and looked up in: SHA-256, hex. The token is a random
 * UUID (122 bits), so an unsalted fast hash cannot be reversed, and a database read (or a
 * leaked backup) cannot be replayed as a login.
 */
export function sessionTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * A session joined with its account, as every protected request needs it. `id` is the row id:
 * the session's non-secret handle (admin listings show it, kicks accept it); the token itself
 * is never read back.
 */
export interface SessionRecord {
  id: number;
  userId: number;
  username: string;
  role: Role;
  isActive: boolean;
  characterId: number | null;
  worldId: string | null;
  /** The bound character's name and room, read in the same statement (null without one). */
  characterName: string | null;
  roomId: string | null;
  /** When the account ends (temporary accounts), null for the others. */
  accountExpiresAt: string | null;
  clientType: string;
  createdAt: string;
  lastActivity: string;
  expiresAt: string | null;
  /** Its character has left the lists for being link-dead too long; the next request brings it back. */
  away: boolean;
  /** When its last event stream closed (null: never had one, or one is open). */
  disconnectedAt: string | null;
  /** An instance holds an open event stream of it (an unexpired lease). */
  streaming: boolean;
  /** The account's mute: until when (it may have ended since) and why; null when none was set. */
  mutedUntil: string | null;
  muteReason: string | null;
}

/** How many event streams of a session one instance holds, and the client address they come from. */
export interface StreamLease {
  sessionId: number;
  streams: number;
  address: string;
}

/** A session that has ended, with the character it played (for presence). */
export interface EndedSession {
  id: number;
  characterId: number | null;
}

function endedSessions(rows: Array<{ id: number | string; character_id: number | string | null }>): EndedSession[] {
  return rows.map((r) => ({ id: Number(r.id), characterId: r.character_id === null ? null : Number(r.character_id) }));
}

export interface NewSession {
  token: string;
  userId: number;
  clientType: string;
  createdAt: string;
  expiresAt: string | null;
}

/** A session's activity to record; `expiresAt` is given when the expiry slides. */
export interface SessionActivityRow {
  id: number;
  lastActivity: string;
  expiresAt?: string;
}

/** Each session takes 5 bound values in recordActivity's UPDATE: 750, well under SQLite's 999. */
const ACTIVITY_ROWS_PER_STATEMENT = 150;

/** `CASE id WHEN … THEN … END` giving each listed session its value; the others keep `column`. */
function valueById(trx: Knex, column: string, values: ReadonlyArray<readonly [number, string]>): Knex.Raw {
  return trx.raw(`CASE id ${values.map(() => 'WHEN ? THEN ?').join(' ')} ELSE ?? END`, [...values.flat(), column]);
}

/** SQL for the `sessions` table. Tokens are hashed here and nowhere else. */
export class SessionRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Returns the new session's id. */
  async create(session: NewSession, trx: Knex = this.db): Promise<number> {
    const [row] = await trx('sessions')
      .insert({
        token_hash: sessionTokenHash(session.token),
        user_id: session.userId,
        client_type: session.clientType,
        created_at: session.createdAt,
        last_activity: session.createdAt,
        expires_at: session.expiresAt,
      })
      .returning('id');
    return insertedId(row);
  }

  /** The session a client presents its token for (see findWhere). */
  async find(token: string, now: string): Promise<SessionRecord | undefined> {
    return this.findWhere({ 's.token_hash': sessionTokenHash(token) }, now);
  }

  async findById(id: number, now: string): Promise<SessionRecord | undefined> {
    return this.findWhere({ 's.id': id }, now);
  }

  /** The sessions for these token hashes (see findWhere), by token hash; SESSION_LOOKUP_CHUNK per query. */
  async findByTokenHashes(tokenHashes: readonly string[], now: string): Promise<Map<string, SessionRecord>> {
    const found = new Map<string, SessionRecord>();
    for (let i = 0; i < tokenHashes.length; i += SESSION_LOOKUP_CHUNK) {
      const rows = await this.withAccount(now)
        .whereIn('s.token_hash', tokenHashes.slice(i, i + SESSION_LOOKUP_CHUNK))
        .select('s.token_hash', ...this.sessionColumns(now));
      for (const row of rows) found.set(String(row.token_hash), sessionRecord(row));
    }
    return found;
  }

  /**
   * Sessions with their account, unless the account is a temporary one past its expiry: its
   * sessions end with it, not at the next purge.
   */
  private withAccount(now: string): Knex.QueryBuilder {
    return this.db('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .leftJoin('characters as c', 'c.id', 's.character_id')
      .andWhere((q) => q.where('u.is_guest', false).orWhereNull('u.guest_expires_at').orWhere('u.guest_expires_at', '>', now));
  }

  /** The columns of a SessionRecord, whether an instance streams it as of `now` among them. */
  private sessionColumns(now: string): Array<string | Knex.Raw> {
    return [...SESSION_COLUMNS, this.db.raw('exists (select 1 from event_stream_leases l where l.session_id = s.id and l.lease_until > ?) as streaming', [now])];
  }

  private async findWhere(where: Record<string, string | number>, now: string): Promise<SessionRecord | undefined> {
    const row = await this.withAccount(now).where(where).first(...this.sessionColumns(now));
    return row ? sessionRecord(row) : undefined;
  }

  /**
   * Records the activity of many sessions in one transaction, one UPDATE per
   * ACTIVITY_ROWS_PER_STATEMENT sessions. A session deleted meanwhile matches nothing.
   */
  async recordActivity(rows: readonly SessionActivityRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += ACTIVITY_ROWS_PER_STATEMENT) {
        const chunk = rows.slice(i, i + ACTIVITY_ROWS_PER_STATEMENT);
        const slid = chunk.flatMap((r) => (r.expiresAt === undefined ? [] : [[r.id, r.expiresAt] as const]));
        await trx('sessions')
          .whereIn('id', chunk.map((r) => r.id))
          .update({
            last_activity: valueById(trx, 'last_activity', chunk.map((r) => [r.id, r.lastActivity] as const)),
            ...(slid.length === 0 ? {} : { expires_at: valueById(trx, 'expires_at', slid) }),
          });
      }
    });
  }

  async bindCharacter(id: number, characterId: number, worldId: string, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ id }).update({ character_id: characterId, world_id: worldId });
  }

  /** The session plays no character any more (it stays logged in). */
  async unbindCharacter(id: number, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ id }).whereNotNull('character_id').update({ character_id: null, world_id: null });
  }

  async delete(id: number, trx: Knex = this.db): Promise<number> {
    return trx('sessions').where({ id }).delete();
  }

  /**
   * Ends every session of the account, or every one but `exceptId`, however many there are;
   * returns the ended sessions. On PostgreSQL one `DELETE … RETURNING`; knex does not compile
   * RETURNING for SQLite's DELETE, but there the transaction holds the only connection, so
   * reading the rows first sees exactly what the delete removes.
   */
  async deleteForUser(userId: number, trx: Knex.Transaction, exceptId?: number): Promise<EndedSession[]> {
    const query = trx('sessions').where({ user_id: userId });
    if (exceptId !== undefined) query.whereNot({ id: exceptId });
    if (isPostgres(trx)) return endedSessions(await query.delete().returning(['id', 'character_id']));
    const ended = endedSessions(await query.clone().select('id', 'character_id'));
    await query.delete();
    return ended;
  }

  /** Ends every session bound to the character, read first then deleted (as deleteForUser on SQLite; locked as read on PostgreSQL); returns them. */
  async deleteForCharacter(characterId: number, trx: Knex.Transaction): Promise<EndedSession[]> {
    const query = trx('sessions').where({ character_id: characterId }).select('id', 'character_id');
    const ended = endedSessions(await (isPostgres(trx) ? query.forUpdate() : query));
    if (ended.length > 0) await trx('sessions').whereIn('id', ended.map((s) => s.id)).delete();
    return ended;
  }

  /**
   * Ends the account's sessions of `clientType` bound to the character, but `exceptId`, that no
   * instance holds an unexpired stream lease for (nothing is connected through them); returns
   * them. Read first, then deleted, as deleteForUser does on SQLite; on PostgreSQL the rows are
   * locked as they are read.
   */
  async deleteUnheld(userId: number, characterId: number, clientType: string, exceptId: number, now: string, trx: Knex.Transaction): Promise<EndedSession[]> {
    const held = trx('event_stream_leases').where('lease_until', '>', now).select('session_id');
    const query = trx('sessions').where({ user_id: userId, character_id: characterId, client_type: clientType }).whereNot({ id: exceptId }).whereNotIn('id', held).select('id', 'character_id');
    const ended = endedSessions(await (isPostgres(trx) ? query.forUpdate() : query));
    if (ended.length > 0) await trx('sessions').whereIn('id', ended.map((s) => s.id)).delete();
    return ended;
  }

  /** Whether an unexpired session is bound to the character. */
  async characterBound(characterId: number, now: string, trx: Knex = this.db): Promise<boolean> {
    return (await this.boundCharacters([characterId], now, trx)).has(characterId);
  }

  /** Which of these characters an unexpired session that is not away is bound to (callers pass at most a few hundred). */
  async boundCharacters(characterIds: readonly number[], now: string, trx: Knex = this.db): Promise<Set<number>> {
    if (characterIds.length === 0) return new Set();
    const rows = await trx('sessions')
      .whereIn('character_id', characterIds)
      .andWhere('away', false)
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
      .distinct('character_id');
    return new Set(rows.map((r: { character_id: number | string }) => Number(r.character_id)));
  }

  /** Which of these sessions still authenticate at `now`: present, unexpired, their account active and not an expired temporary one. */
  async liveIds(ids: readonly number[], now: string): Promise<number[]> {
    const rows = await this.db('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .whereIn('s.id', ids)
      .andWhere('u.is_active', true)
      .andWhere((q) => q.whereNull('s.expires_at').orWhere('s.expires_at', '>', now))
      .andWhere((q) => q.where('u.is_guest', false).orWhereNull('u.guest_expires_at').orWhere('u.guest_expires_at', '>', now))
      .pluck('s.id');
    return rows.map(Number);
  }

  /**
   * Removes up to `limit` of the sessions expired at `now` (oldest expiry first) and returns
   * them. On PostgreSQL the rows are locked first, so when two instances sweep at once each
   * session is returned by one of them only.
   */
  async deleteExpired(now: string, limit: number, trx: Knex.Transaction): Promise<EndedSession[]> {
    const query = trx('sessions').whereNotNull('expires_at').andWhere('expires_at', '<=', now).orderBy('expires_at').limit(limit).select('id', 'character_id');
    const ended = endedSessions(await (isPostgres(trx) ? query.forUpdate().skipLocked() : query));
    if (ended.length > 0) await trx('sessions').whereIn('id', ended.map((s) => s.id)).delete();
    return ended;
  }

  /** Distinct characters bound to an unexpired session that is not away (the "active players", link-dead ones included). */
  async countActivePlayers(now: Date, timeoutMs = 5000): Promise<number> {
    const row = await this.db('sessions')
      .timeout(timeoutMs)
      .whereNotNull('character_id')
      .andWhere('away', false)
      .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', toDbTime(now)))
      .countDistinct({ n: 'character_id' })
      .first();
    return Number(row?.n ?? 0);
  }

  /**
   * Marks away up to `limit` sessions link-dead since before `cutoff`: bound, unexpired, not away,
   * no request since `cutoff`, no stream closed or leased since then. Returns them. On
   * PostgreSQL the rows are locked first, so when two instances sweep at once each session is
   * returned by one of them only.
   */
  async markAway(cutoff: string, now: string, limit: number, trx: Knex.Transaction): Promise<EndedSession[]> {
    const query = trx('sessions as s')
      .whereNotNull('s.character_id')
      .andWhere('s.away', false)
      .andWhere((q) => q.whereNull('s.expires_at').orWhere('s.expires_at', '>', now))
      .andWhere('s.last_activity', '<=', cutoff)
      .andWhere((q) => q.whereNull('s.disconnected_at').orWhere('s.disconnected_at', '<=', cutoff))
      .whereNotExists(trx('event_stream_leases as l').whereRaw('l.session_id = s.id').andWhere('l.lease_until', '>', cutoff))
      .orderBy('s.id')
      .limit(limit)
      .select('s.id', 's.character_id');
    const away = endedSessions(await (isPostgres(trx) ? query.forUpdate('s').skipLocked() : query));
    if (away.length > 0) await trx('sessions').whereIn('id', away.map((s) => s.id)).update({ away: true });
    return away;
  }

  /** Brings an away session back, as active at `now`; false when it was not away (or is gone). */
  async comeBack(id: number, now: string, trx: Knex.Transaction): Promise<boolean> {
    return (await trx('sessions').where({ id, away: true }).update({ away: false, last_activity: now })) === 1;
  }

  /**
   * This instance holds `streams` open event streams of each session until `leaseUntil` (renewed
   * by its heartbeat); 0 drops its lease and records when the stream closed. However many
   * sessions, a statement per LEASE_ROWS_PER_STATEMENT.
   */
  async writeLeases(instanceId: string, leases: readonly StreamLease[], leaseUntil: string, now: string): Promise<void> {
    const open = leases.filter((l) => l.streams > 0);
    for (let i = 0; i < open.length; i += LEASE_ROWS_PER_STATEMENT) {
      await this.db('event_stream_leases')
        .insert(open.slice(i, i + LEASE_ROWS_PER_STATEMENT).map((l) => ({ session_id: l.sessionId, instance_id: instanceId, streams: l.streams, address: l.address, lease_until: leaseUntil })))
        .onConflict(['session_id', 'instance_id'])
        .merge(['streams', 'address', 'lease_until']);
    }
    const closed = leases.filter((l) => l.streams === 0).map((l) => l.sessionId);
    if (closed.length === 0) return;
    // The sessions' rows first, as a session's delete (which cascades to its leases) locks them:
    // the other order deadlocks with a logout.
    await this.db.transaction(async (trx) => {
      for (let i = 0; i < closed.length; i += LEASE_ROWS_PER_STATEMENT) {
        const ids = closed.slice(i, i + LEASE_ROWS_PER_STATEMENT);
        await trx('sessions').whereIn('id', ids).update({ disconnected_at: now });
        await trx('event_stream_leases').where({ instance_id: instanceId }).whereIn('session_id', ids).delete();
      }
    });
  }

  /** The open streams other instances than `instanceId` hold, under unexpired leases, of an account and of an address. */
  async streamsElsewhere(instanceId: string, accountId: number, address: string, now: string): Promise<{ account: number; address: number }> {
    const row = await this.db('event_stream_leases as l')
      .join('sessions as s', 's.id', 'l.session_id')
      .whereNot('l.instance_id', instanceId)
      .andWhere('l.lease_until', '>', now)
      .andWhere((q) => q.where('s.user_id', accountId).orWhere('l.address', address))
      .select(
        this.db.raw('coalesce(sum(case when s.user_id = ? then l.streams else 0 end), 0) as account', [accountId]),
        this.db.raw('coalesce(sum(case when l.address = ? then l.streams else 0 end), 0) as address', [address]),
      )
      .first();
    return { account: Number(row?.account ?? 0), address: Number(row?.address ?? 0) };
  }

  /** Renews every lease of this instance. */
  async renewLeases(instanceId: string, leaseUntil: string): Promise<void> {
    await this.db('event_stream_leases').where({ instance_id: instanceId }).update({ lease_until: leaseUntil });
  }

  /** Drops every lease of this instance (it shuts down): their sessions' streams closed `now`. */
  async dropLeases(instanceId: string, now: string): Promise<void> {
    // Sessions first, then leases, as in writeLeases.
    await this.db.transaction(async (trx) => {
      await trx('sessions').whereIn('id', trx('event_stream_leases').where({ instance_id: instanceId }).select('session_id')).update({ disconnected_at: now });
      await trx('event_stream_leases').where({ instance_id: instanceId }).delete();
    });
  }

  /** Deletes the leases that ended before `before` (of instances that stopped without dropping them). */
  async pruneLeases(before: string): Promise<number> {
    return this.db('event_stream_leases').where('lease_until', '<', before).delete();
  }
}

/** Lease rows per statement (five values each), well under every driver's parameter limit. */
const LEASE_ROWS_PER_STATEMENT = 200;

/** Token hashes per lookup query, well under every driver's parameter limit. */
const SESSION_LOOKUP_CHUNK = 500;

const SESSION_COLUMNS = [
  's.id',
  's.user_id',
  'u.username',
  'u.role',
  'u.is_active',
  's.character_id',
  's.world_id',
  'c.name as character_name',
  'c.room_id',
  'u.is_guest',
  'u.guest_expires_at',
  's.client_type',
  's.created_at',
  's.last_activity',
  's.expires_at',
  's.away',
  's.disconnected_at',
  'u.muted_until',
  'u.mute_reason',
];

// Rows of a query over several tables, as the driver gives them.
function sessionRecord(row: any): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    username: row.username,
    role: row.role,
    isActive: Boolean(row.is_active),
    characterId: row.character_id,
    worldId: row.world_id,
    characterName: row.character_name ?? null,
    roomId: row.room_id ?? null,
    accountExpiresAt: row.is_guest ? (row.guest_expires_at ?? null) : null,
    clientType: row.client_type,
    createdAt: row.created_at,
    lastActivity: row.last_activity,
    expiresAt: row.expires_at,
    away: Boolean(row.away),
    disconnectedAt: row.disconnected_at ?? null,
    streaming: Boolean(row.streaming),
    mutedUntil: row.muted_until ?? null,
    muteReason: row.mute_reason ?? null,
  };
}
