/**
 * Whether a server serves a SQLite database file, for the commands that must not write it at
 * length under a running server (`import-reference`; docs/decisions.md, "Moving from the
 * reference server"). The mark is a lock, not a file's presence: each server holds a shared
 * lock on `<database>-serving` (an empty SQLite file) for as long as it runs, and a command
 * claims that file exclusively, which SQLite refuses at once while any server holds it. The
 * locks are POSIX locks of the process, which the kernel drops when the process ends however
 * it ends: a server killed with -9 leaves the file behind, unlocked, and blocks nothing.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';

/** The database is served (a command was refused), or claimed by a command (a server was refused). */
export class SqliteInUse extends Error {}

/** The lock file of a SQLite database. */
export function servingFile(databasePath: string): string {
  return `${databasePath}-serving`;
}

/** How long a starting server waits for a command's claim to end before it gives up. */
const SERVER_WAIT_MS = 5000;

function openLockFile(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => (err ? reject(err) : resolve(db)));
  });
}

function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

const isBusy = (err: unknown): boolean => (err as { code?: unknown }).code === 'SQLITE_BUSY';

/**
 * Marks the database as served until the returned function is called (or the process ends).
 * Several servers may hold the mark together. A command's claim refuses it (SqliteInUse)
 * once it has waited SERVER_WAIT_MS.
 */
export async function markServing(databasePath: string): Promise<() => Promise<void>> {
  // Before the database itself is opened (which would create its folder too).
  mkdirSync(path.dirname(path.resolve(databasePath)), { recursive: true });
  const db = await openLockFile(servingFile(databasePath));
  try {
    db.configure('busyTimeout', SERVER_WAIT_MS);
    // In EXCLUSIVE locking mode the shared lock taken by the first read is kept until close.
    await exec(db, 'PRAGMA locking_mode = EXCLUSIVE; SELECT count(*) FROM sqlite_master;');
  } catch (err) {
    await close(db);
    if (isBusy(err)) {
      throw new SqliteInUse(`A command (such as import-reference) is writing the SQLite database '${databasePath}': start the server once it has finished.`, { cause: err });
    }
    throw err;
  }
  return () => close(db);
}

/**
 * Claims the database for a command that writes it at length (`command` names it in the
 * refusal), until the returned function is called (or the process ends); a SqliteInUse, at
 * once, while a server serves it.
 */
export async function claimSqlite(databasePath: string, command: string): Promise<() => Promise<void>> {
  const db = await openLockFile(servingFile(databasePath));
  try {
    db.configure('busyTimeout', 0);
    await exec(db, 'BEGIN EXCLUSIVE');
  } catch (err) {
    await close(db);
    if (isBusy(err)) {
      throw new SqliteInUse(
        `A server is serving the SQLite database '${databasePath}': ${command} would hold its write lock for the whole run, and the server's logins and writes would fail meanwhile. Stop the server, run the command, then start the server again.`,
        { cause: err },
      );
    }
    throw err;
  }
  return async () => {
    await exec(db, 'ROLLBACK');
    await close(db);
  };
}
