import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * Sessions keep only the SHA-256 of their token (`token_hash`), so reading the database is
 * not enough to act as a logged-in user. Existing sessions are hashed row by row and stay
 * valid; `session_id` is dropped.
 *
 * On SQLite knex drops a column by rebuilding the table (copy, drop, rename) inside this
 * migration's transaction; nothing references `sessions`, so the foreign keys may stay on.
 * The rebuild resets the AUTOINCREMENT counter to the highest surviving id, so it is put back:
 * a session's id is its handle in admin listings and kicks, and must never name a later one.
 */
export async function up(knex: Knex): Promise<void> {
  const sequence = await autoincrementOf(knex);
  await knex.schema.alterTable('sessions', (t) => {
    t.string('token_hash', 64).nullable();
  });
  const rows: Array<{ id: number; session_id: string }> = await knex('sessions').select('id', 'session_id');
  for (const row of rows) await knex('sessions').where({ id: row.id }).update({ token_hash: sessionTokenHash(row.session_id) });
  await knex.schema.alterTable('sessions', (t) => {
    t.dropNullable('token_hash');
    t.unique(['token_hash']);
    t.dropColumn('session_id');
  });
  await restoreAutoincrement(knex, sequence);
}

/** Tokens cannot be recovered from their hashes: going back ends every session. */
export async function down(knex: Knex): Promise<void> {
  const sequence = await autoincrementOf(knex);
  await knex('sessions').delete();
  await knex.schema.alterTable('sessions', (t) => {
    t.string('session_id', 36).nullable();
  });
  await knex.schema.alterTable('sessions', (t) => {
    t.dropNullable('session_id');
    t.unique(['session_id']);
    t.dropColumn('token_hash');
  });
  await restoreAutoincrement(knex, sequence);
}

/** SQLite's AUTOINCREMENT counter of `sessions` (undefined on PostgreSQL or before any session). */
async function autoincrementOf(knex: Knex): Promise<number | undefined> {
  // Not database.ts's isPostgres: that module imports the migrations.
  if (knex.client.config.client === 'pg') return undefined;
  const row = await knex('sqlite_sequence').where({ name: 'sessions' }).first('seq');
  return row === undefined ? undefined : Number(row.seq);
}

async function restoreAutoincrement(knex: Knex, seq: number | undefined): Promise<void> {
  if (seq === undefined) return;
  await knex('sqlite_sequence').where({ name: 'sessions' }).delete();
  await knex('sqlite_sequence').insert({ name: 'sessions', seq });
}

/**
 * The stored form of a token as it was when this migration was written (SHA-256, hex): a copy,
 * not SessionRepository's, so that this migration never changes with today's code.
 */
function sessionTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
