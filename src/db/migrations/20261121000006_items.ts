import type { Knex } from 'knex';

/**
 * Items as real objects: each instance is either in a room or held by a character, never
 * both. Worlds are seeded from their packages once (world_seeds records it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('item_instances', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('item_id', 64).notNullable();
    t.string('room_id', 64).nullable();
    t.integer('character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    t.index(['world_id', 'room_id']);
    t.index(['character_id']);
  });
  await knex.schema.createTable('world_seeds', (t) => {
    t.string('world_id', 64).primary().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('seeded_at', 19).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('world_seeds');
  await knex.schema.dropTable('item_instances');
}
