/**
 * Policy variants and activation pointers, with the reference server's rules and answers:
 * validate, upsert, read, activate per world/client scope with an audit trail, the effective
 * overlay, and rollback.
 */
import type { Clock } from '../../db/clock.ts';
import { lockKey } from '../../db/database.ts';
import type { ActivationRecord, PolicyRepository, VariantRecord } from '../../db/repositories/policy-repository.ts';
import type { WorldRepository } from '../../db/repositories/world-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, Failure, NotFound, Unprocessable } from '../../shared/errors.ts';
import { payloadHash } from '../../shared/canonical-json.ts';
import { POLICY_TYPES } from '../../shared/policy-ids.ts';
import { parsePolicyId, policyError, POLICY_STATUSES, pyRepr, scopeFrom, parseScope, type Scope } from './policy-model.ts';
import { slotKinds, validateVariant, type VariantDraft } from './policy-validation.ts';

type Schemas = components['schemas'];
export type PolicyObject = Schemas['PolicyObject'];
export type ActivationEntry = Schemas['PolicyActivation'];

/** A variant's identity and version fields, as manifests list them. */
export function toManifestItem(v: VariantRecord): Schemas['PublishManifestItem'] {
  return {
    policy_id: v.policyId,
    policy_type: v.policyType,
    namespace: v.namespace,
    policy_key: v.policyKey,
    variant: v.variant,
    schema_version: v.schemaVersion,
    policy_version: v.policyVersion,
    status: v.status,
    content_hash: v.contentHash,
    updated_at: v.updatedAt,
  };
}

/** Fields in the reference's order: identity, content, then hash and update stamps. */
export function toPolicyObject(v: VariantRecord): PolicyObject {
  const { content_hash, updated_at, ...identity } = toManifestItem(v);
  return {
    ...identity,
    policy_type: v.policyType,
    status: v.status as PolicyObject['status'],
    content: v.content,
    content_hash,
    updated_at,
    updated_by: v.updatedBy,
    slot_kinds: slotKinds(v.content, v.namespace),
  };
}

export function contentHash(policyId: string, variant: string, content: unknown): string {
  return payloadHash({ policy_id: policyId, variant, content });
}

function toActivationEntry(a: ActivationRecord, auditEventId: number | null): ActivationEntry {
  return {
    world_id: a.worldId,
    client_profile: a.clientProfile === '' ? null : a.clientProfile,
    policy_id: a.policyId,
    variant: a.variant,
    activated_at: a.activatedAt,
    activated_by: a.activatedBy,
    rollback_of_activation_id: a.rollbackOfActivationId,
    audit_event_id: auditEventId,
  };
}

export interface ActivationRequest {
  worldId: string;
  clientProfile?: string | null;
  policyId: string;
  variant: string;
  rollbackOfActivationId?: number | null;
}

export interface UpsertOptions {
  /** Import keeps the artifact's timestamps so a round trip reproduces the same hashes. */
  updatedAt?: string;
}

export class PolicyService {
  private readonly repo: PolicyRepository;
  private readonly worlds: WorldRepository;
  private readonly clock: Clock;

  constructor(repo: PolicyRepository, worlds: WorldRepository, clock: Clock) {
    this.repo = repo;
    this.worlds = worlds;
    this.clock = clock;
  }

  now(): string {
    return this.clock().toISOString();
  }

  capabilities(role: 'admin' | 'superuser'): Schemas['PolicyCapabilities'] {
    return { authorized: true, role, allowed_policy_types: [...POLICY_TYPES], allowed_statuses: [...POLICY_STATUSES].sort() };
  }

  async list(filters: { policyType?: string; namespace?: string; status?: string }): Promise<PolicyObject[]> {
    return (await this.repo.listVariants(filters)).map(toPolicyObject);
  }

