/** Recognises a unique-constraint violation on either database. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: string; message?: string };
  return e.code === '23505' || (e.code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(e.message ?? ''));
}

/** SQLite result codes (the driver's `code`) of a database that cannot take a write now. */
const SQLITE_FULL = new Set(['SQLITE_FULL']);
const SQLITE_UNAVAILABLE = new Set(['SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_BUSY', 'SQLITE_READONLY', 'SQLITE_PROTOCOL']);
/** Node socket errors of a connection to PostgreSQL that failed or was cut. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
/**
 * PostgreSQL SQLSTATEs of a server that is unreachable, shutting down or starting up: class 08
 * (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now), 53300
 * (too many connections), 53100 (disk full).
 */
const PG_UNAVAILABLE = /^(08...|57P0[1-3]|53300|53100)$/;

/**
 * Why the database cannot serve a request right now, or null for any other error: `full` (no
 * space left to write), `unavailable` (down, restarting, unreachable, its pool out of
 * connections). Both pass once the operator fixes the cause; the request changed nothing.
 */
export function databaseUnavailable(err: unknown): 'full' | 'unavailable' | null {
  if (typeof err !== 'object' || err === null) return null;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SQLITE_FULL.has(code) || code === '53100') return 'full';
    if (SQLITE_UNAVAILABLE.has(code) || CONNECTION_CODES.has(code) || PG_UNAVAILABLE.test(code)) return 'unavailable';
  }
  // knex's pool gave up waiting for a connection; pg's client lost its socket mid-query.
  if (name === 'KnexTimeoutError') return 'unavailable';
  if (typeof message === 'string' && /^Connection terminated|^Client has encountered a connection error|^timeout exceeded when trying to connect/.test(message)) return 'unavailable';
  return null;
}
