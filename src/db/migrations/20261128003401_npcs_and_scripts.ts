import type { Knex } from 'knex';

/**
 * NPCs and builders' scripts (docs/decisions.md, "Scripts"): builders' NPCs over the packages'
 * (`world_npcs`, a world revision each, as `world_rooms`), where each NPC stands now
 * (`npc_positions`), scripts on rooms and items (null: the package's; '': none), what each
 * script keeps between runs (`script_state`), its timers (`script_timers`), which instance holds
 * each world's clock (`world_clocks`), the errors builders read (`script_errors`), and who spoke
 * a chat line when it was not a character (`chat_messages.speaker_kind`, `npc_id`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('world_rooms', (t) => {
    t.text('script').nullable();
  });
  await knex.schema.alterTable('item_instances', (t) => {
    t.text('script').nullable();
  });
  await knex.schema.createTable('world_npcs', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('npc_id', 64).notNullable();
    t.text('name').notNullable();
    t.text('description').notNullable();
    t.string('room_id', 64).notNullable();
    t.text('script').nullable();
    t.boolean('deleted').notNullable().defaultTo(false);
    t.integer('version').notNullable();
    t.integer('revision').notNullable();
    t.string('updated_at', 19).notNullable();
    t.primary(['world_id', 'npc_id']);
    t.index(['world_id', 'revision']);
  });
  await knex.schema.createTable('npc_positions', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('npc_id', 64).notNullable();
    t.string('room_id', 64).notNullable();
    t.string('updated_at', 19).notNullable();
    t.primary(['world_id', 'npc_id']);
  });
  await knex.schema.createTable('script_state', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    /** `npc:<id>`, `room:<id>` or `item:<row id>`. */
    t.string('owner', 80).notNullable();
    t.text('state').notNullable();
    t.integer('version').notNullable();
    t.integer('faults').notNullable().defaultTo(0);
    t.string('suspended_at', 19).nullable();
    t.string('updated_at', 19).notNullable();
    t.primary(['world_id', 'owner']);
  });
  await knex.schema.createTable('script_timers', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('owner', 80).notNullable();
    t.string('name', 64).notNullable();
    /** Epoch milliseconds. */
    t.bigInteger('due_at').notNullable();
    /** Null for `after` (once); the period of `every`. */
    t.integer('period_ms').nullable();
    t.primary(['world_id', 'owner', 'name']);
    t.index(['world_id', 'due_at']);
  });
  await knex.schema.createTable('world_clocks', (t) => {
    t.string('world_id', 64).primary().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('holder', 64).notNullable();
    /** Epoch milliseconds. */
    t.bigInteger('lease_until').notNullable();
  });
  await knex.schema.createTable('script_errors', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('owner', 80).notNullable();
    t.string('hook', 64).notNullable();
    t.string('kind', 20).notNullable();
    t.text('message').notNullable();
    t.integer('line').nullable();
    t.string('created_at', 19).notNullable();
    t.index(['world_id', 'id']);
  });
  await knex.schema.alterTable('chat_messages', (t) => {
    t.string('speaker_kind', 10).notNullable().defaultTo('character');
    t.string('npc_id', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chat_messages', (t) => {
    t.dropColumn('npc_id');
    t.dropColumn('speaker_kind');
  });
  for (const table of ['script_errors', 'world_clocks', 'script_timers', 'script_state', 'npc_positions', 'world_npcs']) await knex.schema.dropTable(table);
  await knex.schema.alterTable('item_instances', (t) => {
    t.dropColumn('script');
  });
  await knex.schema.alterTable('world_rooms', (t) => {
    t.dropColumn('script');
  });
}