  async get(policyId: string, variant?: string): Promise<PolicyObject> {
    parsePolicyId(policyId);
    const found = variant === undefined ? await this.repo.latestVariant(policyId) : await this.repo.findVariant(policyId, variant);
    if (!found) {
      throw policyError(NotFound, 'POLICY_NOT_FOUND', `Policy not found for id=${pyRepr(policyId)} variant=${variant === undefined ? 'None' : pyRepr(variant)}.`);
    }
    return toPolicyObject(found);
  }

  /** Validates and records the run; never throws for an invalid variant (only for a bad id). */
  async validate(policyId: string, draft: VariantDraft, actor: string): Promise<Schemas['PolicyValidation']> {
    const id = parsePolicyId(policyId);
    const errors = await validateVariant(id, draft, (p, v) => this.repo.variantExists(p, v));
    const validatedAt = this.now();
    const runId = await this.repo.recordValidation({ policyId, variant: draft.variant, errors, validatedAt, validatedBy: actor });
    return {
      policy_id: policyId,
      variant: draft.variant,
      is_valid: errors.length === 0,
      errors,
      content_hash: contentHash(policyId, draft.variant, draft.content),
      validated_at: validatedAt,
      validated_by: actor,
      validation_run_id: runId,
    };
  }

  async upsert(policyId: string, draft: VariantDraft, actor: string, options: UpsertOptions = {}): Promise<PolicyObject> {
    const id = parsePolicyId(policyId);
    const validation = await this.validate(policyId, draft, actor);
    if (!validation.is_valid) throw policyError(Unprocessable, 'POLICY_VALIDATION_ERROR', validation.errors.join('; '));
    const record = {
      policyId,
      variant: draft.variant,
      schemaVersion: draft.schemaVersion,
      policyVersion: draft.policyVersion,
      status: draft.status,
      content: draft.content,
      contentHash: validation.content_hash,
      updatedAt: options.updatedAt ?? validation.validated_at,
      updatedBy: actor,
    };
    const stored = await this.repo.transaction(async (trx) => {
      await this.repo.upsertVariant(id, record, trx);
      return this.repo.findVariant(policyId, draft.variant, trx);
    });
    return toPolicyObject(stored!);
  }

  async assertWorld(worldId: string): Promise<void> {
    if (!(await this.worlds.exists(worldId))) throw policyError(NotFound, 'POLICY_WORLD_NOT_FOUND', `World ${pyRepr(worldId)} not found.`);
  }

  async activate(req: ActivationRequest, actor: string): Promise<ActivationEntry> {
    const scope = scopeFrom(req.worldId, req.clientProfile);
    await this.assertWorld(scope.worldId);
    parsePolicyId(req.policyId);
    let variant = req.variant;
    const rollbackOf = req.rollbackOfActivationId ?? null;
    if (rollbackOf !== null) {
      const event = await this.repo.auditEvent(rollbackOf);
      if (!event || event.eventType !== 'activation') {
        throw policyError(NotFound, 'POLICY_ROLLBACK_EVENT_NOT_FOUND', `Rollback activation event not found: ${rollbackOf}`);
      }
      if (event.policyId !== req.policyId) {
        throw policyError(Conflict, 'POLICY_ROLLBACK_POLICY_MISMATCH', `Rollback activation event ${rollbackOf} is for policy_id '${event.policyId}', not '${req.policyId}'.`);
      }
      if (event.worldId !== scope.worldId || event.clientProfile !== scope.clientProfile) {
        throw policyError(
          Conflict,
          'POLICY_ROLLBACK_SCOPE_MISMATCH',
          `Rollback activation event ${rollbackOf} belongs to scope ${event.worldId}:${event.clientProfile}, not ${scope.worldId}:${scope.clientProfile}.`,
        );
      }
      // A rollback re-activates what that event activated, whatever variant was asked for.
      variant = event.variant!;
    }
    if (!(await this.repo.variantExists(req.policyId, variant))) {
      throw policyError(
        Unprocessable,
        'POLICY_ACTIVATION_ERROR',
        `Cannot activate a missing policy variant: world_id=${pyRepr(scope.worldId)}, client_profile=${pyRepr(scope.clientProfile)}, policy_id=${pyRepr(req.policyId)}, variant=${pyRepr(variant)}`,
      );
    }
    const activation: ActivationRecord = {
      worldId: scope.worldId,
      clientProfile: scope.clientProfile,
      policyId: req.policyId,
      variant,
      activatedAt: this.now(),
      activatedBy: actor,
      rollbackOfActivationId: rollbackOf,
    };
    const auditEventId = await this.repo.transaction(async (trx) => {
      await lockKey(trx, `policy-scope:${scope.worldId}:${scope.clientProfile}`);
      const id = await this.repo.setActivation(activation, trx);
      await this.assertReplayMatches(scope, trx);
      return id;
    });
    return toActivationEntry(activation, auditEventId);
  }

