import type { Knex } from 'knex';

/**
 * Abuse-limit counts shared by every instance on the database (PostgreSQL; SQLite counts in
 * memory): one fixed window per key, `reset_at` in epoch milliseconds. Rows whose window has
 * ended are deleted periodically.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('limit_windows', (t) => {
    t.string('key', 255).primary();
    t.integer('hits').notNullable();
    t.bigInteger('reset_at').notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('limit_windows');
}
