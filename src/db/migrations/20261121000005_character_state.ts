import type { Knex } from 'knex';

/**
 * Character axis state: the per-world axis registry (seeded from the world's active axis
 * bundle), each character's scores, its base and current snapshots, and an append-only event
 * log of every change with per-axis deltas.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('characters', (t) => {
    t.integer('state_seed').notNullable().defaultTo(0);
    // The policy hash of the axis bundle the state was computed with.
    t.string('state_version', 64).nullable();
    t.text('base_state_json').nullable();
    t.text('current_state_json').nullable();
    t.string('state_updated_at', 32).nullable();
  });
  await knex.schema.createTable('axes', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('name', 64).notNullable();
    t.unique(['world_id', 'name']);
  });
  await knex.schema.createTable('character_axis_scores', (t) => {
    t.integer('character_id').notNullable().references('id').inTable('characters').onDelete('CASCADE');
    t.integer('axis_id').notNullable().references('id').inTable('axes').onDelete('CASCADE');
    t.double('score').notNullable();
    t.string('updated_at', 32).notNullable();
    t.primary(['character_id', 'axis_id']);
  });
  await knex.schema.createTable('axis_events', (t) => {
    t.increments('id').primary();
    t.integer('character_id').notNullable().references('id').inTable('characters').onDelete('CASCADE');
    t.string('world_id', 64).notNullable();
    t.string('event_type', 64).notNullable();
    t.string('description', 200).nullable();
    t.text('metadata_json').notNullable();
    t.string('created_at', 32).notNullable();
    t.index(['character_id', 'id']);
  });
  await knex.schema.createTable('axis_event_deltas', (t) => {
    t.increments('id').primary();
    t.integer('event_id').notNullable().references('id').inTable('axis_events').onDelete('CASCADE');
    t.integer('axis_id').notNullable().references('id').inTable('axes').onDelete('CASCADE');
    t.double('old_score').notNullable();
    t.double('new_score').notNullable();
    t.double('delta').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['axis_event_deltas', 'axis_events', 'character_axis_scores', 'axes']) await knex.schema.dropTable(table);
  await knex.schema.alterTable('characters', (t) => {
    for (const c of ['state_seed', 'state_version', 'base_state_json', 'current_state_json', 'state_updated_at']) t.dropColumn(c);
  });
}
