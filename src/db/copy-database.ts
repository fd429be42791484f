/**
 * `copy-db`: every table of one database into an empty other one, SQLite or PostgreSQL either
 * way (docs/decisions.md, "Backups and moving databases"). The target gets the source's schema
 * (the same migrations the source has applied), then every row with its ids, in one
 * transaction; before it commits, each table is read back and its row count and checksum
 * compared with the source's, and the id counters are moved past what the source handed out.
 * Any difference, or any failure, rolls the target back to empty.
 */
import { existsSync, mkdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from '../logging/logger.ts';
import { isPostgres, isPostgresUrl, openDatabase } from './database.ts';
import { withoutPassword } from './postgres-tools.ts';
import { claimSqlite, SqliteInUse } from './sqlite-serving.ts';
import { MIGRATION_NAMES, migrationsUpTo } from './migrations/index.ts';
import { advanceCounter, countRows, counterValue, describeTables, MIGRATIONS_TABLES, rowsInKeyOrder, TableChecksum, writableRow, type TableInfo } from './tables.ts';

/** The copy was not started: the source or the target is not what copy-db takes. */
export class CopyRefused extends Error {}

/** Writing a table into the target failed (the target refused a row); nothing was committed. */
export class CopyFailed extends Error {}

/** A table of the target does not match the source once copied; nothing was committed. */
export class CopyMismatch extends Error {
  readonly report: CopyReport;
  constructor(report: CopyReport) {
    const differing = report.tables.filter((t) => !tableMatches(t)).map((t) => t.table);
    super(`The copy does not match the source in ${differing.join(', ')}; nothing was written to the target.`);
    this.report = report;
  }
}

export interface TableReport {
  table: string;
  sourceRows: number;
  sourceChecksum: string;
  targetRows: number;
  targetChecksum: string;
}

export interface CopyReport {
  /** The source and the target as the report names them (a URL without its password). */
  source: string;
  target: string;
  tables: TableReport[];
  /** The migrations the source (and so the target) has applied. */
  migrations: string[];
  /** This release's migrations the source has not applied yet (the server applies them at start). */
  pendingMigrations: string[];
}

export interface CopyOptions {
  /** One line per step (a table begun, every 10,000 rows, checked). */
  progress: (line: string) => void;
  /** Rows read and written at a time. */
  batchSize?: number;
}

/**
 * Bound parameters per insert statement, well under both databases' limits; and rows, since
 * knex writes a multi-row insert on SQLite as a compound SELECT, of at most 500 terms.
 */
const PARAMETERS_PER_INSERT = 10_000;
const ROWS_PER_INSERT = 500;
const PROGRESS_EVERY = 10_000;

export const tableMatches = (t: TableReport): boolean => t.sourceRows === t.targetRows && t.sourceChecksum === t.targetChecksum;

async function appliedMigrations(db: Knex): Promise<string[]> {
  if (!(await db.schema.hasTable('knex_migrations'))) {
    throw new CopyRefused('The source holds no mud-server database (it has no knex_migrations table): check MUD_DB_PATH or DATABASE_URL.');
  }
  const names: string[] = await db('knex_migrations').orderBy('id').pluck('name');
  const known = names.every((name, i) => MIGRATION_NAMES[i] === name);
  if (!known) {
    const unknown = names.find((name, i) => MIGRATION_NAMES[i] !== name);
    throw new CopyRefused(`The source was migrated by another release of mud-server (migration '${unknown}' is not this release's): copy it with the release that wrote it.`);
  }
  return names;
}

/** Refuses a target that holds any table of a mud-server database. */
async function checkEmpty(target: Knex, ours: string[]): Promise<void> {
  if (isPostgres(target)) {
    const result = await target.raw('select current_schema() as schema');
    if (!(result as { rows: Array<{ schema: string | null }> }).rows[0]?.schema) {
      throw new CopyRefused('The target has no schema to write into (its search_path names none that exists): create it first.');
    }
  }
  const found: string[] = [];
  for (const name of [...ours, ...MIGRATIONS_TABLES]) if (await target.schema.hasTable(name)) found.push(name);
  if (found.length > 0) {
    throw new CopyRefused(
      `The target is not empty: it holds ${found.length === 1 ? 'a table' : `${found.length} tables`} of a mud-server database (${found.slice(0, 3).join(', ')}${found.length > 3 ? ', …' : ''}). ` +
        'copy-db writes only into an empty database: give it a new one.',
    );
  }
}

function sameSchema(source: TableInfo[], target: TableInfo[]): void {
  const shape = (tables: TableInfo[]): string[] => tables.map((t) => `${t.name}(${t.columns.map((c) => `${c.name} ${c.kind}`).join(', ')}) key(${t.primaryKey.join(', ')})`).sort();
  const [a, b] = [shape(source), shape(target)];
  const differing = a.filter((line) => !b.includes(line)).concat(b.filter((line) => !a.includes(line)));
  if (differing.length > 0) throw new Error(`The target's schema differs from the source's after the same migrations: ${differing.join('; ')}`);
}

interface Copied {
  rows: number;
  checksum: string;
  /** The largest id of the counter column (rows come in key order, so the last one's). */
  lastId: number;
}

async function copyTable(src: Knex, dst: Knex, table: TableInfo, total: number, batchSize: number, progress: (line: string) => void): Promise<Copied> {
  const sum = new TableChecksum(table);
  let lastId = 0;
  const perInsert = Math.max(1, Math.min(ROWS_PER_INSERT, Math.floor(PARAMETERS_PER_INSERT / table.columns.length)));
  let reported = 0;
  for await (const rows of rowsInKeyOrder(src, table, batchSize)) {
    for (const row of rows) sum.add(row);
    if (table.counter) lastId = Number(rows[rows.length - 1]![table.counter]);
    const writable = rows.map((row) => writableRow(table, row));
    for (let i = 0; i < writable.length; i += perInsert) await dst(table.name).insert(writable.slice(i, i + perInsert));
    if (sum.rows - reported >= PROGRESS_EVERY && sum.rows < total) {
      reported = sum.rows;
      progress(`${table.name}: ${sum.rows}/${total} rows`);
    }
  }
  return { rows: sum.rows, checksum: sum.digest(), lastId };
}

async function checksumOf(db: Knex, table: TableInfo, batchSize: number): Promise<{ rows: number; checksum: string }> {
  const sum = new TableChecksum(table);
  for await (const rows of rowsInKeyOrder(db, table, batchSize)) for (const row of rows) sum.add(row);
  return { rows: sum.rows, checksum: sum.digest() };
}

/**
 * Copies `source` into the empty `target`. The source is read in one transaction (on
 * PostgreSQL a repeatable-read snapshot), so the copy is consistent even if something writes
 * meanwhile; what it writes after the copy began is not in it.
 */
export async function copyDatabase(source: Knex, target: Knex, names: { source: string; target: string }, options: CopyOptions): Promise<CopyReport> {
  const batchSize = options.batchSize ?? 1000;
  const progress = options.progress;
  const snapshot: Knex.TransactionConfig = isPostgres(source) ? { isolationLevel: 'repeatable read', readOnly: true } : {};
  return source.transaction(async (src) => {
    const migrations = await appliedMigrations(src);
    const tables = await describeTables(src);
    await checkEmpty(target, tables.map((t) => t.name));
    const totals = new Map<string, number>();
    for (const table of tables) totals.set(table.name, await countRows(src, table.name));
    return target.transaction(async (dst) => {
      await dst.migrate.latest({ migrationSource: migrationsUpTo(migrations.length) });
      sameSchema(tables, await describeTables(dst));
      const copied = new Map<string, Copied>();
      for (const table of tables) {
        const total = totals.get(table.name)!;
        if (total >= PROGRESS_EVERY) progress(`${table.name}: copying ${total} rows`);
        const result = await copyTable(src, dst, table, total, batchSize, progress).catch((err: unknown) => {
          // The database's own words (a key, a length, a type it refuses), without a stack.
          throw new CopyFailed(`Copying ${table.name} failed: ${err instanceof Error ? err.message : String(err)}. Nothing was written to the target.`, { cause: err });
        });
        copied.set(table.name, result);
        progress(`${table.name}: ${result.rows} rows copied`);
      }
      const report: CopyReport = { ...names, tables: [], migrations, pendingMigrations: MIGRATION_NAMES.slice(migrations.length) };
      for (const table of tables) {
        const written = await checksumOf(dst, table, batchSize);
        const read = copied.get(table.name)!;
        report.tables.push({ table: table.name, sourceRows: read.rows, sourceChecksum: read.checksum, targetRows: written.rows, targetChecksum: written.checksum });
        await advanceCounter(dst, table, Math.max(read.lastId, await counterValue(src, table)));
      }
      progress('every table read back from the target and compared');
      report.tables.sort((a, b) => (a.table < b.table ? -1 : 1));
      if (!report.tables.every(tableMatches)) throw new CopyMismatch(report);
      return report;
    });
  }, snapshot);
}

/**
 * copy-db as configured: from the database the configuration names (`[database] url`, else
 * `path`) to `target`, a postgres:// URL or a SQLite file. A SQLite source a server is serving
 * is refused: what the server writes during the copy would be lost to it (a backup is the
 * snapshot to copy instead). A SQLite target is claimed for the copy, so that no server starts
 * on it meanwhile, and removed again if the copy made it and failed.
 */
export async function copyConfiguredDatabase(
  database: { path: string; url: string },
  target: string,
  logger: Logger,
  progress: (line: string) => void,
): Promise<CopyReport> {
  const toPostgres = isPostgresUrl(target);
  const names = { source: database.url ? withoutPassword(database.url).url : database.path, target: toPostgres ? withoutPassword(target).url : target };
  if (!database.url && !existsSync(database.path)) throw new CopyRefused(`There is no SQLite database at '${database.path}' ([database] path, MUD_DB_PATH).`);
  if (!database.url && !toPostgres && existsSync(target) && realpathSync(target) === realpathSync(database.path)) throw new CopyRefused('The target is the source itself.');
  const releases: Array<() => Promise<void>> = [];
  const createsFile = !toPostgres && !existsSync(target);
  let copied = false;
  try {
    if (database.url) {
      progress('the source is read in one snapshot: what servers write after the copy began is not in it (stop them first)');
    } else {
      releases.push(
        await claimSqlite(database.path, 'copy-db').catch((err: unknown) => {
          if (!(err instanceof SqliteInUse)) throw err;
          throw new CopyRefused(
            `A server is serving '${database.path}': what it writes during the copy would not be in it. Stop the server, then copy; ` +
              'or copy a backup taken while it runs: mud-server backup <file>, then MUD_DB_PATH=<file> mud-server copy-db --to ... (README, "Moving to PostgreSQL").',
            { cause: err },
          );
        }),
      );
    }
    if (!toPostgres) {
      mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
      releases.push(await claimSqlite(target, 'copy-db'));
    }
    const source = openDatabase({ sqlitePath: database.path, url: database.url }, logger);
    const destination = openDatabase({ sqlitePath: target, url: toPostgres ? target : '' }, logger);
    try {
      const report = await copyDatabase(source, destination, names, { progress }).catch((err: unknown) => {
        if ((err as { code?: unknown }).code === 'SQLITE_NOTADB') throw new CopyRefused(`'${target}' is not a SQLite database.`, { cause: err });
        throw err;
      });
      copied = true;
      return report;
    } finally {
      await source.destroy();
      await destination.destroy();
    }
  } finally {
    for (const release of releases.reverse()) await release();
    if (createsFile && !copied) for (const suffix of ['', '-wal', '-shm', '-journal', '-serving']) rmSync(`${target}${suffix}`, { force: true });
  }
}

/** The report as copy-db prints it: one line per table, then what was copied where. */
export function formatCopyReport(report: CopyReport): string {
  const width = Math.max(5, ...report.tables.map((t) => t.table.length));
  const lines = [`${'table'.padEnd(width)}  source rows  target rows  sha256 of the rows (first 16)`];
  for (const t of report.tables) {
    const checksum = t.sourceChecksum === t.targetChecksum ? `${t.sourceChecksum.slice(0, 16)}  same` : `${t.sourceChecksum.slice(0, 16)}  DIFFERS: ${t.targetChecksum.slice(0, 16)}`;
    lines.push(`${t.table.padEnd(width)}  ${String(t.sourceRows).padStart(11)}  ${String(t.targetRows).padStart(11)}  ${checksum}`);
  }
  const rows = report.tables.reduce((sum, t) => sum + t.sourceRows, 0);
  if (report.tables.every(tableMatches)) {
    lines.push(`Copied ${report.tables.length} tables, ${rows} rows, from ${report.source} to ${report.target}: every table's row count and checksum match the source.`);
  } else {
    lines.push(`Nothing was written to ${report.target}: the tables marked DIFFERS do not match the source.`);
  }
  if (report.pendingMigrations.length > 0) {
    lines.push(`The source (and so the copy) has ${report.pendingMigrations.length} of this release's migrations still to apply; the server applies them when it starts on the copy.`);
  }
  return `${lines.join('\n')}\n`;
}
