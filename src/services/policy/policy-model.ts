/**
 * The policy vocabulary, the reference server's: layers, statuses, the policy_id grammar (over
 * the types of src/shared/policy-ids.ts), and the `{detail, code, stage: "policy"}` error every
 * policy failure answers with.
 */
import { POLICY_TYPES, type PolicyIdParts, type PolicyType } from '../../shared/policy-ids.ts';
import { Unprocessable, type DomainError, type DomainErrorKind } from '../../shared/errors.ts';

/** Blocks that Layer 2 policies (descriptor_layer, registry) may reference. */
export const LAYER1_TYPES: readonly PolicyType[] = ['clothing_block', 'image_block', 'location', 'prompt', 'species_block', 'tone_profile'];
export const LAYER2_TYPES: readonly PolicyType[] = ['descriptor_layer', 'registry'];

export const POLICY_STATUSES = ['draft', 'candidate', 'active', 'archived'] as const;

export function policyError(kind: DomainErrorKind, code: string, detail: string, cause?: unknown): DomainError {
  return new kind(detail, { extra: { code, stage: 'policy' }, cause });
}

/** `<policy_type>:<namespace>:<policy_key>`; the key may itself contain colons. */
export function parsePolicyId(policyId: string): PolicyIdParts {
  const first = policyId.indexOf(':');
  const second = first === -1 ? -1 : policyId.indexOf(':', first + 1);
  const parts = second === -1 ? [] : [policyId.slice(0, first), policyId.slice(first + 1, second), policyId.slice(second + 1)].map((p) => p.trim());
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw policyError(Unprocessable, 'POLICY_ID_INVALID', "policy_id must be formatted as 'policy_type:namespace:policy_key'.");
  }
  const [policyType, namespace, policyKey] = parts as [string, string, string];
  if (!(POLICY_TYPES as readonly string[]).includes(policyType)) {
    throw policyError(Unprocessable, 'POLICY_TYPE_UNSUPPORTED', `Unsupported policy_type: ${pyRepr(policyType)}`);
  }
  return { policyType: policyType as PolicyType, namespace, policyKey };
}

/** Python's repr of a string: single quotes unless the text contains one. */
export function pyRepr(text: string): string {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** `<world_id>[:<client_profile>]`; an empty client profile is the world scope. */
export interface Scope {
  worldId: string;
  clientProfile: string;
}

export function parseScope(text: string): Scope {
  const trimmed = text.trim();
  if (trimmed === '') throw policyError(Unprocessable, 'POLICY_SCOPE_INVALID', 'Activation scope must not be empty.');
  const sep = trimmed.indexOf(':');
  const worldId = (sep === -1 ? trimmed : trimmed.slice(0, sep)).trim();
  const clientProfile = sep === -1 ? '' : trimmed.slice(sep + 1).trim();
  if (worldId === '') throw policyError(Unprocessable, 'POLICY_SCOPE_INVALID', 'Scope world_id must not be empty.');
  return { worldId, clientProfile };
}

export function scopeFrom(worldId: string, clientProfile: string | null | undefined): Scope {
  return parseScope(clientProfile === null || clientProfile === undefined ? worldId : `${worldId}:${clientProfile}`);
}
