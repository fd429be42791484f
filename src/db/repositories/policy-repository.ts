/**
 * SQL for the policy store. Content is kept as canonical JSON text and read back with the
 * float-preserving parser, so a stored variant hashes exactly as it was written.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Knex } from 'knex';
import { isPostgres, lockKey, type Db } from '../database.ts';
import { insertedId } from '../inserted-id.ts';
import { canonicalJson, parseJson } from '../../shared/canonical-json.ts';
import type { PolicyAuditEventType, PolicyIdParts, PolicyType } from '../../shared/policy-ids.ts';

export interface VariantRecord {
  policyId: string;
  policyType: PolicyType;
  namespace: string;
  policyKey: string;
  variant: string;
  schemaVersion: string;
  policyVersion: number;
  status: string;
  content: Record<string, unknown>;
  contentHash: string;
  updatedAt: string;
  updatedBy: string;
}

export interface ActivationRecord {
  worldId: string;
  clientProfile: string;
  policyId: string;
  variant: string;
  activatedAt: string;
  activatedBy: string;
  rollbackOfActivationId: number | null;
}

export interface AuditEventRecord {
  id: number;
  eventType: PolicyAuditEventType;
  worldId: string;
  clientProfile: string;
  policyId: string | null;
  variant: string | null;
}

export interface PublishRunRecord {
  id: number;
  worldId: string;
  clientProfile: string;
  actor: string;
  manifest: Record<string, unknown>;
  createdAt: string;
}

const VARIANT_COLUMNS = [
  'v.policy_id',
  'i.policy_type',
  'i.namespace',
  'i.policy_key',
  'v.variant',
  'v.schema_version',
  'v.policy_version',
  'v.status',
  'v.content_json',
  'v.content_hash',
  'v.updated_at',
  'v.updated_by',
];

function toVariant(r: Record<string, unknown>): VariantRecord {
  return {
    policyId: String(r.policy_id),
    policyType: r.policy_type as PolicyType,
    namespace: String(r.namespace),
    policyKey: String(r.policy_key),
    variant: String(r.variant),
    schemaVersion: String(r.schema_version),
    policyVersion: Number(r.policy_version),
    status: String(r.status),
    content: parseJson(String(r.content_json)) as Record<string, unknown>,
    contentHash: String(r.content_hash),
    updatedAt: String(r.updated_at),
    updatedBy: String(r.updated_by),
  };
}

/** Many variants' rows, parsed one at a time so other requests run in between (contents go up to 256 KiB). */
async function toVariants(rows: Array<Record<string, unknown>>): Promise<VariantRecord[]> {
  const variants: VariantRecord[] = [];
  for (const row of rows) {
    variants.push(toVariant(row));
    await nextTurn();
  }
  return variants;
}

function toActivation(r: Record<string, unknown>): ActivationRecord {
  return {
    worldId: String(r.world_id),
    clientProfile: String(r.client_profile),
    policyId: String(r.policy_id),
    variant: String(r.variant),
    activatedAt: String(r.activated_at),
    activatedBy: String(r.activated_by),
    rollbackOfActivationId: r.rollback_of_activation_id === null ? null : Number(r.rollback_of_activation_id),
  };
}

