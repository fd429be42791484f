/**
 * Rows per multi-row statement: SQLite compiles a multi-row insert into one compound SELECT,
 * which it refuses past 500 terms, and PostgreSQL binds at most 65,535 parameters.
 */
const ROWS_PER_STATEMENT = 100;

/** `rows` in pieces of ROWS_PER_STATEMENT, one statement each. */
export function* chunks<T>(rows: readonly T[]): Generator<T[]> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) yield rows.slice(i, i + ROWS_PER_STATEMENT);
}
