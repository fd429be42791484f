/**
 * The reference's policy store into this one (the same tables here), row by row, each row
 * checked as this server checks its own writes: a policy id by its grammar with its parts as
 * it names them, a variant's content parsed and validated as an upsert validates it
 * (policy-validation.ts) and hashed as the server hashes it, statuses and audit event types
 * from their lists, text within its column, JSON columns as JSON. A row that fails is skipped
 * with the rule, and so is what depends on it (the activation of a skipped variant).
 *
 * A scope's activation pointers must stay what replaying its activation events gives: past
 * that, PolicyService.activate refuses every activation in the scope. So the pointer of each
 * (scope, policy) and its activation events are taken together: when the pointer this database
 * would have and the last activation event it would have name different variants, neither the
 * reference's pointer nor its events for that policy are imported.
 */
import type { Knex } from 'knex';
import type { PolicyRepository } from '../../db/repositories/policy-repository.ts';
import type { ReferenceImportRepository } from '../../db/repositories/reference-import-repository.ts';
import type { ReferenceDatabase, Row } from '../../integrations/reference-database.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import { POLICY_AUDIT_EVENT_TYPES, type PolicyIdParts } from '../../shared/policy-ids.ts';
import { LAYER2_TYPES, parsePolicyId } from '../policy/policy-model.ts';
import { contentHash } from '../policy/policy-service.ts';
import { validateVariant } from '../policy/policy-validation.ts';
import type { World } from '../worlds/world-loader.ts';
import { jsonRule, textRule } from './reference-rows.ts';

/** How the import counts a row and reports it (reference-import.ts's run). */
export interface Tally {
  count(table: string, outcome: 'imported' | 'existing' | 'skipped', row?: string, reason?: string): void;
}

export interface PolicyImportContext {
  tally: Tally;
  trx: Knex.Transaction;
  repo: ReferenceImportRepository;
  policies: PolicyRepository;
  world: (worldId: unknown) => World | undefined;
}

/** A row that passed its checks, waiting to be written. */
interface Accepted {
  table: string;
  target: string;
  label: string;
  key: Record<string, unknown>;
  row: Record<string, unknown>;
  /** Already in this database (an earlier import, under --merge). */
  existing: boolean;
}

const pick = (r: Row, columns: string[]) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null]));
const first = (...rules: Array<string | undefined>): string | undefined => rules.find((r) => r !== undefined);
const labelOf = (table: string, key: Record<string, unknown>) => `${table} ${Object.values(key).map(String).join(' ')}`;

/** Columns and their lengths (the policy store's migration). */
const POLICY_ID = 255;
const VARIANT = 100;
const ACTOR = 100;
const TIME = 32;
/** A client profile as the API takes one (openapi.yaml, ActivationRequest.client_profile); the column holds more. */
const PROFILE = 64;

function policyIdRule(policyId: unknown): { id: PolicyIdParts } | string {
  const rule = textRule('policy_id', policyId, POLICY_ID);
  if (rule !== undefined) return rule;
  try {
    return { id: parsePolicyId(policyId as string) };
  } catch (err) {
    return `policy_id is invalid: ${(err as Error).message}`;
  }
}

function itemRule(r: Row): string | undefined {
  const parsed = policyIdRule(r.policy_id);
  if (typeof parsed === 'string') return parsed;
  const parts: Record<string, string> = { policy_type: parsed.id.policyType, namespace: parsed.id.namespace, policy_key: parsed.id.policyKey };
  for (const [column, value] of Object.entries(parts)) {
    if (r[column] !== value) return `${column} is not the one its policy_id names ('${value}')`;
  }
  return textRule('namespace', r.namespace, 200) ?? textRule('policy_key', r.policy_key, 200) ?? textRule('created_at', r.created_at, TIME);
}

