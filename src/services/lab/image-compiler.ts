/**
 * Image-prompt compilation and the effective image policy bundle, step for step as the reference
 * server computes them, so prompts and hashes match its (where the answers differ:
 * docs/decisions.md, "Lab and the language-model runtime"). Pure: the caller hands in the
 * world's effective variant rows and a variant lookup; nothing here touches HTTP or the
 * database. Policy data it cannot use is a Conflict; an image bundle without a manifest is a
 * NotFound. Both answer a plain `{"detail": …}`.
 */
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, NotFound } from '../../shared/errors.ts';
import { formatFloat, payloadHash, PyFloat } from '../../shared/canonical-json.ts';
import { parsePolicyId, pyRepr } from '../policy/policy-model.ts';

type Json = Record<string, unknown>;
export type CompiledImagePrompt = components['schemas']['CompiledImagePrompt'];
export type ImagePolicyBundle = components['schemas']['ImagePolicyBundle'];

export interface PolicyRow {
  policyId: string;
  variant: string;
  content: Record<string, unknown>;
}

export interface CompileRequest {
  species: string;
  gender: string;
  axes: Record<string, { label: string; score: number }>;
  worldContext: string[];
  occupationSignals: string[];
  modelId?: string | null;
  aspectRatio?: string | null;
  seed?: number | null;
}

export interface PolicySource {
  worldId: string;
  /** Variant rows of every effective activation of the world scope (client profile ''). */
  effectiveRows: PolicyRow[];
  /** Any stored variant (policy_ref targets need not be activated); null when missing. */
  fetchVariant(policyId: string, variant: string): Promise<PolicyRow | null>;
}

export const DEFAULT_IMAGE_MODEL = 'flux-2-klein-4b';
export const DEFAULT_ASPECT_RATIO = '1:1';
export const SPECIES_REGISTRY_ID = 'registry:image.registries:species_registry';
export const CLOTHING_REGISTRY_ID = 'registry:image.registries:clothing_registry';

// ---------------------------------------------------------------------------------------------
// Small helpers mirroring Python semantics

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
const isBlank = (v: unknown): boolean => typeof v !== 'string' || v.trim() === '';

/** Python's `str(value)` for JSON values. */
function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  return pyReprValue(value);
}

