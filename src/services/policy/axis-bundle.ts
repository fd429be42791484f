/**
 * A world's effective axis bundle, resolved as the reference server does: the manifest names the
 * active bundle, whose activated variant defines the axes, their label thresholds and the chat
 * resolution grammar. Also the label ↔ score mappings every axis feature shares (a label's
 * score from its thresholds or its place in the ordering; a score's label from the range that
 * holds it).
 */
import { Conflict, NotFound } from '../../shared/errors.ts';
import { payloadHash, PyFloat } from '../../shared/canonical-json.ts';
import { policyError } from './policy-model.ts';
import type { PolicyService } from './policy-service.ts';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (v instanceof PyFloat ? v.value : typeof v === 'number' && Number.isFinite(v) ? v : null);

export interface AxisThreshold {
  label: string;
  min: number | null;
  max: number | null;
  /** Position of the label in the axis ordering (low → high), when it is listed there. */
  ordinal: number | null;
}

export interface AxisBundle {
  worldId: string;
  bundleId: string;
  bundleVersion: string;
  /** Hash of the manifest and the bundle content: the version of any state computed from it. */
  policyHash: string;
  manifest: Json;
  content: { axes: Json; thresholds: Json; resolution: Json };
  /** Axis names (keys of content.axes.axes), sorted. */
  axisNames: string[];
  thresholds: ReadonlyMap<string, AxisThreshold[]>;
  requiredRuntimeInputs: string[];
}

export const DEFAULT_AXIS_SCORE = 0.5;

export function manifestPolicyId(worldId: string): string {
  return `manifest_bundle:world.manifests:${worldId}`;
}

/** The manifest object of the world's effective manifest bundle. */
export async function effectiveManifest(policies: PolicyService, worldId: string): Promise<{ manifest: Json; policyId: string; variant: string }> {
  const policyId = manifestPolicyId(worldId);
  const row = await policies.effectiveVariant({ worldId, clientProfile: '' }, policyId);
  if (!row) {
    throw policyError(NotFound, 'POLICY_EFFECTIVE_MANIFEST_NOT_FOUND', `No effective manifest bundle activation found for scope (world_id='${worldId}', client_profile='').`);
  }
  if (!isObject(row.content.manifest)) {
    throw policyError(Conflict, 'POLICY_EFFECTIVE_MANIFEST_INVALID', `Effective manifest bundle row is missing content.manifest object: ${policyId}:${row.variant}`);
  }
  return { manifest: row.content.manifest, policyId, variant: row.variant };
}

function readThresholds(axes: Json, thresholds: Json, names: string[]): Map<string, AxisThreshold[]> {
  const result = new Map<string, AxisThreshold[]>();
  const thresholdAxes = isObject(thresholds.axes) ? thresholds.axes : {};
  const axisDefs = isObject(axes.axes) ? axes.axes : {};
  for (const name of names) {
    const def = axisDefs[name];
    const ordering = isObject(def) && isObject(def.ordering) && Array.isArray(def.ordering.values) ? def.ordering.values.map(String) : [];
    const values = isObject(thresholdAxes[name]) && isObject((thresholdAxes[name] as Json).values) ? ((thresholdAxes[name] as Json).values as Json) : {};
    const rows: AxisThreshold[] = Object.entries(values).map(([label, range]) => {
      const index = ordering.indexOf(label);
      return {
        label,
        min: isObject(range) ? num(range.min) : num(range),
        max: isObject(range) ? num(range.max) : num(range),
        ordinal: index === -1 ? null : index,
      };
    });
    result.set(name, rows);
  }
  return result;
}

