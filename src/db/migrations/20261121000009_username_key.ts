import type { Knex } from 'knex';

/**
 * Usernames become unique in any letter case: `users.username_key` holds the lower-cased name
 * under a unique index. Accounts whose names already differ only in case are all kept, never
 * merged: the oldest of each group gets the key (so the name stays taken), the others keep
 * theirs without one and still log in by their exact name. The clashes are logged as a
 * warning naming every account involved, for an operator to settle.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.string('username_key', 40).nullable();
  });
  const rows: Array<{ id: number; username: string }> = await knex('users').orderBy('id').select('id', 'username');
  const holders = new Map<string, { id: number; username: string }>();
  const clashes: string[] = [];
  for (const row of rows) {
    const key = usernameKey(row.username);
    const holder = holders.get(key);
    if (holder) {
      clashes.push(`'${row.username}' (id ${row.id}) clashes with '${holder.username}' (id ${holder.id})`);
      continue;
    }
    holders.set(key, row);
    await knex('users').where({ id: row.id }).update({ username_key: key });
  }
  await knex.schema.alterTable('users', (t) => {
    t.unique(['username_key']);
  });
  if (clashes.length > 0) {
    knex.client.logger.warn?.(
      `Usernames that differ only in letter case were kept, the later ones without a username_key: ${clashes.join('; ')}. ` +
        'Each still logs in by its exact name; rename or delete the duplicates to settle them.',
    );
  }
}

/**
 * Not knex's dropColumn: on SQLite it rebuilds `users`, and dropping the old table inside the
 * migration's transaction (foreign keys on) would delete every session and grant with it.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropUnique(['username_key']);
  });
  await knex.raw('ALTER TABLE ?? DROP COLUMN ??', ['users', 'username_key']);
}

/** The key as it was when this migration was written (lower case): a copy, not UserRepository's, so that this migration never changes with today's code. */
function usernameKey(username: string): string {
  return username.toLowerCase();
}
