import type { Knex } from 'knex';

/**
 * What a player chose for the telnet door with `config` (issue 35), kept per account across
 * sessions: colours (null: the door decides from the client's terminal type), the prompt
 * shown after each answer (null: the door's default; empty: none), and screen-reader mode.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('telnet_settings', (t) => {
    t.integer('user_id').primary().references('id').inTable('users').onDelete('CASCADE');
    t.boolean('colour').nullable();
    t.string('prompt', 200).nullable();
    t.boolean('screen_reader').notNullable().defaultTo(false);
    t.string('updated_at', 19).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('telnet_settings');
}
