/**
 * Import of a publish artifact, as the reference server imports one: integrity checks on the
 * envelope, then each variant in dependency order (blocks before the layers that reference
 * them), each row succeeding or failing on its own, then optional activation of everything that
 * landed.
 */
import type { PolicyRepository } from '../../db/repositories/policy-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, Unprocessable, type DomainError } from '../../shared/errors.ts';
import { canonicalJson } from '../../shared/canonical-json.ts';
import type { PolicyIdParts } from '../../shared/policy-ids.ts';
import { parsePolicyId, policyError, scopeFrom } from './policy-model.ts';
import type { PolicyService } from './policy-service.ts';
import { artifactHash, variantsHash } from './publish-service.ts';

type Schemas = components['schemas'];
type ImportResult = Schemas['PolicyImportResult'];
type Entry = ImportResult['entries'][number];

const TYPE_PRIORITY: Record<string, number> = {
  image_block: 10,
  species_block: 20,
  clothing_block: 30,
  prompt: 40,
  tone_profile: 50,
  axis_bundle: 60,
  manifest_bundle: 70,
  descriptor_layer: 80,
  registry: 90,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonBlank = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const invalid = (detail: string): DomainError => policyError(Unprocessable, 'POLICY_IMPORT_ARTIFACT_INVALID', detail);

interface Row {
  policyId: string;
  id: PolicyIdParts;
  variant: string;
  schemaVersion: string;
  policyVersion: number;
  status: string;
  content: Record<string, unknown>;
  updatedAt?: string;
}

/** Checks one artifact row; returns the row or the reason it cannot be imported. */
function readRow(raw: Record<string, unknown>, prefix: string): Row | string {
  const policyId = typeof raw.policy_id === 'string' ? raw.policy_id.trim() : '';
  if (!policyId) return `${prefix}.policy_id must be a non-empty string.`;
  const variant = typeof raw.variant === 'string' ? raw.variant.trim() : '';
  if (!variant) return `${prefix}.variant must be a non-empty string.`;
  let id: PolicyIdParts;
  try {
    id = parsePolicyId(policyId);
  } catch (err) {
    return `${prefix}.policy_id is invalid: ${(err as Error).message}`;
  }
  const derived: Record<string, string> = { policy_type: id.policyType, namespace: id.namespace, policy_key: id.policyKey };
  for (const [field, value] of Object.entries(derived)) {
    if (raw[field] !== undefined && raw[field] !== value) return `${prefix}.${field} must match policy_id-derived value '${value}'.`;
  }
  if (!nonBlank(raw.schema_version)) return `${prefix}.schema_version must be a non-empty string.`;
  if (!nonBlank(raw.status)) return `${prefix}.status must be a non-empty string.`;
  const version = raw.policy_version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) return `${prefix}.policy_version must be an integer >= 1.`;
  if (!isObject(raw.content)) return `${prefix}.content must be an object.`;
  return {
    policyId,
    id,
    variant,
    schemaVersion: raw.schema_version,
    policyVersion: version,
    status: raw.status,
    content: raw.content,
    updatedAt: nonBlank(raw.updated_at) ? raw.updated_at : undefined,
  };
}

/** A hash the artifact carries must equal the one calculated; returns it ('' when absent). */
function checkedHash(artifact: Record<string, unknown>, field: 'artifact_hash' | 'variants_hash', calculated: string): string {
  const provided = typeof artifact[field] === 'string' ? (artifact[field] as string).trim() : '';
  if (provided && provided !== calculated) {
    throw policyError(
      Conflict,
      'POLICY_IMPORT_ARTIFACT_HASH_MISMATCH',
      `Artifact integrity check failed: ${field} mismatch (provided='${provided}', calculated='${calculated}').`,
    );
  }
  return provided;
}

export class ImportService {
  private readonly repo: PolicyRepository;
  private readonly policies: PolicyService;

  constructor(repo: PolicyRepository, policies: PolicyService) {
    this.repo = repo;
    this.policies = policies;
  }