export async function resolveAxisBundle(policies: PolicyService, worldId: string): Promise<AxisBundle> {
  const { manifest, policyId: manifestId, variant: manifestVariant } = await effectiveManifest(policies, worldId);
  const axis = isObject(manifest.axis) ? manifest.axis : {};
  const active = isObject(axis.active_bundle) ? axis.active_bundle : null;
  const bundleId = active && typeof active.id === 'string' ? active.id.trim() : '';
  if (!bundleId) {
    throw policyError(Conflict, 'POLICY_EFFECTIVE_MANIFEST_INVALID', `Manifest ${manifestId}:${manifestVariant} has no axis.active_bundle.id.`);
  }
  const rawVersion = active!.version ?? 1;
  const version = num(rawVersion) ?? (typeof rawVersion === 'string' && /^\d+$/.test(rawVersion.trim()) ? Number(rawVersion) : null);
  if (version === null || !Number.isInteger(version) || version < 1) {
    throw policyError(Conflict, 'POLICY_EFFECTIVE_MANIFEST_INVALID', `Manifest ${manifestId}:${manifestVariant} has an invalid axis.active_bundle.version.`);
  }
  const axisPolicyId = `axis_bundle:axis.bundles:${bundleId}`;
  const row = await policies.effectiveVariant({ worldId, clientProfile: '' }, axisPolicyId);
  if (!row) {
    throw policyError(NotFound, 'POLICY_EFFECTIVE_AXIS_BUNDLE_NOT_FOUND', `No effective axis bundle activation found for ${axisPolicyId} in scope (world_id='${worldId}', client_profile='').`);
  }
  if (row.variant !== `v${version}`) {
    throw policyError(Conflict, 'POLICY_EFFECTIVE_AXIS_BUNDLE_VERSION_MISMATCH', `Axis bundle ${axisPolicyId} is activated as '${row.variant}' but the manifest asks for 'v${version}'.`);
  }
  const { axes, thresholds, resolution } = row.content;
  if (!isObject(axes) || !isObject(thresholds) || !isObject(resolution)) {
    throw policyError(Conflict, 'POLICY_EFFECTIVE_AXIS_BUNDLE_INVALID', `Axis bundle ${axisPolicyId}:${row.variant} needs axes, thresholds and resolution objects.`);
  }
  const axisNames = Object.keys(isObject(axes.axes) ? axes.axes : {}).sort();
  const image = isObject(manifest.image) ? manifest.image : {};
  const composition = isObject(image.composition) ? image.composition : {};
  const inputs = Array.isArray(composition.required_runtime_inputs) ? composition.required_runtime_inputs : [];
  return {
    worldId,
    bundleId,
    bundleVersion: String(version),
    policyHash: payloadHash({ manifest, axis_bundle: { axes, thresholds, resolution } }),
    manifest,
    content: { axes, thresholds, resolution },
    axisNames,
    thresholds: readThresholds(axes, thresholds, axisNames),
    requiredRuntimeInputs: inputs.filter((i): i is string => typeof i === 'string' && i.trim() !== ''),
  };
}

/** The label whose range holds the score, preferring ordered labels, then the lowest min. */
export function labelFor(bundle: AxisBundle, axis: string, score: number): string | null {
  const candidates = (bundle.thresholds.get(axis) ?? []).filter((t) => (t.min === null || t.min <= score) && (t.max === null || score <= t.max));
  candidates.sort((a, b) => (a.ordinal ?? Infinity) - (b.ordinal ?? Infinity) || (a.min ?? -Infinity) - (b.min ?? -Infinity));
  return candidates[0]?.label ?? null;
}

/** A representative score for a label: its range's midpoint (or bound), else its rank in the ordering. */
export function scoreForLabel(bundle: AxisBundle, axis: string, label: string): number | null {
  const wanted = label.trim().toLowerCase();
  const rows = bundle.thresholds.get(axis) ?? [];
  const row = rows.find((t) => t.label.trim().toLowerCase() === wanted);
  if (row && (row.min !== null || row.max !== null)) {
    const value = row.min !== null && row.max !== null ? (row.min + row.max) / 2 : (row.min ?? row.max)!;
    return Math.min(1, Math.max(0, value));
  }
  const axisDefs = isObject(bundle.content.axes.axes) ? bundle.content.axes.axes : {};
  const def = axisDefs[axis];
  const ordering = isObject(def) && isObject(def.ordering) && Array.isArray(def.ordering.values) ? def.ordering.values.map((v) => String(v).trim().toLowerCase()) : [];
  const index = ordering.indexOf(wanted);
  if (index === -1) return null;
  return ordering.length === 1 ? 0.5 : index / (ordering.length - 1);
}

function numericOf(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return num(value) ?? (isObject(value) ? num(value.score) : null);
}

function labelOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (isObject(value)) for (const key of ['label', 'value', 'name']) if (typeof value[key] === 'string') return value[key] as string;
  return null;
}

/**
 * Numeric axis values from an entity generator payload: numbers under `axes`, then under
 * `character`/`occupation`, then labels in the same order mapped through the bundle.
 * The first value found for an axis wins, so a number beats a label.
 */
export function normalizeEntityAxes(payload: Json, bundle: AxisBundle): Record<string, number> {
  const groups = [payload.axes, payload.character, payload.occupation].map((g) => (isObject(g) ? g : {}));
  const result: Record<string, number> = {};
  const axisByLower = new Map(bundle.axisNames.map((n) => [n.trim().toLowerCase(), n]));
  const passes: Array<(value: unknown, key: string) => number | null> = [
    (value) => numericOf(value),
    (value, key) => {
      const label = labelOf(value);
      const axis = axisByLower.get(key.trim().toLowerCase());
      return label === null || axis === undefined ? null : scoreForLabel(bundle, axis, label);
    },
  ];
  for (const pass of passes) {
    for (const group of groups) {
      for (const [key, value] of Object.entries(group)) {
        if (key in result) continue;
        const score = pass(value, key);
        if (score !== null) result[key] = score;
      }
    }
  }
  return Object.fromEntries(Object.entries(result).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