  /** Every pointer must be what replaying the scope's activation events gives: no pointer changes without its audit event. */
  private async assertReplayMatches(scope: Scope, trx: Parameters<Parameters<PolicyRepository['transaction']>[0]>[0]): Promise<void> {
    const replayed = new Map<string, string>();
    for (const e of await this.repo.activationEvents(scope.worldId, scope.clientProfile, trx)) replayed.set(e.policyId, e.variant);
    const pointers = await this.repo.activations(scope.worldId, scope.clientProfile, trx);
    const same = pointers.length === replayed.size && pointers.every((p) => replayed.get(p.policyId) === p.variant);
    if (!same) {
      throw policyError(
        Failure,
        'POLICY_ACTIVATION_REPLAY_MISMATCH',
        `Activation pointer state does not match replayed activation events for scope ${scope.worldId}:${scope.clientProfile}.`,
      );
    }
  }

  /** World pointers overlaid by the client profile's own pointers, sorted by policy_id. */
  async effectiveActivations(scope: Scope): Promise<ActivationRecord[]> {
    const world = await this.repo.activations(scope.worldId, '');
    if (scope.clientProfile === '') return world;
    const merged = new Map(world.map((a) => [a.policyId, a]));
    for (const a of await this.repo.activations(scope.worldId, scope.clientProfile)) merged.set(a.policyId, a);
    return [...merged.values()].sort((a, b) => (a.policyId < b.policyId ? -1 : a.policyId > b.policyId ? 1 : 0));
  }

  async listActivations(scopeText: string, effective: boolean): Promise<Schemas['PolicyActivationList']> {
    const scope = parseScope(scopeText);
    await this.assertWorld(scope.worldId);
    const rows = effective ? await this.effectiveActivations(scope) : await this.repo.activations(scope.worldId, scope.clientProfile);
    return {
      world_id: scope.worldId,
      client_profile: scope.clientProfile === '' ? null : scope.clientProfile,
      items: rows.map((a) => toActivationEntry(a, null)),
    };
  }

  /** The effectively activated variant of one policy, or null when none is activated. */
  async effectiveVariant(scope: Scope, policyId: string): Promise<VariantRecord | null> {
    const pointer = (await this.effectiveActivations(scope)).find((a) => a.policyId === policyId);
    if (!pointer) return null;
    const variant = await this.repo.findVariant(pointer.policyId, pointer.variant);
    if (!variant) {
      throw policyError(Conflict, 'POLICY_EFFECTIVE_REFERENCE_MISSING', `Effective activation points to missing policy variant: ${policyId}:${pointer.variant}`);
    }
    return variant;
  }

  /** The variant rows behind the effective pointers; a dangling pointer is a 409 with `code`. */
  async effectiveVariants(scope: Scope, code: string, describe: (a: ActivationRecord) => string): Promise<VariantRecord[]> {
    const pointers = await this.effectiveActivations(scope);
    const rows = await this.repo.findVariants(pointers.map((p) => ({ policyId: p.policyId, variant: p.variant })));
    const byKey = new Map(rows.map((r) => [`${r.policyId}\u0000${r.variant}`, r]));
    return pointers.map((p) => {
      const row = byKey.get(`${p.policyId}\u0000${p.variant}`);
      if (!row) throw policyError(Conflict, code, describe(p));
      return row;
    });
  }
}
