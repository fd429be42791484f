/**
 * The server's tables as a whole, the same way on SQLite and PostgreSQL, for the commands that
 * move data between databases (`copy-db`; docs/decisions.md, "Backups and moving databases"):
 * each table's columns, primary key and id counter, the order foreign keys allow inserting
 * them in, its rows read in primary-key order in batches, and a checksum of those rows that
 * comes out the same on both databases for the same data.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isPostgres } from './database.ts';

/** How a column's values are compared and written: by kind, not by each database's type name. */
export type ColumnKind = 'integer' | 'float' | 'boolean' | 'text';

export interface TableInfo {
  name: string;
  /** Column names, sorted, with their kinds. */
  columns: Array<{ name: string; kind: ColumnKind }>;
  /** Primary-key columns in key order. */
  primaryKey: string[];
  /** The integer id column that takes its values from a counter (AUTOINCREMENT, a sequence), if any. */
  counter: string | null;
  /** Tables this one's foreign keys point to. */
  references: string[];
}

const pg = (db: Knex): boolean => isPostgres(db);

function kindOf(declared: string): ColumnKind {
  const type = declared.toLowerCase();
  if (type.includes('bool')) return 'boolean';
  if (/^(big|small|tiny|medium)?int|integer/.test(type)) return 'integer';
  if (/float|double|real|numeric|decimal/.test(type)) return 'float';
  return 'text';
}

async function describeSqlite(db: Knex, name: string): Promise<TableInfo> {
  const info: Array<{ name: string; type: string; pk: number }> = await db.raw('select name, type, pk from pragma_table_info(?)', [name]);
  const keys: Array<{ table: string }> = await db.raw('select distinct "table" from pragma_foreign_key_list(?)', [name]);
  const sql: Array<{ sql: string }> = await db.raw("select sql from sqlite_master where type = 'table' and name = ?", [name]);
  const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  const single = primaryKey.length === 1 ? info.find((c) => c.name === primaryKey[0]) : undefined;
  return {
    name,
    columns: info.map((c) => ({ name: c.name, kind: kindOf(c.type) })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    primaryKey,
    counter: single && kindOf(single.type) === 'integer' && /autoincrement/i.test(sql[0]?.sql ?? '') ? single.name : null,
    references: keys.map((k) => k.table),
  };
}

async function describePostgres(db: Knex, name: string): Promise<TableInfo> {
  const rows = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;
  const relation = db.raw("(quote_ident(current_schema()) || '.' || quote_ident(?))::regclass", [name]);
  const info = rows<{ name: string; type: string }>(
    await db.raw('select column_name as name, data_type as type from information_schema.columns where table_schema = current_schema() and table_name = ?', [name]),
  );
  const primaryKey = rows<{ name: string }>(
    await db.raw(
      `select a.attname as name from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
       where i.indrelid = ? and i.indisprimary order by array_position(i.indkey::int2[], a.attnum)`,
      [relation],
    ),
  ).map((r) => r.name);
  const references = rows<{ name: string }>(
    await db.raw("select distinct r.relname as name from pg_constraint k join pg_class r on r.oid = k.confrelid where k.contype = 'f' and k.conrelid = ?", [relation]),
  ).map((r) => r.name);
  const single = primaryKey.length === 1 ? info.find((c) => c.name === primaryKey[0]) : undefined;
  let counter: string | null = null;
  if (single && kindOf(single.type) === 'integer') {
    const [row] = rows<{ seq: string | null }>(await db.raw("select pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(?), ?) as seq", [name, single.name]));
    if (row?.seq) counter = single.name;
  }
  return {
    name,
    columns: info.map((c) => ({ name: c.name, kind: kindOf(c.type) })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    primaryKey,
    counter,
    references,
  };
}

/** The migrations' bookkeeping, which is knex's and not the server's. */
export const MIGRATIONS_TABLES: readonly string[] = ['knex_migrations', 'knex_migrations_lock'];

/** The server's tables (the migrations' bookkeeping excluded), sorted by name. */
export async function tableNames(db: Knex): Promise<string[]> {
  const rows: Array<{ name: string }> = pg(db)
    ? await db('information_schema.tables').whereRaw('table_schema = current_schema()').andWhere('table_type', 'BASE TABLE').select({ name: 'table_name' })
    : await db('sqlite_master').where('type', 'table').andWhere('name', 'not like', 'sqlite_%').select('name');
  return rows.map((r) => r.name).filter((n) => !MIGRATIONS_TABLES.includes(n)).sort();
}

export async function countRows(db: Knex, table: string): Promise<number> {
  const row = await db(table).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * The server's tables, each after the tables its foreign keys point to, so that inserting them
 * in this order never breaks a key.
 */
export async function describeTables(db: Knex): Promise<TableInfo[]> {
  const names = await tableNames(db);
  const tables = new Map<string, TableInfo>();
  for (const name of names) tables.set(name, pg(db) ? await describePostgres(db, name) : await describeSqlite(db, name));
  const ordered: TableInfo[] = [];
  const placed = new Set<string>();
  const place = (table: TableInfo, path: string[]): void => {
    if (placed.has(table.name)) return;
    if (path.includes(table.name)) throw new Error(`Foreign keys form a cycle: ${[...path, table.name].join(' → ')}`);
    for (const target of table.references) {
      const referenced = tables.get(target);
      if (referenced && referenced !== table) place(referenced, [...path, table.name]);
    }
    placed.add(table.name);
    ordered.push(table);
  };
  for (const table of tables.values()) place(table, []);
  return ordered;
}

/**
 * A column value in the one form both databases agree on: booleans as true/false (SQLite
 * stores 1/0), integers as decimal text (pg reads bigint as text), floats as JavaScript's
 * shortest round-trip text, text as stored.
 */
function canonical(value: unknown, kind: ColumnKind): string | boolean | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'boolean':
      return value === true || value === 1 || value === '1' || value === 't' || value === 'true';
    case 'integer':
      // A value SQLite kept as it came (its columns take any type) stays as it is.
      return /^-?\d+$/.test(String(value)) ? BigInt(value as number | string).toString() : String(value);
    case 'float':
      return String(Number(value));
    default:
      return String(value);
  }
}

/** A row as a driver writes it into any database: canonical values, numbers as numbers where they fit. */
export function writableRow(table: TableInfo, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { name, kind } of table.columns) {
    const value = canonical(row[name], kind);
    if (value === null || kind === 'text' || kind === 'boolean') out[name] = value;
    else if (kind === 'float' || Number.isSafeInteger(Number(value))) out[name] = Number(value);
    else out[name] = value;
  }
  return out;
}