export class PolicyRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  private variants(trx: Knex = this.db): Knex.QueryBuilder {
    return trx('policy_variants as v').join('policy_items as i', 'i.policy_id', 'v.policy_id').select(VARIANT_COLUMNS);
  }

  async findVariant(policyId: string, variant: string, trx: Knex = this.db): Promise<VariantRecord | undefined> {
    const row = await this.variants(trx).where({ 'v.policy_id': policyId, 'v.variant': variant }).first();
    return row && toVariant(row);
  }

  /** The variant with the highest policy_version; ties go to the latest update. */
  async latestVariant(policyId: string): Promise<VariantRecord | undefined> {
    const row = await this.variants()
      .where('v.policy_id', policyId)
      .orderBy([{ column: 'v.policy_version', order: 'desc' }, { column: 'v.updated_at', order: 'desc' }, { column: 'v.id', order: 'desc' }])
      .first();
    return row && toVariant(row);
  }

  async variantExists(policyId: string, variant: string): Promise<boolean> {
    return (await this.db('policy_variants').where({ policy_id: policyId, variant }).first('id')) !== undefined;
  }

  async listVariants(filters: { policyType?: string; namespace?: string; status?: string }): Promise<VariantRecord[]> {
    const q = this.variants().orderBy([
      { column: 'i.policy_type' },
      { column: 'i.namespace' },
      { column: 'i.policy_key' },
      { column: 'v.policy_version', order: 'desc' },
      { column: 'v.id' },
    ]);
    if (filters.policyType !== undefined) q.where('i.policy_type', filters.policyType);
    if (filters.namespace !== undefined) q.where('i.namespace', filters.namespace);
    if (filters.status !== undefined) q.where('v.status', filters.status);
    return toVariants(await q);
  }

  /** Variants by (policy_id, variant) keys, in one query. */
  async findVariants(keys: ReadonlyArray<{ policyId: string; variant: string }>, trx: Knex = this.db): Promise<VariantRecord[]> {
    if (keys.length === 0) return [];
    const rows = await this.variants(trx).where((q) => {
      for (const k of keys) q.orWhere((w) => w.where({ 'v.policy_id': k.policyId, 'v.variant': k.variant }));
    });
    return toVariants(rows);
  }

  async upsertVariant(id: PolicyIdParts, record: Omit<VariantRecord, 'policyType' | 'namespace' | 'policyKey'>, trx: Knex): Promise<void> {
    await trx('policy_items')
      .insert({
        policy_id: record.policyId,
        policy_type: id.policyType,
        namespace: id.namespace,
        policy_key: id.policyKey,
        created_at: record.updatedAt,
      })
      .onConflict('policy_id')
      .ignore();
    await trx('policy_variants')
      .insert({
        policy_id: record.policyId,
        variant: record.variant,
        schema_version: record.schemaVersion,
        policy_version: record.policyVersion,
        status: record.status,
        content_json: canonicalJson(record.content),
        content_hash: record.contentHash,
        updated_at: record.updatedAt,
        updated_by: record.updatedBy,
      })
      .onConflict(['policy_id', 'variant'])
      .merge(['schema_version', 'policy_version', 'status', 'content_json', 'content_hash', 'updated_at', 'updated_by']);
  }

  async recordValidation(run: { policyId: string; variant: string; errors: string[]; validatedAt: string; validatedBy: string }): Promise<number> {
    const [row] = await this.db('policy_validation_runs')
      .insert({
        policy_id: run.policyId,
        variant: run.variant,
        is_valid: run.errors.length === 0,
        errors_json: JSON.stringify(run.errors),
        validated_at: run.validatedAt,
        validated_by: run.validatedBy,
      })
      .returning('id');
    return insertedId(row);
  }

  async activations(worldId: string, clientProfile: string, trx: Knex = this.db): Promise<ActivationRecord[]> {
    const rows = await trx('policy_activations').where({ world_id: worldId, client_profile: clientProfile }).orderBy('policy_id');
    return rows.map(toActivation);
  }

  /** Moves one pointer and appends its audit event, in the caller's transaction. */
  async setActivation(activation: ActivationRecord, trx: Knex): Promise<number> {
    await trx('policy_activations')
      .insert({
        world_id: activation.worldId,
        client_profile: activation.clientProfile,
        policy_id: activation.policyId,
        variant: activation.variant,
        activated_at: activation.activatedAt,
        activated_by: activation.activatedBy,
        rollback_of_activation_id: activation.rollbackOfActivationId,
      })
      .onConflict(['world_id', 'client_profile', 'policy_id'])
      .merge(['variant', 'activated_at', 'activated_by', 'rollback_of_activation_id']);
    return this.insertAuditEvent(
      {
        eventType: 'activation',
        worldId: activation.worldId,
        clientProfile: activation.clientProfile,
        policyId: activation.policyId,
        variant: activation.variant,
        actor: activation.activatedBy,
        payload: { rollback_of_activation_id: activation.rollbackOfActivationId },
        createdAt: activation.activatedAt,
      },
      trx,
    );
  }

  private async insertAuditEvent(
    event: Omit<AuditEventRecord, 'id'> & { actor: string; payload: unknown; createdAt: string },
    trx: Knex,
  ): Promise<number> {
    const [row] = await trx('policy_audit_events')
      .insert({
        event_type: event.eventType,
        world_id: event.worldId,
        client_profile: event.clientProfile,
        policy_id: event.policyId,
        variant: event.variant,
        actor: event.actor,
        event_payload_json: canonicalJson(event.payload),
        created_at: event.createdAt,
      })
      .returning('id');
    return insertedId(row);
  }

  async auditEvent(id: number): Promise<AuditEventRecord | undefined> {
    const row = await this.db('policy_audit_events').where({ id }).first();
    if (!row) return undefined;
    return {
      id: Number(row.id),
      eventType: row.event_type,
      worldId: row.world_id,
      clientProfile: row.client_profile,
      policyId: row.policy_id,
      variant: row.variant,
    };
  }

  /** Activation events of one exact scope, oldest first (for the replay check). */
  async activationEvents(worldId: string, clientProfile: string, trx: Knex = this.db): Promise<Array<{ policyId: string; variant: string }>> {
    const rows = await trx('policy_audit_events')
      .where({ world_id: worldId, client_profile: clientProfile, event_type: 'activation' })
      .orderBy('id')
      .select('policy_id', 'variant');
    return rows.map((r) => ({ policyId: String(r.policy_id), variant: String(r.variant) }));
  }

  /** Stores a publish run and its audit event; returns the run id. */
  /**
   * Runs `work` while holding the lock named `key` on every instance of the database (a
   * PostgreSQL advisory lock, held by a transaction that `work` itself does not use). SQLite
   * serves one instance, whose callers serialize themselves.
   */
  async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (!isPostgres(this.db)) return work();
    return this.db.transaction(async (trx): Promise<T> => {
      await lockKey(trx, key);
      return work();
    });
  }

  async insertPublishRun(run: Omit<PublishRunRecord, 'id'>): Promise<number> {
    return this.db.transaction(async (trx) => {
      const [row] = await trx('policy_publish_runs')
        .insert({
          world_id: run.worldId,
          client_profile: run.clientProfile,
          actor: run.actor,
          manifest_json: canonicalJson(run.manifest),
          created_at: run.createdAt,
        })
        .returning('id');
      await this.insertAuditEvent(
        {
          eventType: 'publish',
          worldId: run.worldId,
          clientProfile: run.clientProfile,
          policyId: null,
          variant: null,
          actor: run.actor,
          payload: run.manifest,
          createdAt: run.createdAt,
        },
        trx,
      );
      return insertedId(row);
    });
  }

  async publishRun(id: number): Promise<PublishRunRecord | undefined> {
    const row = await this.db('policy_publish_runs').where({ id }).first();
    if (!row) return undefined;
    return {
      id: Number(row.id),
      worldId: row.world_id,
      clientProfile: row.client_profile,
      actor: row.actor,
      manifest: parseJson(row.manifest_json) as Record<string, unknown>,
      createdAt: row.created_at,
    };
  }

  async hasActivations(worldId: string): Promise<boolean> {
    return (await this.db('policy_activations').where({ world_id: worldId }).first('policy_id')) !== undefined;
  }
}
