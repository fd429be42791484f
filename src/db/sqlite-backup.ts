/**
 * `backup` on SQLite: a consistent copy of the database file taken while the server goes on
 * serving (docs/decisions.md, "Backups and moving databases"). SQLite's online backup copies
 * the pages inside one read transaction, which in WAL mode is a snapshot that writers do not
 * wait for and that never changes under the copy (so it never restarts). The copy is written
 * beside the destination, checked with `PRAGMA integrity_check`, and only then renamed into
 * place: the destination is the old file or the whole new one, never half of one.
 */
import { closeSync, existsSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import sqlite3 from 'sqlite3';

/** The backup was not taken: what it was asked to read or write is not usable. */
export class BackupRefused extends Error {}

export interface BackupResult {
  pages: number;
  bytes: number;
  seconds: number;
}

export interface BackupOptions {
  /** Replace a file already at the destination. */
  force: boolean;
  /** Progress lines while a large database is copied (every 10%). */
  progress: (line: string) => void;
}

/** node-sqlite3's backup object (its typings do not declare it). */
interface SqliteBackup {
  step(pages: number, callback: (err: (Error & { code?: string }) | null) => void): void;
  finish(callback: () => void): void;
  readonly completed: boolean;
  readonly failed: boolean;
  readonly remaining: number;
  readonly pageCount: number;
}

/** Pages copied per step (4 MiB at SQLite's default page size): a database larger than one step reports progress. */
const STEP_PAGES = 1024;

function open(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)));
  });
}

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function all<T>(db: sqlite3.Database, sql: string): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

function step(backup: SqliteBackup): Promise<void> {
  return new Promise((resolve, reject) => {
    backup.step(STEP_PAGES, (err) => {
      // SQLite's advice: BUSY and LOCKED are passing; try the step again.
      if (err && !backup.failed && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED')) setTimeout(resolve, 10);
      else if (err) reject(err);
      else resolve();
    });
  });
}

/** Copies the pages of `source`'s snapshot into `file`, reporting progress by tenths. */
async function copyPages(source: sqlite3.Database, file: string, progress: (line: string) => void): Promise<number> {
  const backup = (source as unknown as { backup(file: string): SqliteBackup }).backup(file);
  try {
    let reported = 0;
    while (!backup.completed) {
      await step(backup);
      const total = backup.pageCount;
      const tenth = total > 0 ? Math.floor(((total - backup.remaining) * 10) / total) : 10;
      if (total > STEP_PAGES && tenth > reported) {
        reported = tenth;
        progress(`${tenth * 10}% (${total - backup.remaining} of ${total} pages)`);
      }
    }
    return backup.pageCount;
  } finally {
    await new Promise<void>((resolve) => backup.finish(resolve));
  }
}

/** Makes `file` a single self-contained file (no WAL beside it) and checks it; throws unless it is sound. */
async function seal(file: string): Promise<void> {
  const db = await open(file, sqlite3.OPEN_READWRITE);
  try {
    await exec(db, 'PRAGMA journal_mode = DELETE');
    const rows = await all<{ integrity_check: string }>(db, 'PRAGMA integrity_check');
    const verdict = rows.map((r) => r.integrity_check);
    if (verdict.length !== 1 || verdict[0] !== 'ok') throw new Error(`The copy failed PRAGMA integrity_check: ${verdict.slice(0, 5).join('; ')}`);
  } finally {
    await close(db);
  }
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Backs up the SQLite database at `databasePath` into `file`. */
export async function backupSqlite(databasePath: string, file: string, options: BackupOptions): Promise<BackupResult> {
  const started = Date.now();
  if (!existsSync(databasePath)) throw new BackupRefused(`There is no SQLite database at '${databasePath}' ([database] path, MUD_DB_PATH).`);
  const dir = path.dirname(path.resolve(file));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new BackupRefused(`The folder '${dir}' does not exist.`);
  if (existsSync(file)) {
    if (realpathSync(file) === realpathSync(databasePath)) throw new BackupRefused(`'${file}' is the database itself.`);
    if (!options.force) throw new BackupRefused(`'${file}' already exists: pass --force to replace it.`);
  }
  const partial = path.join(dir, `.${path.basename(file)}.${randomBytes(4).toString('hex')}.partial`);
  try {
    const source = await open(databasePath, sqlite3.OPEN_READONLY);
    let pages: number;
    try {
      source.configure('busyTimeout', 5000);
      // The snapshot: held from the first read to COMMIT, so every page comes from one state.
      await exec(source, 'BEGIN; SELECT count(*) FROM sqlite_master;');
      pages = await copyPages(source, partial, options.progress);
      await exec(source, 'COMMIT');
    } finally {
      await close(source);
    }
    await seal(partial);
    // A WAL left beside the old file would be read into the new one.
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    renameSync(partial, file);
    fsyncDirectory(dir);
    return { pages, bytes: statSync(file).size, seconds: (Date.now() - started) / 1000 };
  } catch (err) {
    for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
    const code = (err as { code?: unknown }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') throw new BackupRefused(`'${databasePath}' cannot be read as a SQLite database (${(err as Error).message}).`, { cause: err });
    throw err;
  }
}
