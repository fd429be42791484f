import type { Knex } from 'knex';

/**
 * Builders' changes over the read-only world packages (docs/decisions.md, "Building worlds"):
 * `world_rooms` holds a room as a builder last left it (a row wins over the package's room; a
 * deleted one is a tombstone), `world_changes` every accepted change with its before and after.
 * Items stay rows of `item_instances`; a builder's name or description is kept on the row
 * (null: the package's), and `version` counts builder edits of the row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('world_rooms', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('room_id', 64).notNullable();
    t.string('zone_id', 64).notNullable();
    t.text('name').notNullable();
    t.text('description').notNullable();
    /** JSON object direction → room id. */
    t.text('exits').notNullable();
    t.boolean('deleted').notNullable().defaultTo(false);
    t.integer('version').notNullable();
    t.string('updated_at', 19).notNullable();
    t.primary(['world_id', 'room_id']);
  });
  await knex.schema.createTable('world_changes', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('actor', 64).notNullable();
    t.string('via', 8).notNullable();
    t.string('action', 32).notNullable();
    t.string('target_type', 8).notNullable();
    t.string('target_id', 64).notNullable();
    t.text('before').nullable();
    t.text('after').nullable();
    t.string('created_at', 19).notNullable();
    t.index(['world_id', 'id']);
  });
  await knex.schema.alterTable('item_instances', (t) => {
    t.text('name').nullable();
    t.text('description').nullable();
    t.integer('version').notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('item_instances', (t) => {
    t.dropColumn('version');
    t.dropColumn('description');
    t.dropColumn('name');
  });
  await knex.schema.dropTable('world_changes');
  await knex.schema.dropTable('world_rooms');
}
