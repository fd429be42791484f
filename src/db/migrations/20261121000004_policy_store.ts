import type { Knex } from 'knex';

/**
 * The policy control plane: identities, variants, activation pointers per world/client scope,
 * and append-only logs (validation runs, audit events, publish runs).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('policy_items', (t) => {
    t.string('policy_id', 255).primary();
    t.string('policy_type', 32).notNullable();
    t.string('namespace', 200).notNullable();
    t.string('policy_key', 200).notNullable();
    t.string('created_at', 32).notNullable();
    t.unique(['policy_type', 'namespace', 'policy_key']);
  });
  await knex.schema.createTable('policy_variants', (t) => {
    t.increments('id').primary();
    t.string('policy_id', 255).notNullable().references('policy_id').inTable('policy_items');
    t.string('variant', 100).notNullable();
    t.string('schema_version', 50).notNullable();
    t.integer('policy_version').notNullable();
    t.string('status', 16).notNullable();
    // Canonical JSON (sorted keys, Python float formatting), so content_hash is reproducible.
    t.text('content_json').notNullable();
    t.string('content_hash', 64).notNullable();
    t.string('updated_at', 32).notNullable();
    t.string('updated_by', 100).notNullable();
    t.unique(['policy_id', 'variant']);
  });
  await knex.schema.createTable('policy_activations', (t) => {
    t.string('world_id', 64).notNullable().references('id').inTable('worlds');
    t.string('client_profile', 100).notNullable().defaultTo('');
    t.string('policy_id', 255).notNullable();
    t.string('variant', 100).notNullable();
    t.string('activated_at', 32).notNullable();
    t.string('activated_by', 100).notNullable();
    t.integer('rollback_of_activation_id').nullable();
    t.primary(['world_id', 'client_profile', 'policy_id']);
    t.foreign(['policy_id', 'variant']).references(['policy_id', 'variant']).inTable('policy_variants');
  });
  await knex.schema.createTable('policy_validation_runs', (t) => {
    t.increments('id').primary();
    t.string('policy_id', 255).notNullable();
    t.string('variant', 100).notNullable();
    t.boolean('is_valid').notNullable();
    t.text('errors_json').notNullable();
    t.string('validated_at', 32).notNullable();
    t.string('validated_by', 100).notNullable();
  });
  await knex.schema.createTable('policy_audit_events', (t) => {
    t.increments('id').primary();
    t.string('event_type', 16).notNullable();
    t.string('world_id', 64).notNullable();
    t.string('client_profile', 100).notNullable().defaultTo('');
    t.string('policy_id', 255).nullable();
    t.string('variant', 100).nullable();
    t.string('actor', 100).notNullable();
    t.text('event_payload_json').notNullable();
    t.string('created_at', 32).notNullable();
    t.index(['world_id', 'client_profile', 'event_type', 'id']);
  });
  await knex.schema.createTable('policy_publish_runs', (t) => {
    t.increments('id').primary();
    t.string('world_id', 64).notNullable();
    t.string('client_profile', 100).notNullable().defaultTo('');
    t.string('actor', 100).notNullable();
    t.text('manifest_json').notNullable();
    t.string('created_at', 32).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['policy_publish_runs', 'policy_audit_events', 'policy_validation_runs', 'policy_activations', 'policy_variants', 'policy_items']) {
    await knex.schema.dropTable(table);
  }
}
