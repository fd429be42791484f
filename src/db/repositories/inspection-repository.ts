/**
 * Read-only SQL behind the admin database listings. Only the server's own tables can be
 * read, and secret columns are redacted here, so no caller can forget to.
 */
import { isPostgres, type Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import { countRows, tableNames } from '../tables.ts';

/**
 * Every column, per table, that holds a credential or what one is checked against: it is never
 * listed and reads as REDACTED in table dumps. A new secret column must be added here (a test
 * fails for any column named like a credential that is missing).
 */
export const SECRET_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  users: ['password_hash'],
  sessions: ['token_hash'],
};
export const REDACTED = '[redacted]';

/** A foreign key column and what it points to, with its referential actions (`CASCADE`, `SET NULL`, `NO ACTION`, …). */
export interface ForeignKey {
  from_column: string;
  ref_table: string;
  ref_column: string;
  on_update: string;
  on_delete: string;
}

/** pg_constraint's action codes, in the words SQLite's pragma uses. */
const PG_ACTIONS: Readonly<Record<string, string>> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
}

const unexpired = (now: Date) => (q: import('knex').Knex.QueryBuilder) =>
  q.whereNull('s.expires_at').orWhere('s.expires_at', '>', toDbTime(now));

export class InspectionRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** The server's tables (migrations' bookkeeping excluded), sorted by name. */
  async tableNames(): Promise<string[]> {
    return tableNames(this.db);
  }

  async columns(table: string): Promise<ColumnInfo[]> {
    const info = await this.db(table).columnInfo();
    return Object.entries(info).map(([name, c]) => ({ name, type: c.type, nullable: c.nullable }));
  }

  async rowCount(table: string): Promise<number> {
    return countRows(this.db, table);
  }

  /** Rows as arrays in column order; `table` must come from tableNames(). */
  async rows(table: string, columns: string[], limit: number, offset: number): Promise<unknown[][]> {
    const rows: Array<Record<string, unknown>> = await this.db(table).select(columns).orderBy(columns[0] ?? '').limit(limit).offset(offset);
    const secret = new Set(SECRET_COLUMNS[table] ?? []);
    return rows.map((row) => columns.map((c) => (secret.has(c) ? REDACTED : row[c])));
  }

  /** The table's foreign keys, a row per column pair, by column; `table` must come from tableNames(). */
  async foreignKeys(table: string): Promise<ForeignKey[]> {
    if (isPostgres(this.db)) {
      const result = await this.db.raw(
        `select a.attname as from_column, r.relname as ref_table, ra.attname as ref_column, k.confupdtype as on_update, k.confdeltype as on_delete
         from pg_constraint k
         cross join lateral unnest(k.conkey, k.confkey) as u(col, ref_col)
         join pg_attribute a on a.attrelid = k.conrelid and a.attnum = u.col
         join pg_class r on r.oid = k.confrelid
         join pg_attribute ra on ra.attrelid = k.confrelid and ra.attnum = u.ref_col
         where k.contype = 'f' and k.conrelid = (quote_ident(current_schema()) || '.' || quote_ident(?))::regclass
         order by a.attname, r.relname`,
        [table],
      );
      const rows = (result as { rows: Array<Record<string, string>> }).rows;
      return rows.map((r) => ({ from_column: r.from_column!, ref_table: r.ref_table!, ref_column: r.ref_column!, on_update: PG_ACTIONS[r.on_update!] ?? r.on_update!, on_delete: PG_ACTIONS[r.on_delete!] ?? r.on_delete! }));
    }
    const rows: Array<{ from: string; table: string; to: string | null; on_update: string; on_delete: string }> = await this.db.raw(
      'select "from", "table", "to", on_update, on_delete from pragma_foreign_key_list(?) order by "from", "table"',
      [table],
    );
    // A key without its column names the referenced table's primary key: `id` for every table of ours.
    return rows.map((r) => ({ from_column: r.from, ref_table: r.table, ref_column: r.to ?? 'id', on_update: r.on_update, on_delete: r.on_delete }));
  }

  /** The worlds table, by id. */
  async worlds(): Promise<Array<Record<string, unknown>>> {
    return this.db('worlds').select('id', 'name', 'description', 'is_active').orderBy('id');
  }

  /** Where characters stand, as rows of the reference server's `character_locations` (character_id, world_id, room_id, updated_at). */
  async characterLocations(limit: number, offset: number): Promise<unknown[][]> {
    const rows: Array<Record<string, unknown>> = await this.db('characters').select('id', 'world_id', 'room_id', 'updated_at').orderBy('id').limit(limit).offset(offset);
    return rows.map((r) => [r.id, r.world_id, r.room_id, r.updated_at]);
  }

  async players(): Promise<Array<Record<string, unknown>>> {
    const counts = this.db('characters').whereRaw('characters.user_id = u.id').count('*');
    return this.db('users as u')
      .select('u.id', 'u.username', 'u.role', 'u.account_origin', 'u.is_guest', 'u.guest_expires_at', 'u.created_at', 'u.last_login', 'u.is_active', 'u.muted_until', 'u.mute_reason')
      .select({ character_count: counts })
      .orderBy([{ column: 'u.created_at', order: 'desc' }, { column: 'u.id', order: 'desc' }]);
  }

  /** Unexpired sessions joined with their account and character. */
  async sessions(now: Date, options: { worldId?: string; activeSince?: Date; orderBy: 'created_at' | 'last_activity' }): Promise<Array<Record<string, unknown>>> {
    const q = this.db('sessions as s')
      .join('users as u', 'u.id', 's.user_id')
      .leftJoin('characters as c', 'c.id', 's.character_id')
      .where(unexpired(now))
      .select('s.id', 'u.username', { character_name: 'c.name' }, 's.world_id', 's.client_type', 's.created_at', 's.last_activity', 's.expires_at', 's.user_id', 's.character_id', 's.away', 's.disconnected_at')
      .select({ open_streams: this.db('event_stream_leases as l').whereRaw('l.session_id = s.id').andWhere('l.lease_until', '>', toDbTime(now)).sum('l.streams') })
      .orderBy([{ column: `s.${options.orderBy}`, order: 'desc' }, { column: 's.id', order: 'desc' }]);
    if (options.worldId !== undefined) q.andWhere('s.world_id', options.worldId);
    if (options.activeSince !== undefined) q.andWhere('s.last_activity', '>=', toDbTime(options.activeSince));
    return q;
  }

  async locations(worldId?: string): Promise<Array<Record<string, unknown>>> {
    const q = this.db('characters as c')
      .select({ character_id: 'c.id', character_name: 'c.name' }, 'c.world_id', 'c.room_id', 'c.updated_at')
      .orderBy('c.id');
    if (worldId !== undefined) q.where('c.world_id', worldId);
    return q;
  }

  async chatMessages(limit: number, worldId?: string): Promise<Array<Record<string, unknown>>> {
    const q = this.db('chat_messages as m')
      .select('m.id', { username: 'm.sender_name' }, 'm.message', 'm.channel', 'm.world_id', 'm.room_id', 'm.created_at')
      .orderBy('m.id', 'desc')
      .limit(limit);
    if (worldId !== undefined) q.where('m.world_id', worldId);
    return q;
  }
}
