import type { Knex } from 'knex';

/**
 * Presence that means connected (docs/decisions.md, "Presence means connected"): each instance
 * leases the sessions it holds event streams for (one row per session and instance, renewed by its
 * heartbeat, so an instance that dies stops counting); `disconnected_at` is when a session's last
 * stream closed, `away` marks a session whose character has left the lists for being link-dead too
 * long (the session itself stays valid). Messages of the world-wide channels are read by world and
 * channel.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.boolean('away').notNullable().defaultTo(false);
    t.string('disconnected_at', 19).nullable();
  });
  await knex.schema.createTable('event_stream_leases', (t) => {
    t.integer('session_id').notNullable().references('id').inTable('sessions').onDelete('CASCADE');
    t.string('instance_id', 36).notNullable();
    t.integer('streams').notNullable();
    // The client address of the session's streams here, as the stream limits count it.
    t.string('address', 64).notNullable();
    t.string('lease_until', 19).notNullable().index();
    t.primary(['session_id', 'instance_id']);
    t.index(['instance_id']);
  });
  await knex.schema.alterTable('chat_messages', (t) => {
    t.index(['world_id', 'channel', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chat_messages', (t) => {
    t.dropIndex(['world_id', 'channel', 'id']);
  });
  await knex.schema.dropTable('event_stream_leases');
  await knex.schema.alterTable('sessions', (t) => {
    t.dropColumn('disconnected_at');
    t.dropColumn('away');
  });
}
