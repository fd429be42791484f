/**
 * The reference server's SQLite database, opened read-only (SQLite's `mode=ro`: nothing can be
 * written to it, whatever the importer does) and read table by table for the import. A file
 * that is not SQLite, or lacks the reference's tables and columns, is a ReferenceDatabaseError.
 */
import { pathToFileURL } from 'node:url';
import { statSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';

export class ReferenceDatabaseError extends Error {}

/** The tables and columns the import reads: what makes a file a reference database. */
const REQUIRED: Record<string, readonly string[]> = {
  users: ['id', 'username', 'password_hash', 'role', 'is_active', 'is_guest', 'guest_expires_at', 'account_origin', 'created_at', 'last_login', 'tombstoned_at'],
  characters: ['id', 'user_id', 'name', 'world_id', 'inventory', 'is_guest_created', 'created_at', 'updated_at', 'base_state_json', 'current_state_json', 'state_seed', 'state_version', 'state_updated_at'],
  character_locations: ['character_id', 'world_id', 'room_id'],
  chat_messages: ['id', 'character_id', 'user_id', 'message', 'world_id', 'room', 'recipient_character_id', 'timestamp'],
  sessions: ['id', 'user_id'],
  world_permissions: ['user_id', 'world_id', 'can_access', 'created_at'],
  axis: ['id', 'world_id', 'name'],
  character_axis_score: ['character_id', 'world_id', 'axis_id', 'axis_score', 'updated_at'],
  event: ['id', 'world_id', 'event_type_id', 'timestamp'],
  event_type: ['id', 'name'],
  event_entity_axis_delta: ['event_id', 'character_id', 'axis_id', 'old_score', 'new_score', 'delta'],
  event_metadata: ['event_id', 'key', 'value'],
};

/** The policy store's tables: read when present (older reference versions have none). */
const POLICY: Record<string, readonly string[]> = {
  policy_item: ['policy_id', 'policy_type', 'namespace', 'policy_key', 'created_at'],
  policy_variant: ['policy_id', 'variant', 'schema_version', 'policy_version', 'status', 'content_json', 'content_hash', 'updated_at', 'updated_by'],
  policy_activation: ['world_id', 'client_profile', 'policy_id', 'variant', 'activated_at', 'activated_by', 'rollback_of_activation_id'],
  policy_validation_run: ['id', 'policy_id', 'variant', 'is_valid', 'errors_json', 'validated_at', 'validated_by'],
  policy_audit_event: ['id', 'event_type', 'world_id', 'client_profile', 'policy_id', 'variant', 'actor', 'event_payload_json', 'created_at'],
  policy_publish_run: ['id', 'world_id', 'client_profile', 'actor', 'manifest_json', 'created_at'],
};

export type Row = Record<string, unknown>;

/** How the import reads a table: every row, in the reference's order (ids ascending). */
const ORDER: Record<string, readonly string[]> = {
  users: ['id'],
  characters: ['id'],
  character_locations: ['character_id'],
  chat_messages: ['id'],
  sessions: ['id'],
  world_permissions: ['user_id', 'world_id'],
  axis: ['id'],
  character_axis_score: ['character_id', 'axis_id'],
  event: ['id'],
  event_type: ['id'],
  event_entity_axis_delta: ['id'],
  event_metadata: ['id'],
  policy_item: ['policy_id'],
  policy_variant: ['id'],
  policy_activation: ['world_id', 'client_profile', 'policy_id'],
  policy_validation_run: ['id'],
  policy_audit_event: ['id'],
  policy_publish_run: ['id'],
  axis_value: ['id'],
  worlds: ['id'],
};

export type ReferenceTable = keyof typeof ORDER;

export class ReferenceDatabase {
  private readonly knex: Knex;
  private readonly tables: ReadonlySet<string>;
  /** Whether the policy store's tables are there. */
  readonly hasPolicyStore: boolean;

  private constructor(knex: Knex, tables: ReadonlySet<string>, hasPolicyStore: boolean) {
    this.knex = knex;
    this.tables = tables;
    this.hasPolicyStore = hasPolicyStore;
  }

  has(table: ReferenceTable): boolean {
    return this.tables.has(table);
  }

  /** Opens `file` read-only and checks that it is a reference database. */
  static async open(file: string): Promise<ReferenceDatabase> {
    let size: number;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) throw new ReferenceDatabaseError(`'${file}' is not a file`);
      size = stat.size;
    } catch (err) {
      if (err instanceof ReferenceDatabaseError) throw err;
      throw new ReferenceDatabaseError(`Cannot read '${file}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    // An empty file would open as an empty database.
    if (size === 0) throw new ReferenceDatabaseError(`'${file}' is not a reference database: the file is empty`);
    const knex = knexFactory({
      client: 'sqlite3',
      connection: { filename: `${pathToFileURL(file).href}?mode=ro`, flags: ['OPEN_URI'] },
      useNullAsDefault: true,
      pool: { min: 1, max: 1 },
    });
    try {
      let tables: Set<string>;
      try {
        tables = new Set((await knex('sqlite_master').where({ type: 'table' }).select('name')).map((r: { name: string }) => r.name));
      } catch (err) {
        throw new ReferenceDatabaseError(`'${file}' is not a reference database: ${/not a database|file is encrypted/i.test(String(err)) ? 'not an SQLite file' : String((err as Error).message)}`);
      }
      const missing = Object.keys(REQUIRED).filter((t) => !tables.has(t));
      if (missing.length > 0) throw new ReferenceDatabaseError(`'${file}' is not a reference database: it has no table ${missing.map((t) => `'${t}'`).join(', ')}`);
      const hasPolicyStore = Object.keys(POLICY).every((t) => tables.has(t));
      for (const [table, columns] of Object.entries({ ...REQUIRED, ...(hasPolicyStore ? POLICY : {}) })) {
        const present = new Set((await knex.raw(`PRAGMA table_info(${table})`)).map((c: { name: string }) => c.name));
        const absent = columns.filter((c) => !present.has(c));
        if (absent.length > 0) throw new ReferenceDatabaseError(`'${file}' is not a reference database: table '${table}' has no column ${absent.map((c) => `'${c}'`).join(', ')}`);
      }
      return new ReferenceDatabase(knex, tables, hasPolicyStore);
    } catch (err) {
      await knex.destroy();
      throw err;
    }
  }

  async count(table: ReferenceTable): Promise<number> {
    const row = await this.knex(table).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** Every row of the table in the reference's order. */
  async rows(table: ReferenceTable): Promise<Row[]> {
    return this.knex(table).select('*').orderBy(ORDER[table]!.map((column) => ({ column })));
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }
}
