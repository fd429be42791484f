import type { Knex } from 'knex';

/** Where each character is, and the chat log (written by the game, read by admins). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('characters', (t) => {
    t.string('room_id', 64).nullable();
    t.index(['world_id', 'room_id']);
  });
  await knex.schema.createTable('chat_messages', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable().references('id').inTable('worlds').onDelete('CASCADE');
    t.string('room_id', 64).notNullable();
    t.integer('character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    // The speaker's name at the time, so the log survives character deletion.
    t.string('sender_name', 40).notNullable();
    t.string('channel', 10).notNullable();
    t.integer('recipient_character_id').nullable().references('id').inTable('characters').onDelete('SET NULL');
    t.text('message').notNullable();
    t.string('created_at', 19).notNullable();
    t.index(['world_id', 'room_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('chat_messages');
  await knex.schema.alterTable('characters', (t) => {
    t.dropIndex(['world_id', 'room_id']);
    t.dropColumn('room_id');
  });
}
