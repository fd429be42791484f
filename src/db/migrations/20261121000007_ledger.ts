import type { Knex } from 'knex';

/**
 * The event ledger: one row per envelope (the reference server's JSONL line), append-only.
 * The application never updates or deletes a row; `checksum` covers every other column.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ledger_events', (t) => {
    t.increments('id').primary();
    t.string('event_id', 32).notNullable().unique();
    t.string('world_id', 64).notNullable();
    t.string('event_type', 64).notNullable();
    t.string('schema_version', 16).notNullable();
    t.string('ipc_hash', 64).nullable();
    t.text('meta_json').notNullable();
    t.text('data_json').notNullable();
    t.string('timestamp', 40).notNullable();
    t.string('checksum', 80).notNullable();
    t.index(['world_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ledger_events');
}