  /** `worldOverride` imports the artifact into another world (the CLI's --world). */
  async importArtifact(artifact: Record<string, unknown>, activate: boolean, actor: string, worldOverride?: string): Promise<ImportResult> {
    const calculated = await artifactHash(artifact);
    const provided = checkedHash(artifact, 'artifact_hash', calculated);
    const worldId = worldOverride ?? artifact.world_id;
    if (!nonBlank(worldId)) throw invalid('Artifact field world_id must be a non-empty string.');
    const profile = artifact.client_profile;
    if (profile !== undefined && profile !== null && typeof profile !== 'string') throw invalid('Artifact field client_profile must be a string or null.');
    const scope = scopeFrom(worldId, profile?.trim() ? profile : null);
    await this.policies.assertWorld(scope.worldId);
    const variants = artifact.variants;
    if (!Array.isArray(variants)) throw invalid('Artifact field variants must be a list.');
    if (!variants.every(isObject)) throw invalid('Artifact field variants must contain only object entries.');
    const computedVariantsHash = await variantsHash(variants);
    const providedVariantsHash = checkedHash(artifact, 'variants_hash', computedVariantsHash);

    const counts = { imported: 0, updated: 0, skipped: 0, errors: 0, activated: 0, activationSkipped: 0 };
    const entries: Entry[] = [];
    const targets = new Map<string, string>();
    const priority = (v: Record<string, unknown>): number => TYPE_PRIORITY[String(v.policy_id ?? '').split(':')[0] ?? ''] ?? 99;
    const ordered = variants.map((raw, index) => ({ raw, index })).sort((a, b) => priority(a.raw) - priority(b.raw) || a.index - b.index);

    for (const { raw, index } of ordered) {
      const row = readRow(raw, `variants[${index}]`);
      if (typeof row === 'string') {
        counts.errors += 1;
        entries.push({ policy_id: nonBlank(raw.policy_id) ? raw.policy_id : null, variant: nonBlank(raw.variant) ? raw.variant : null, action: 'error', detail: row });
        continue;
      }
      const label = `${row.policyId}:${row.variant}`;
      const existing = await this.repo.findVariant(row.policyId, row.variant);
      if (
        existing &&
        existing.schemaVersion === row.schemaVersion &&
        existing.policyVersion === row.policyVersion &&
        existing.status === row.status &&
        canonicalJson(existing.content) === canonicalJson(row.content)
      ) {
        counts.skipped += 1;
        entries.push({ policy_id: row.policyId, variant: row.variant, action: 'skipped', detail: `unchanged ${label}` });
        targets.set(row.policyId, row.variant);
        continue;
      }
      try {
        await this.policies.upsert(row.policyId, row, actor, { updatedAt: row.updatedAt });
        const action = existing ? 'updated' : 'imported';
        counts[action] += 1;
        entries.push({ policy_id: row.policyId, variant: row.variant, action, detail: `${action} ${label}` });
        targets.set(row.policyId, row.variant);
      } catch (err) {
        counts.errors += 1;
        entries.push({ policy_id: row.policyId, variant: row.variant, action: 'error', detail: (err as Error).message });
      }
    }

    if (activate) {
      const pointers = new Map((await this.repo.activations(scope.worldId, scope.clientProfile)).map((a) => [a.policyId, a.variant]));
      for (const policyId of [...targets.keys()].sort()) {
        const variant = targets.get(policyId)!;
        if (pointers.get(policyId) === variant) {
          counts.activationSkipped += 1;
          continue;
        }
        try {
          await this.policies.activate({ worldId: scope.worldId, clientProfile: scope.clientProfile, policyId, variant }, actor);
          counts.activated += 1;
        } catch (err) {
          counts.errors += 1;
          entries.push({ policy_id: policyId, variant, action: 'error', detail: `activation failed: ${(err as Error).message}` });
        }
      }
    }

    return {
      world_id: scope.worldId,
      client_profile: scope.clientProfile || null,
      activate,
      item_count: variants.length,
      imported_count: counts.imported,
      updated_count: counts.updated,
      skipped_count: counts.skipped,
      error_count: counts.errors,
      activated_count: counts.activated,
      activation_skipped_count: counts.activationSkipped,
      manifest_hash: typeof artifact.manifest_hash === 'string' ? artifact.manifest_hash.trim() : '',
      items_hash: typeof artifact.items_hash === 'string' ? artifact.items_hash.trim() : '',
      artifact_hash: provided || calculated,
      variants_hash: providedVariantsHash || computedVariantsHash,
      entries,
    };
  }
}
