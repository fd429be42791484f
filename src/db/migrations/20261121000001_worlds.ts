import type { Knex } from 'knex';

/** World catalog, synced from the world packages at every start. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('worlds', (t) => {
    t.string('id', 64).primary();
    t.string('name', 200).notNullable();
    t.text('description').notNullable().defaultTo('');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.string('created_at', 19).notNullable();
    t.string('updated_at', 19).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('worlds');
}