export async function importPolicyStore(ref: ReferenceDatabase, c: PolicyImportContext): Promise<void> {
  const { tally, trx, repo } = c;
  const accept = async (table: string, target: string, key: Record<string, unknown>, row: Record<string, unknown>): Promise<Accepted> => ({
    table,
    target,
    label: labelOf(table, key),
    key,
    row,
    existing: await repo.exists(target, key, trx),
  });
  const write = async (a: Accepted): Promise<void> => {
    if (a.existing) return tally.count(a.table, 'existing');
    await repo.insertRow(a.target, a.row, trx);
    tally.count(a.table, 'imported');
  };
  const skip = (table: string, key: Record<string, unknown>, reason: string) => tally.count(table, 'skipped', labelOf(table, key), reason);
  const worldRule = (worldId: unknown) => (c.world(worldId) ? undefined : `world '${String(worldId)}' is not loaded here`);

  for (const r of await ref.rows('policy_item')) {
    const key = { policy_id: r.policy_id };
    const why = itemRule(r);
    if (why !== undefined) skip('policy_item', key, why);
    else await write(await accept('policy_item', 'policy_items', key, pick(r, ['policy_id', 'policy_type', 'namespace', 'policy_key', 'created_at'])));
  }

  // Blocks before the layers that reference them, as validation wants them there.
  const layer = (r: Row) => (LAYER2_TYPES as readonly string[]).includes(String(r.policy_id).split(':')[0]!) ? 1 : 0;
  for (const r of (await ref.rows('policy_variant')).sort((a, b) => layer(a) - layer(b))) {
    const key = { policy_id: r.policy_id, variant: r.variant };
    const row = await variantRow(r, c);
    if (typeof row === 'string') skip('policy_variant', key, row);
    else await write(await accept('policy_variant', 'policy_variants', key, row));
  }

  const activations: Accepted[] = [];
  for (const r of await ref.rows('policy_activation')) {
    const key = { world_id: r.world_id, client_profile: r.client_profile, policy_id: r.policy_id };
    const why = first(
      worldRule(r.world_id),
      textRule('client_profile', r.client_profile, PROFILE, { blank: true }),
      textRule('policy_id', r.policy_id, POLICY_ID),
      textRule('variant', r.variant, VARIANT),
      textRule('activated_at', r.activated_at, TIME),
      textRule('activated_by', r.activated_by, ACTOR),
    );
    if (why !== undefined) skip('policy_activation', key, why);
    else if (!(await repo.exists('policy_variants', { policy_id: r.policy_id, variant: r.variant }, trx))) skip('policy_activation', key, `its variant '${String(r.variant)}' was not imported`);
    // The reference's rollback pointer names one of its own audit rows, whose id changes here.
    else activations.push(await accept('policy_activation', 'policy_activations', key, { ...pick(r, ['world_id', 'client_profile', 'policy_id', 'variant', 'activated_at', 'activated_by']), rollback_of_activation_id: null }));
  }

  for (const r of await ref.rows('policy_validation_run')) {
    const key = pick(r, ['policy_id', 'variant', 'validated_at', 'validated_by']);
    const errors = jsonRule('errors_json', r.errors_json, 'list of strings');
    const why = first(
      textRule('policy_id', r.policy_id, POLICY_ID),
      textRule('variant', r.variant, VARIANT),
      textRule('validated_at', r.validated_at, TIME),
      textRule('validated_by', r.validated_by, ACTOR),
      typeof errors === 'string' ? errors : undefined,
    );
    if (why !== undefined) skip('policy_validation_run', key, why);
    else await write(await accept('policy_validation_run', 'policy_validation_runs', key, { ...pick(r, ['policy_id', 'variant', 'errors_json', 'validated_at', 'validated_by']), is_valid: Number(r.is_valid) === 1 }));
  }

  const events: Accepted[] = [];
  for (const r of await ref.rows('policy_audit_event')) {
    const key = pick(r, ['event_type', 'world_id', 'client_profile', 'policy_id', 'variant', 'created_at']);
    const activation = r.event_type === 'activation';
    const payload = jsonRule('event_payload_json', r.event_payload_json, 'object');
    const why =
      r.world_id === null
        ? 'an audit event with no world: audit events here belong to a world'
        : first(
            worldRule(r.world_id),
            (POLICY_AUDIT_EVENT_TYPES as readonly unknown[]).includes(r.event_type) ? undefined : `event_type '${String(r.event_type)}' is none of ${POLICY_AUDIT_EVENT_TYPES.join(', ')}`,
            textRule('client_profile', r.client_profile, PROFILE, { blank: true }),
            // An activation event names what it activated (the replay reads them).
            textRule('policy_id', r.policy_id, POLICY_ID, { nullable: !activation }),
            textRule('variant', r.variant, VARIANT, { nullable: !activation }),
            textRule('actor', r.actor, ACTOR),
            textRule('created_at', r.created_at, TIME),
            typeof payload === 'string' ? payload : undefined,
          );
    if (why !== undefined) skip('policy_audit_event', key, why);
    else events.push(await accept('policy_audit_event', 'policy_audit_events', key, pick(r, ['event_type', 'world_id', 'client_profile', 'policy_id', 'variant', 'actor', 'event_payload_json', 'created_at'])));
  }

  const refused = await disagreeing(activations, events, c);
  for (const a of activations) {
    const why = refused.get(a);
    if (why !== undefined) skip(a.table, a.key, why);
    else await write(a);
  }
  for (const e of events) {
    const why = refused.get(e);
    if (why !== undefined) skip(e.table, e.key, why);
    else await write(e);
  }

  for (const r of await ref.rows('policy_publish_run')) {
    const key = pick(r, ['world_id', 'client_profile', 'actor', 'created_at']);
    const manifest = jsonRule('manifest_json', r.manifest_json, 'object');
    const why = first(
      worldRule(r.world_id),
      textRule('client_profile', r.client_profile, PROFILE, { blank: true }),
      textRule('actor', r.actor, ACTOR),
      textRule('created_at', r.created_at, TIME),
      typeof manifest === 'string' ? manifest : undefined,
    );
    if (why !== undefined) skip('policy_publish_run', key, why);
    else await write(await accept('policy_publish_run', 'policy_publish_runs', key, pick(r, ['world_id', 'client_profile', 'actor', 'manifest_json', 'created_at'])));
  }
}