/** Python's `repr(value)` for JSON values (dicts keep insertion order). */
function pyReprValue(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value instanceof PyFloat) return formatFloat(value.value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : formatFloat(value);
  if (typeof value === 'string') return pyRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyReprValue).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Json)
      .map(([k, v]) => `${pyRepr(k)}: ${pyReprValue(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const stringifiedOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : pyStr(v));

/** A Python int (not a float, not a bool). */
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function priorityOf(entry: Json): number {
  const raw = entry.render_priority;
  if (isInt(raw)) return raw;
  if (raw instanceof PyFloat) return Math.trunc(raw.value);
  if (typeof raw === 'number' && Number.isFinite(raw)) return Math.trunc(raw);
  if (typeof raw === 'string' && /^\s*[-+]?\d+\s*$/.test(raw)) return Number(raw);
  return 0;
}

const compareStr = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const scopeText = (worldId: string): string => `(world_id='${worldId}', client_profile='')`;
const getPath = (obj: unknown, ...keys: string[]): unknown => {
  let cur: unknown = obj;
  for (const key of keys) {
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
};

export function manifestPolicyIdFor(worldId: string): string {
  return `manifest_bundle:world.manifests:${worldId}`;
}

function findManifestRow(source: PolicySource): PolicyRow | undefined {
  const id = manifestPolicyIdFor(source.worldId);
  return source.effectiveRows.find((r) => r.policyId === id);
}

/** The preferred policy id, `<type>:<namespace>:<key>`, from the manifest node's id (an int `_v<version>` suffix stripped). */
function hintFor(manifest: Json, node: 'descriptor_layer' | 'tone_profile'): { hint: string | null; rawId: string | null } {
  const spec = getPath(manifest, 'image', node);
  if (!isObject(spec) || isBlank(spec.id)) return { hint: null, rawId: null };
  const rawId = spec.id as string;
  let key = rawId.trim();
  const version = spec.version;
  if (isInt(version) && version >= 1 && key.endsWith(`_v${version}`)) key = key.slice(0, -`_v${version}`.length);
  const prefix = node === 'descriptor_layer' ? 'descriptor_layer:image.descriptors:' : 'tone_profile:image.tone_profiles:';
  return { hint: `${prefix}${key}`, rawId };
}

type Selection = { row: PolicyRow } | { error: 'preferred' | 'none' | 'ambiguous'; count: number };

function selectRow(rows: PolicyRow[], policyType: string, preferred: string | null): Selection {
  const candidates = rows.filter((r) => r.policyId.startsWith(`${policyType}:`));
  if (preferred !== null) {
    const row = candidates.find((r) => r.policyId === preferred);
    return row ? { row } : { error: 'preferred', count: candidates.length };
  }
  if (candidates.length === 1) return { row: candidates[0]! };
  return { error: candidates.length === 0 ? 'none' : 'ambiguous', count: candidates.length };
}

// ---------------------------------------------------------------------------------------------
// Compile (POST /api/lab/compile-image-prompt)

function selectForCompile(source: PolicySource, policyType: string, preferred: string | null): PolicyRow {
  const sel = selectRow(source.effectiveRows, policyType, preferred);
  if ('row' in sel) return sel.row;
  const scope = scopeText(source.worldId);
  if (sel.error === 'preferred') throw new Conflict(`Preferred active ${policyType} policy is not activated for scope ${scope}: ${preferred}.`);
  throw new Conflict(`Expected exactly one active ${policyType} policy for scope ${scope}; found ${sel.count}.`);
}

const genderCompatible = (entry: Json, gender: string): boolean =>
  !Array.isArray(entry.compatible_genders) || entry.compatible_genders.length === 0 || entry.compatible_genders.includes(gender);

const isActive = (entry: Json): boolean => entry.status !== null && entry.status !== undefined && pyStr(entry.status).toLowerCase() === 'active';

function speciesMatches(entry: Json, species: string, gender: string): boolean {
  if (!isActive(entry) || entry.block_type !== 'species') return false;
  if (Array.isArray(entry.compatible_species) && entry.compatible_species.length > 0 && !entry.compatible_species.includes(species)) return false;
  if (!genderCompatible(entry, gender)) return false;
  const speciesAny = getPath(entry, 'selection_rules', 'when', 'species_any');
  if (speciesAny === undefined || speciesAny === null) return true;
  return Array.isArray(speciesAny) && speciesAny.includes(species);
}

/** The clothing entry's rule verdict: null when it does not match, else whether it is a fallback. */
function clothingMatch(entry: Json, gender: string, request: CompileRequest): { fallback: boolean } | null {
  if (!isActive(entry) || entry.block_type !== 'clothing_fragment' || !genderCompatible(entry, gender)) return null;
  const when = getPath(entry, 'selection_rules', 'when');
  if (!isObject(when)) return { fallback: false };
  const fallback = truthy(when.fallback);
  const axisLabels = when.axis_labels;
  if (isObject(axisLabels) && axisLabels.wealth_any !== undefined && axisLabels.wealth_any !== null) {
    const label = request.axes.wealth?.label ?? null;
    if (!Array.isArray(axisLabels.wealth_any) || !axisLabels.wealth_any.includes(label)) return null;
  }
  const intersects = (rule: unknown, values: string[]): boolean => Array.isArray(rule) && rule.some((v) => values.includes(v as string));
  if (when.world_context_any !== undefined && when.world_context_any !== null && !intersects(when.world_context_any, request.worldContext)) return null;
  if (when.occupation_signal_any !== undefined && when.occupation_signal_any !== null && !intersects(when.occupation_signal_any, request.occupationSignals)) return null;
  return { fallback };
}

/** Python truthiness for JSON values. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (v instanceof PyFloat) return v.value !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as Json).length > 0;
  return true;
}

/** The stripped `content.text` of the registry entry's policy_ref. */
async function blockText(source: PolicySource, entry: Json, allowedType: string): Promise<string> {
  const ref = entry.policy_ref;
  if (!isObject(ref)) {
    throw new Conflict(`Registry entry missing canonical policy_ref mapping for scope (world_id='${source.worldId}'): '${pyStr(entry.id)}'`);
  }
  const policyId = ref.policy_id === null || ref.policy_id === undefined ? '' : pyStr(ref.policy_id).trim();
  const variant = ref.variant === null || ref.variant === undefined ? '' : pyStr(ref.variant).trim();
  if (policyId === '' || variant === '') throw new Conflict(`Registry entry has invalid policy_ref: ${pyReprValue(ref)}`);
  const policyType = policyId.split(':', 1)[0]!;
  if (policyType !== allowedType) {
    throw new Conflict(`Registry entry policy_ref type must be one of ['${allowedType}']; got '${policyType}' (${policyId}:${variant}).`);
  }
  // A bad or missing reference is a policy-data conflict (spec rule 5: 409), not a 422 or 404
  // of the request; the reference server propagates the policy layer's statuses instead.
  try {
    parsePolicyId(policyId);
  } catch (err) {
    throw new Conflict((err as Error).message);
  }
  const row = await source.fetchVariant(policyId, variant);
  if (!row) throw new Conflict(`Policy not found for id=${pyRepr(policyId)} variant=${pyRepr(variant)}.`);
  if (!isObject(row.content)) throw new Conflict(`Policy variant content must be an object: ${policyId}:${variant}`);
  const text = row.content.text;
  if (isBlank(text)) throw new Conflict(`Policy variant content.text must be non-empty: ${policyId}:${variant}`);
  return (text as string).trim();
}

/** The tone profile's `prompt_block`, else its style, palette and context joined as sentences. */
export function toneBlock(tone: Json): string {
  if (!isBlank(tone.prompt_block)) return tone.prompt_block as string;
  const parts = ['linework_style', 'palette_descriptor', 'presentation_context']
    .map((k) => tone[k])
    .filter((v): v is string => !isBlank(v))
    .map((v) => v.trim());
  if (parts.length === 0) return '';
  return `${parts.join('. ').replace(/\.+$/, '')}.`;
}

/** Hash of the request axes, scores as Python floats (an integral score hashes as `1.0`). */
export function axisHash(axes: Record<string, { label: string; score: number }>): string {
  const payload: Json = {};
  for (const name of Object.keys(axes).sort()) {
    const { label, score } = axes[name]!;
    const value: unknown = (score as unknown) instanceof PyFloat ? score : Number.isInteger(score) ? new PyFloat(score) : score;
    payload[name] = { label, score: value };
  }
  return payloadHash(payload);
}

/** The manifest's schema and bundle identity, as both responses report them. */
function manifestIdentity(manifest: Record<string, unknown>): { policy_schema: string | null; policy_bundle_id: string | null; policy_bundle_version: string | null } {
  const bundle = isObject(manifest.policy_bundle) ? manifest.policy_bundle : {};
  return {
    policy_schema: strOrNull(manifest.policy_schema),
    policy_bundle_id: strOrNull(bundle.id),
    policy_bundle_version: stringifiedOrNull(bundle.version),
  };
}

export async function compileImagePrompt(source: PolicySource, request: CompileRequest): Promise<CompiledImagePrompt> {
  const worldId = source.worldId;
  const gender = (request.gender ?? '').trim().toLowerCase();
  const species = request.species ?? '';

  // 1. Manifest.
  const manifestRow = findManifestRow(source);
  if (!manifestRow) {
    throw new Conflict(`No effective manifest bundle activation found for compile scope ${scopeText(worldId)}.`);
  }
  const manifest = isObject(manifestRow.content) ? manifestRow.content.manifest : undefined;
  if (!isObject(manifest)) {
    throw new Conflict(`Effective manifest bundle row is missing content.manifest object: ${manifestRow.policyId}:${manifestRow.variant}`);
  }

  // 2. Composition.
  const composition = getPath(manifest, 'image', 'composition');
  if (!isObject(composition)) throw new Conflict('Manifest content missing image.composition object for compile.');
  if (!Array.isArray(composition.order) || composition.order.length === 0) {
    throw new Conflict('Manifest image.composition.order must be a non-empty list.');
  }
  if (!Array.isArray(composition.required_runtime_inputs)) {
    throw new Conflict('Manifest image.composition.required_runtime_inputs must be a list.');
  }
  const compositionOrder = composition.order.map(pyStr);
  const requiredInputs = composition.required_runtime_inputs.map(pyStr);

  // 3. Hints.
  const descriptorHint = hintFor(manifest, 'descriptor_layer');
  const toneHint = hintFor(manifest, 'tone_profile');

  // 4. Row selection.
  const descriptorRow = selectForCompile(source, 'descriptor_layer', descriptorHint.hint);
  const toneRow = selectForCompile(source, 'tone_profile', toneHint.hint);
  const speciesRegistryRow = selectForCompile(source, 'registry', SPECIES_REGISTRY_ID);
  const clothingRegistryRow = selectForCompile(source, 'registry', CLOTHING_REGISTRY_ID);

  // 5. Contents.
  const descriptorText = isObject(descriptorRow.content) ? descriptorRow.content.text : undefined;
  if (isBlank(descriptorText)) {
    throw new Conflict(`Descriptor layer content missing canonical text payload: ${descriptorRow.policyId}:${descriptorRow.variant}`);
  }
  const tone = toneRow.content;
  if (!isObject(tone)) throw new Conflict('Tone profile payload missing in policy bundle.');
  const speciesRegistry = speciesRegistryRow.content;
  if (!isObject(speciesRegistry)) throw new Conflict('Species registry payload missing in policy bundle.');
  const clothingRegistry = clothingRegistryRow.content;
  if (!isObject(clothingRegistry)) throw new Conflict('Clothing registry payload missing in policy bundle.');

  // 6. Runtime inputs.
  const missing: string[] = [];
  if (requiredInputs.includes('entity.species') && species.trim() === '') missing.push('entity.species');
  if (requiredInputs.includes('entity.identity.gender') && gender === '') missing.push('entity.identity.gender');
  if (requiredInputs.includes('entity.axes') && Object.keys(request.axes ?? {}).length === 0) missing.push('entity.axes');
  if (missing.length > 0) throw new Conflict(`Missing required runtime inputs for compile: ${missing.sort().join(', ')}`);

  // 7. Species entry.
  const entries = Array.isArray(speciesRegistry.entries) ? speciesRegistry.entries : [];
  const speciesCandidates = entries.filter((e): e is Json => isObject(e) && speciesMatches(e, species, gender));
  speciesCandidates.sort((a, b) => priorityOf(b) - priorityOf(a) || compareStr(pyStr(a.id), pyStr(b.id)));
  const speciesEntry = speciesCandidates[0];
  if (!speciesEntry) throw new Conflict(`No active species block matched species='${species}' and gender='${gender}'.`);

  // 8. Species text.
  const speciesText = await blockText(source, speciesEntry, 'species_block');

  // 9. Clothing.
  const clothingProfileId = strOrNull(getPath(clothingRegistry, 'defaults', 'profile_id'));
  const slotIds: Record<string, string | null> = {};
  const clothingTexts: string[] = [];
  const slots = clothingRegistry.slots;
  if (isObject(slots)) {
    const slotNames = getPath(clothingRegistry, 'composition_contract', 'slots');
    for (const rawName of Array.isArray(slotNames) ? slotNames : []) {
      const name = pyStr(rawName);
      const list = slots[name];
      const ranked = (Array.isArray(list) ? list : [])
        .filter(isObject)
        .map((entry) => ({ entry, match: clothingMatch(entry, gender, request) }))
        .filter((c): c is { entry: Json; match: { fallback: boolean } } => c.match !== null)
        .sort(
          (a, b) =>
            Number(a.match.fallback) - Number(b.match.fallback) ||
            priorityOf(b.entry) - priorityOf(a.entry) ||
            compareStr(pyStr(a.entry.id), pyStr(b.entry.id)),
        );
      const winner = ranked[0];
      if (!winner) {
        slotIds[name] = null;
        continue;
      }
      slotIds[name] = pyStr(winner.entry.id);
      clothingTexts.push(await blockText(source, winner.entry, 'clothing_block'));
    }
  }

  // 10. Tone block; 11. assembly.
  const blocks: Record<string, string> = {
    species_canon_block: speciesText,
    descriptor_layer_output: descriptorText as string,
    clothing_block: clothingTexts.join('\n'),
    tone_profile_block: toneBlock(tone),
  };
  const compiledPrompt = compositionOrder
    .map((name) => (Object.hasOwn(blocks, name) ? blocks[name]! : '').trim())
    .filter((text) => text !== '')
    .join('\n\n');

  // 12. Policy hash.
  const policyHash = payloadHash({
    manifest,
    descriptor_layer_text: descriptorText,
    tone_profile_payload: tone,
    descriptor_policy_id: descriptorRow.policyId,
    descriptor_variant: descriptorRow.variant,
    tone_policy_id: toneRow.policyId,
    tone_variant: toneRow.variant,
    composition_order: compositionOrder,
    selected_blocks: {
      species: { id: speciesEntry.id ?? null, content: speciesText },
      clothing_profile_id: clothingProfileId,
      clothing_slots: slotIds,
      clothing_block_texts: clothingTexts,
    },
  });

  return {
    world_id: worldId,
    ...manifestIdentity(manifest),
    policy_hash: policyHash,
    axis_hash: axisHash(request.axes ?? {}),
    required_runtime_inputs: requiredInputs,
    selected_descriptor_layer_id: descriptorHint.rawId ?? descriptorRow.policyId,
    selected_tone_profile_id: toneHint.rawId ?? toneRow.policyId,
    selected_species_block_id: pyStr(speciesEntry.id),
    selected_clothing_profile_id: clothingProfileId,
    selected_clothing_slot_ids: slotIds,
    compiled_prompt: compiledPrompt,
    generation_defaults: {
      model_id: request.modelId || DEFAULT_IMAGE_MODEL,
      aspect_ratio: request.aspectRatio || DEFAULT_ASPECT_RATIO,
      seed: request.seed ?? null,
    },
    missing_components: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Image policy bundle (GET /api/lab/world-image-policy-bundle/{world_id})

/**
 * The world's effective image policy bundle. `axisBundle` is the world's resolved axis bundle
 * (or null, with `axisBundleError` its detail). Manifest problems throw NotFound / Conflict; everything
 * else is reported in missing_components.
 */
export function imagePolicyBundle(
  source: PolicySource,
  axisBundle: { content: { axes: unknown; thresholds: unknown; resolution: unknown } } | null,
  axisBundleError: string | null,
): ImagePolicyBundle {
  const worldId = source.worldId;
  const scope = scopeText(worldId);
  const manifestRow = findManifestRow(source);
  if (!manifestRow) throw new NotFound(`No effective manifest bundle activation found for scope ${scope}.`);
  const manifest = isObject(manifestRow.content) ? manifestRow.content.manifest : undefined;
  if (!isObject(manifest)) {
    throw new Conflict(`Effective manifest bundle row is missing content.manifest object: ${manifestRow.policyId}:${manifestRow.variant}`);
  }

  const missing: string[] = [];
  const composition = getPath(manifest, 'image', 'composition');
  const listField = (field: 'order' | 'required_runtime_inputs'): string[] => {
    const value = isObject(composition) ? composition[field] : undefined;
    if (Array.isArray(value)) return value.map(pyStr);
    missing.push(`manifest field missing/invalid: image.composition.${field}`);
    return [];
  };
  const compositionOrder = listField('order');
  const requiredInputs = listField('required_runtime_inputs');

  const payload = (label: string, policyType: string, preferred: string | null): Json | null => {
    const sel = selectRow(source.effectiveRows, policyType, preferred);
    if (!('row' in sel)) {
      const detail =
        sel.error === 'preferred'
          ? `missing effective ${policyType} activation for preferred policy_id '${preferred}' in scope ${scope}`
          : sel.error === 'none'
            ? `missing effective ${policyType} activation in scope ${scope}`
            : `ambiguous effective ${policyType} activation set in scope ${scope}; found ${sel.count}`;
      missing.push(`${label}: ${detail}`);
      return null;
    }
    if (!isObject(sel.row.content)) {
      missing.push(`${label}: policy content is not an object: ${sel.row.policyId}:${sel.row.variant}`);
      return null;
    }
    return sel.row.content;
  };
  const descriptorPayload = payload('descriptor_layer', 'descriptor_layer', hintFor(manifest, 'descriptor_layer').hint);
  const tonePayload = payload('tone_profile', 'tone_profile', hintFor(manifest, 'tone_profile').hint);
  const speciesPayload = payload('species_registry', 'registry', SPECIES_REGISTRY_ID);
  const clothingPayload = payload('clothing_registry', 'registry', CLOTHING_REGISTRY_ID);

  let axisPayload: Json = {};
  if (axisBundle) {
    const { axes, thresholds, resolution } = axisBundle.content;
    axisPayload = { axes, thresholds, resolution };
  } else {
    missing.push(`axis_bundle: ${axisBundleError ?? 'axis bundle unavailable'}`);
  }

  const policyHash = payloadHash({
    manifest,
    axis_bundle: axisPayload,
    descriptor_layer_payload: descriptorPayload,
    tone_profile_payload: tonePayload,
    species_registry_payload: speciesPayload,
    clothing_registry_payload: clothingPayload,
    composition_order: compositionOrder,
    required_runtime_inputs: requiredInputs,
    missing_components: missing,
  });

  return {
    world_id: worldId,
    ...manifestIdentity(manifest),
    policy_hash: policyHash,
    composition_order: compositionOrder,
    required_runtime_inputs: requiredInputs,
    descriptor_layer_path: stringifiedOrNull(getPath(manifest, 'image', 'descriptor_layer', 'path')),
    tone_profile_path: stringifiedOrNull(getPath(manifest, 'image', 'tone_profile', 'path')),
    species_registry_path: stringifiedOrNull(getPath(manifest, 'image', 'registries', 'species')),
    clothing_registry_path: stringifiedOrNull(getPath(manifest, 'image', 'registries', 'clothing')),
    missing_components: missing,
  };
}
