import type { Knex } from 'knex';

/**
 * Each builders' change of a world is one revision of it: every `world_rooms` row the change
 * writes carries the world's new revision, so an instance behind reads only the rows written
 * since the revision it has (docs/decisions.md, "Building worlds"). Rows written before this
 * migration count as revision 0.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('world_rooms', (t) => {
    t.integer('revision').notNullable().defaultTo(0);
    t.index(['world_id', 'revision']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('world_rooms', (t) => {
    t.dropIndex(['world_id', 'revision']);
    t.dropColumn('revision');
  });
}
