/**
 * Validation of a policy variant, shared by validate, upsert and import. Returns every problem,
 * in the reference server's order and wording.
 */
import { canonicalPieces, PyFloat } from '../../shared/canonical-json.ts';
import type { PolicyIdParts } from '../../shared/policy-ids.ts';
import { LAYER1_TYPES, POLICY_STATUSES, parsePolicyId, pyRepr } from './policy-model.ts';

/**
 * Bounds of a variant's content. Publish writes it indented by two spaces per level, so deep
 * nesting multiplies its size (a 9 KB chain of 1500 objects became a 4.6 MB artifact); 32 levels
 * (the shipped policies use 8) and 256 KiB of canonical JSON keep a variant's part of an
 * artifact within about 25 times its canonical size. Constants, not settings: content valid on one server must import on
 * another.
 */
export const MAX_CONTENT_DEPTH = 32;
export const MAX_CONTENT_BYTES = 256 * 1024;

export interface VariantDraft {
  variant: string;
  schemaVersion: string;
  policyVersion: number;
  status: string;
  content: Record<string, unknown>;
}

/** Whether a (policy_id, variant) row exists: Layer 2 references must point at real blocks. */
export type VariantExists = (policyId: string, variant: string) => Promise<boolean>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonBlank = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

const TEXT_TYPES = ['species_block', 'clothing_block', 'image_block', 'location', 'prompt'] as const;

/** Levels of arrays and objects in `value` (the outermost is 1), counted no further than `limit + 1`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  // An explicit stack: content too deep for recursion must still be measured.
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    if (item === null || typeof item !== 'object' || item instanceof PyFloat) continue;
    deepest = Math.max(deepest, level);
    if (deepest > limit) return deepest;
    for (const child of Object.values(item)) stack.push([child, level + 1]);
  }
  return deepest;
}

function checkContentBounds(content: Record<string, unknown>, errors: string[]): void {
  if (nestingDepth(content, MAX_CONTENT_DEPTH) > MAX_CONTENT_DEPTH) {
    errors.push(`content must not be nested more than ${MAX_CONTENT_DEPTH} levels deep`);
    return;
  }
  let bytes = 0;
  for (const piece of canonicalPieces(content, false)) {
    bytes += Buffer.byteLength(piece);
    if (bytes > MAX_CONTENT_BYTES) {
      errors.push(`content must not be larger than ${MAX_CONTENT_BYTES} bytes as canonical JSON`);
      return;
    }
  }
}

function checkSlotKinds(content: Record<string, unknown>, errors: string[]): void {
  const kinds = content.slot_kinds;
  if (kinds === undefined) return;
  if (!Array.isArray(kinds)) errors.push('content.slot_kinds must be a list of strings when present');
  else if (kinds.length === 0) errors.push('content.slot_kinds must not be empty when present');
  else {
    const bad = kinds.findIndex((k) => !nonBlank(k));
    if (bad !== -1) errors.push(`content.slot_kinds[${bad}] must be a non-empty string`);
  }
}

async function checkReferences(content: Record<string, unknown>, exists: VariantExists, errors: string[]): Promise<void> {
  const refs = content.references;
  if (!Array.isArray(refs) || refs.length === 0) {
    errors.push('Layer 2 content.references must be a non-empty list.');
    return;
  }
  const layer1 = `[${[...LAYER1_TYPES].sort().map((t) => `'${t}'`).join(', ')}]`;
  for (const [i, ref] of refs.entries()) {
    const prefix = `content.references[${i}]`;
    if (!isObject(ref)) {
      errors.push(`${prefix} must be an object with policy_id and variant.`);
      continue;
    }
    if (!nonBlank(ref.policy_id)) {
      errors.push(`${prefix}.policy_id must be a non-empty string.`);
      continue;
    }
    if (!nonBlank(ref.variant)) {
      errors.push(`${prefix}.variant must be a non-empty string.`);
      continue;
    }
    let parts: PolicyIdParts;
    try {
      parts = parsePolicyId(ref.policy_id);
    } catch (err) {
      errors.push(`${prefix}.policy_id is invalid: ${(err as Error).message}`);
      continue;
    }
    if (!LAYER1_TYPES.includes(parts.policyType)) {
      errors.push(`${prefix}.policy_id must reference a Layer 1 policy type ${layer1}; got ${pyRepr(parts.policyType)}.`);
      continue;
    }
    if (!(await exists(ref.policy_id, ref.variant))) {
      errors.push(`${prefix} references missing Layer 1 variant: ${ref.policy_id}:${ref.variant}`);
    }
  }
}

export async function validateVariant(id: PolicyIdParts, draft: VariantDraft, exists: VariantExists): Promise<string[]> {
  const errors: string[] = [];
  if (draft.variant.trim() === '') errors.push('variant must not be empty');
  if (draft.schemaVersion.trim() === '') errors.push('schema_version must not be empty');
  if (draft.policyVersion < 1) errors.push('policy_version must be >= 1');
  if (!(POLICY_STATUSES as readonly string[]).includes(draft.status)) errors.push(`status must be one of: ${POLICY_STATUSES.join(', ')}`);

  const { content } = draft;
  checkContentBounds(content, errors);
  checkSlotKinds(content, errors);
  const type = id.policyType;
  if (type === 'species_block' && id.namespace !== 'image.blocks.species') {
    errors.push("species_block namespace must be exactly 'image.blocks.species'.");
  }
  if ((TEXT_TYPES as readonly string[]).includes(type) && !nonBlank(content.text)) {
    errors.push(`${type} content.text must be a non-empty string`);
  }
  if (type === 'tone_profile' && !nonBlank(content.prompt_block)) {
    errors.push('tone_profile content.prompt_block must be a non-empty string');
  }
  if (type === 'axis_bundle') {
    for (const key of ['axes', 'thresholds', 'resolution']) {
      const value = content[key];
      if (!isObject(value) || Object.keys(value).length === 0) errors.push(`axis_bundle content.${key} must be a non-empty object`);
    }
  }
  if (type === 'manifest_bundle' && (!isObject(content.manifest) || Object.keys(content.manifest).length === 0)) {
    errors.push('manifest_bundle content.manifest must be a non-empty object');
  }
  if (type === 'descriptor_layer' || type === 'registry') {
    await checkReferences(content, exists, errors);
    if (type === 'descriptor_layer' && !nonBlank(content.text)) errors.push('descriptor_layer content.text must be a non-empty string');
  }
  return errors;
}

/** The `slot_kinds` of a response: authored kinds (trimmed, de-duplicated), else the namespace. */
export function slotKinds(content: Record<string, unknown>, namespace: string): string[] {
  if (Array.isArray(content.slot_kinds)) {
    const kinds = [...new Set(content.slot_kinds.filter((k): k is string => typeof k === 'string').map((k) => k.trim()).filter((k) => k !== ''))];
    if (kinds.length > 0) return kinds;
  }
  return namespace.trim() ? [namespace] : [];
}