/** Sums up rows read in primary-key order: their count and the SHA-256 of one canonical JSON line per row. */
export class TableChecksum {
  private readonly hash = createHash('sha256');
  private readonly table: TableInfo;
  rows = 0;
  constructor(table: TableInfo) {
    this.table = table;
  }
  add(row: Record<string, unknown>): void {
    this.hash.update(`${JSON.stringify(this.table.columns.map(({ name, kind }) => canonical(row[name], kind)))}\n`);
    this.rows += 1;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/**
 * The table's rows in primary-key order, `batch` at a time (keyset paging, so memory stays
 * bounded however large the table). Text keys compare bytewise on both databases (SQLite's
 * BINARY, PostgreSQL's "C"), so both give the same order, and so the same checksum.
 */
export async function* rowsInKeyOrder(db: Knex, table: TableInfo, batch: number): AsyncGenerator<Array<Record<string, unknown>>> {
  if (table.primaryKey.length === 0) throw new Error(`Table '${table.name}' has no primary key`);
  const kinds = new Map(table.columns.map((c) => [c.name, c.kind]));
  const key = table.primaryKey.map((c) => (pg(db) && kinds.get(c) === 'text' ? '?? collate "C"' : '??')).join(', ');
  let last: unknown[] | null = null;
  for (;;) {
    const query = db(table.name).select('*').orderByRaw(key, table.primaryKey).limit(batch);
    if (last) query.whereRaw(`(${key}) > (${last.map(() => '?').join(', ')})`, [...table.primaryKey, ...last] as Knex.RawBinding[]);
    const rows: Array<Record<string, unknown>> = await query;
    if (rows.length > 0) yield rows;
    if (rows.length < batch) return;
    const end = rows[rows.length - 1]!;
    last = table.primaryKey.map((c) => end[c]);
  }
}

/**
 * The highest id the table's counter has handed out (0 when none): an id deleted at the end
 * is never given again, so a copy carries the counter, not only the largest id left.
 */
export async function counterValue(db: Knex, table: TableInfo): Promise<number> {
  if (!table.counter) return 0;
  if (pg(db)) {
    const result = await db.raw(
      "select pg_sequence_last_value(pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(?), ?)::regclass) as value",
      [table.name, table.counter],
    );
    return Number((result as { rows: Array<{ value: string | null }> }).rows[0]?.value ?? 0);
  }
  const rows: Array<{ seq: number }> = await db.raw("select seq from sqlite_sequence where name = ?", [table.name]);
  return Number(rows[0]?.seq ?? 0);
}

/** Moves the table's counter to at least `value` (never back), so the next id is above it. */
export async function advanceCounter(db: Knex, table: TableInfo, value: number): Promise<void> {
  if (!table.counter || value < 1) return;
  if (value <= (await counterValue(db, table))) return;
  if (pg(db)) {
    await db.raw("select setval(pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(?), ?), ?, true)", [table.name, table.counter, value]);
    return;
  }
  await db.raw('delete from sqlite_sequence where name = ?', [table.name]);
  await db.raw('insert into sqlite_sequence (name, seq) values (?, ?)', [table.name, value]);
}
