/**
 * Knex connection factory and migrations. SQLite (file, WAL, foreign keys, busy timeout) is
 * the embedded default; a postgres:// URL switches to PostgreSQL.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations/index.ts';
import type { Logger } from '../logging/logger.ts';

export type Db = Knex;

export interface DatabaseOptions {
  /** SQLite file path, used when `url` is empty. */
  sqlitePath: string;
  /** postgres:// connection string. */
  url: string;
  /** PostgreSQL schema to work in (tests use a throw-away schema per run). */
  schema?: string;
}

interface SqliteConnection {
  run(sql: string, cb: (err: Error | null) => void): void;
}

function sqlitePragmas(conn: SqliteConnection, done: (err: Error | null, conn: SqliteConnection) => void): void {
  const pragmas = ['PRAGMA foreign_keys = ON', 'PRAGMA journal_mode = WAL', 'PRAGMA busy_timeout = 5000', 'PRAGMA synchronous = NORMAL'];
  const next = (i: number): void => {
    const sql = pragmas[i];
    if (sql === undefined) return done(null, conn);
    conn.run(sql, (err) => (err ? done(err, conn) : next(i + 1)));
  };
  next(0);
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

export function knexConfig(options: DatabaseOptions): Knex.Config {
  const migrations = { migrationSource, tableName: 'knex_migrations' };
  // A failed query's message starts with its SQL; never with the values bound into it.
  const compileSqlOnError = false;
  if (options.url) {
    if (!isPostgresUrl(options.url)) throw new Error('DATABASE_URL must start with postgres:// or postgresql://');
    return {
      client: 'pg',
      connection: options.url,
      searchPath: options.schema ? [options.schema] : undefined,
      pool: { min: 0, max: 10 },
      // While PostgreSQL is away a request waits at most this long for a connection, then
      // answers 503, instead of knex's default minute.
      acquireConnectionTimeout: 5000,
      migrations: { ...migrations, schemaName: options.schema },
      compileSqlOnError,
    };
  }
  return {
    client: 'sqlite3',
    connection: { filename: options.sqlitePath },
    useNullAsDefault: true,
    // One connection: SQLite serializes writers anyway, and this keeps PRAGMAs in force.
    pool: { min: 1, max: 1, afterCreate: sqlitePragmas },
    migrations,
    compileSqlOnError,
  };
}

export function openDatabase(options: DatabaseOptions, logger: Logger): Db {
  if (!options.url && options.sqlitePath !== ':memory:') {
    mkdirSync(path.dirname(path.resolve(options.sqlitePath)), { recursive: true });
  }
  // Knex's own warnings go through our JSON log, not straight to stdout.
  const log = (level: 'warn' | 'error' | 'debug') => (message: unknown) => logger.log(level, 'knex', { detail: String(message) });
  const db = knexFactory({ ...knexConfig(options), log: { warn: log('warn'), error: log('error'), deprecate: log('warn'), debug: log('debug') } });
  // knex puts the SQL in front of the driver's message ("<sql> - SQLITE_BUSY: …"). Errors end
  // up in logs and some in admin answers, so they keep only the driver's message and code.
  db.on('query-error', (err: unknown, query: { sql?: unknown }) => {
    const prefix = `${String(query.sql)} - `;
    if (err instanceof Error && err.message.startsWith(prefix)) err.message = err.message.slice(prefix.length);
  });
  return db;
}

/** Applies every pending migration; returns the names applied in this run. */
export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

export function isPostgres(db: Db): boolean {
  return db.client.config.client === 'pg';
}

/**
 * Serializes transactions that work on the same logical key (e.g. one activation scope).
 * SQLite runs one transaction at a time anyway; PostgreSQL takes a transaction-scoped
 * advisory lock that is released at commit or rollback.
 */
export async function lockKey(trx: Knex.Transaction, key: string): Promise<void> {
  if (trx.client.config.client === 'pg') await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [key]);
}
