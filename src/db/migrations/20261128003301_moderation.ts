import type { Knex } from 'knex';

/**
 * What a community needs to look after itself (docs/decisions.md, "Moderation"): an account's
 * mute (until when, and why), the characters each account ignores, reports to staff, and the
 * audit log of staff actions. Reports and audit entries keep the names of everyone involved as
 * they were, so they outlive the accounts and characters they name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.string('muted_until', 19).nullable();
    t.string('mute_reason', 200).nullable();
  });
  await knex.schema.createTable('character_ignores', (t) => {
    t.integer('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('character_id').notNullable().references('id').inTable('characters').onDelete('CASCADE');
    t.string('created_at', 19).notNullable();
    t.primary(['user_id', 'character_id']);
    t.index(['character_id']);
  });
  await knex.schema.createTable('reports', (t) => {
    t.increments('id').primary();
    t.string('created_at', 19).notNullable();
    t.integer('reporter_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('reporter_username', 64).notNullable();
    t.integer('reporter_character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    t.string('reporter_character', 40).notNullable();
    t.integer('reported_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('reported_username', 64).nullable();
    t.integer('reported_character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    t.string('reported_character', 40).notNullable();
    t.string('world_id', 64).notNullable();
    t.string('room_id', 64).nullable();
    t.text('text').notNullable();
    // The lines of chat the reporter could read when reporting, as JSON.
    t.text('context').notNullable();
    t.string('resolved_at', 19).nullable();
    t.integer('resolved_by_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('resolved_by_username', 64).nullable();
    t.text('resolution_note').nullable();
    t.index(['resolved_at', 'id']);
  });
  await knex.schema.createTable('audit_log', (t) => {
    t.increments('id').primary();
    t.string('created_at', 19).notNullable();
    t.integer('actor_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('actor_username', 64).notNullable();
    t.string('actor_role', 20).notNullable();
    t.string('action', 32).notNullable();
    t.integer('target_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('target_username', 64).nullable();
    t.text('reason').nullable();
    t.text('detail').nullable();
    t.string('door', 10).notNullable();
    t.index(['target_username', 'id']);
    t.index(['actor_username', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
  await knex.schema.dropTable('reports');
  await knex.schema.dropTable('character_ignores');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('mute_reason');
    t.dropColumn('muted_until');
  });
}
