import type { Knex } from 'knex';

/**
 * Accounts, server-side sessions, characters and world grants. Timestamps are UTC text
 * `YYYY-MM-DD HH:MM:SS` on both databases (see db/clock.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.increments('id').primary();
    t.string('username', 20).notNullable().unique();
    t.string('password_hash', 100).notNullable();
    t.string('role', 20).notNullable().defaultTo('player');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_guest').notNullable().defaultTo(false);
    t.string('guest_expires_at', 19).nullable().index();
    t.string('account_origin', 20).notNullable();
    t.string('created_at', 19).notNullable();
    t.string('last_login', 19).nullable();
  });
  await knex.schema.createTable('characters', (t) => {
    t.increments('id').primary();
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('name', 40).notNullable();
    // Names are unique across the service, case-insensitively.
    t.string('name_key', 40).notNullable().unique();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds');
    t.boolean('is_guest_created').notNullable().defaultTo(false);
    t.string('created_at', 19).notNullable();
    t.string('updated_at', 19).notNullable();
    t.index(['user_id', 'world_id']);
  });
  await knex.schema.createTable('sessions', (t) => {
    t.increments('id').primary();
    t.string('session_id', 36).notNullable().unique();
    t.integer('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.integer('character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    t.string('world_id', 64).nullable();
    t.string('client_type', 64).notNullable().defaultTo('unknown');
    t.string('created_at', 19).notNullable();
    t.string('last_activity', 19).notNullable();
    t.string('expires_at', 19).nullable().index();
    t.index(['user_id']);
    t.index(['world_id', 'character_id']);
  });
  await knex.schema.createTable('world_permissions', (t) => {
    t.integer('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.boolean('can_access').notNullable().defaultTo(true);
    t.string('created_at', 19).notNullable();
    t.primary(['user_id', 'world_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('world_permissions');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('characters');
  await knex.schema.dropTable('users');
}