/** A variant row as this server stores it, or why it cannot be. */
async function variantRow(r: Row, c: PolicyImportContext): Promise<Record<string, unknown> | string> {
  if (!(await c.repo.exists('policy_items', { policy_id: r.policy_id }, c.trx))) return `its policy_item '${String(r.policy_id)}' was not imported`;
  const parsed = policyIdRule(r.policy_id);
  if (typeof parsed === 'string') return parsed;
  const why = first(
    textRule('variant', r.variant, VARIANT),
    textRule('schema_version', r.schema_version, 50),
    textRule('status', r.status, 16),
    textRule('updated_at', r.updated_at, TIME),
    textRule('updated_by', r.updated_by, ACTOR),
    Number.isSafeInteger(r.policy_version) ? undefined : 'policy_version is not a whole number',
  );
  if (why !== undefined) return why;
  const content = jsonRule('content_json', r.content_json, 'object');
  if (typeof content === 'string') return content;
  const draft = { variant: r.variant as string, schemaVersion: r.schema_version as string, policyVersion: r.policy_version as number, status: r.status as string, content: content.value as Record<string, unknown> };
  const errors = await validateVariant(parsed.id, draft, (policyId, variant) => c.repo.exists('policy_variants', { policy_id: policyId, variant }, c.trx));
  if (errors.length > 0) return `this server's policy validation refuses it: ${errors.join('; ')}`;
  const hash = contentHash(r.policy_id as string, draft.variant, draft.content);
  if (r.content_hash !== hash) return `content_hash does not match its content (this server computes ${hash})`;
  // Stored as this server stores content: canonical JSON, the text its hash is computed from.
  return { ...pick(r, ['policy_id', 'variant', 'schema_version', 'policy_version', 'status', 'content_hash', 'updated_at', 'updated_by']), content_json: canonicalJson(draft.content) };
}

/**
 * The activations and activation events to leave out, with why: those of each (scope, policy)
 * whose pointer and last activation event, as this database would have them, disagree.
 */
async function disagreeing(activations: readonly Accepted[], events: readonly Accepted[], c: PolicyImportContext): Promise<Map<Accepted, string>> {
  const units = new Map<string, { worldId: string; profile: string; policyId: string; activation?: Accepted; events: Accepted[] }>();
  const unitOf = (a: Accepted) => {
    const [worldId, profile, policyId] = [String(a.row.world_id), String(a.row.client_profile), String(a.row.policy_id)];
    const key = `${worldId}\u0000${profile}\u0000${policyId}`;
    let unit = units.get(key);
    if (!unit) units.set(key, (unit = { worldId, profile, policyId, events: [] }));
    return unit;
  };
  for (const a of activations) unitOf(a).activation = a;
  for (const e of events) if (e.row.event_type === 'activation') unitOf(e).events.push(e);

  // Each scope's pointers and replayed history as they are here, read once.
  const scopes = new Map<string, { pointers: Map<string, string>; history: Map<string, string> }>();
  const refused = new Map<Accepted, string>();
  for (const unit of units.values()) {
    const scopeKey = `${unit.worldId}\u0000${unit.profile}`;
    let here = scopes.get(scopeKey);
    if (!here) {
      const pointers = new Map((await c.policies.activations(unit.worldId, unit.profile, c.trx)).map((a) => [a.policyId, a.variant]));
      const history = new Map<string, string>();
      for (const e of await c.policies.activationEvents(unit.worldId, unit.profile, c.trx)) history.set(e.policyId, e.variant);
      scopes.set(scopeKey, (here = { pointers, history }));
    }
    const added = unit.events.filter((e) => !e.existing);
    const pointer = here.pointers.get(unit.policyId) ?? (unit.activation ? String(unit.activation.row.variant) : undefined);
    const last = added.length > 0 ? String(added.at(-1)!.row.variant) : here.history.get(unit.policyId);
    if (pointer === last) continue;
    const scope = unit.profile === '' ? unit.worldId : `${unit.worldId}:${unit.profile}`;
    const why = `its pointer would name variant '${pointer ?? 'none'}' while the activation history of ${scope} ends with '${last ?? 'none'}' for this policy: this server refuses every activation in a scope whose pointers and history disagree`;
    if (unit.activation && !unit.activation.existing) refused.set(unit.activation, why);
    for (const e of added) refused.set(e, why);
  }
  return refused;
}
