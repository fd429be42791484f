/**
 * Stateless condition-axis generation (`POST /api/pipeline/condition-axis/generate`, answered as
 * the reference server answers it): resolves the world's axis bundle, asks the entity
 * generator (built-in or the upstream entity-state API) for a seed's profile, maps labels to
 * numbers through the bundle and checks every policy axis is present. Creates or changes nothing.
 */
import { EntityStateError, type EntityStateFailure, type EntityStateResult } from '../../integrations/entity-state.ts';
import { normalizeEntityAxes, resolveAxisBundle, type AxisBundle } from '../policy/axis-bundle.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { MAX_SEED, randomSeed } from '../../integrations/seeded-random.ts';
import type { Clock } from '../../db/clock.ts';
import { DomainError, FeatureUnsupported, NotFound, Unprocessable, UpstreamFailed, UpstreamTimeout, type DomainErrorKind } from '../../shared/errors.ts';

export const CONDITION_AXIS_SERVED_VIA = '/api/pipeline/condition-axis/generate';

export type ConditionAxisCode =
  | 'CONDITION_AXIS_VALIDATION_ERROR'
  | 'CONDITION_AXIS_WORLD_NOT_FOUND'
  | 'CONDITION_AXIS_BUNDLE_NOT_FOUND'
  | 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED'
  | 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED'
  | 'CONDITION_AXIS_UPSTREAM_INCOMPLETE'
  | 'CONDITION_AXIS_UPSTREAM_TIMEOUT';

/** The body the contract already validated (strict at every level). */
export interface ConditionAxisRequest {
  world_id: string;
  seed?: number | null;
  bundle_id?: string | null;
  inputs: {
    entity: {
      identity: { gender: string };
      species: string;
      axes?: Record<string, unknown> | null;
    };
  };
}

export interface ConditionAxes {
  world_id: string;
  bundle_id: string;
  bundle_version: string;
  policy_hash: string | null;
  seed: number;
  axes: Record<string, number>;
  provenance: {
    source: 'mud_server_canonical';
    served_via: typeof CONDITION_AXIS_SERVED_VIA;
    generator: 'entity_state_generation';
    generator_version: string;
    generator_capabilities: string[];
    generated_at: string;
  };
}

/** Built-in or HTTP; failures of the upstream are `EntityStateError`s. */
export interface AxisEntitySource {
  generate(seed: number, bundle: AxisBundle): Promise<EntityStateResult>;
}

export interface ConditionAxisDeps {
  worlds: WorldCatalog;
  policies: PolicyService;
  generator: AxisEntitySource;
  /** Stamps `generated_at` when the generator gives none. */
  clock: Clock;
}

const POLICY_MISSING_CODES = new Set(['POLICY_EFFECTIVE_MANIFEST_NOT_FOUND', 'POLICY_EFFECTIVE_AXIS_BUNDLE_NOT_FOUND']);
const UPSTREAM_FAILURES: Record<EntityStateFailure, [DomainErrorKind, ConditionAxisCode]> = {
  unsupported: [FeatureUnsupported, 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED'],
  timeout: [UpstreamTimeout, 'CONDITION_AXIS_UPSTREAM_TIMEOUT'],
  generation_failed: [UpstreamFailed, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED'],
};

export const CONDITION_AXIS_MESSAGES = {
  invalid: 'Invalid request payload for condition-axis generation.',
  policyUnsupported: 'Condition-axis generation is not available in the current canonical policy activation state.',
  policyFailed: 'Failed to resolve canonical axis policy context.',
  empty: 'Failed to generate condition axis from upstream entity generator.',
} as const;

export function axisError(kind: DomainErrorKind, code: ConditionAxisCode, detail: string): DomainError {
  return new kind(detail, { extra: { code, stage: 'axis_input' } });
}

/** UTC at second precision: `YYYY-MM-DDTHH:MM:SSZ`. */
function isoSeconds(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** 422 naming the blank runtime inputs (`entity.species`, …), sorted. */
export function missingRuntimeInputs(names: readonly string[]): DomainError {
  return axisError(Unprocessable, 'CONDITION_AXIS_VALIDATION_ERROR', `${CONDITION_AXIS_MESSAGES.invalid} Missing required runtime inputs: ${[...names].sort(byCodeUnit).join(', ')}.`);
}

export class ConditionAxisService {
  private readonly d: ConditionAxisDeps;

  constructor(deps: ConditionAxisDeps) {
    this.d = deps;
  }

  async generate(request: ConditionAxisRequest, now: Date = this.d.clock()): Promise<ConditionAxes> {
    const worldId = request.world_id;
    const world = this.d.worlds.get(worldId);
    if (!world || !world.active) {
      throw axisError(NotFound, 'CONDITION_AXIS_WORLD_NOT_FOUND', `World '${worldId}' not found or inactive.`);
    }

    const seed = request.seed ?? randomSeed();
    if (!Number.isInteger(seed) || seed < 1 || seed > MAX_SEED) {
      throw axisError(Unprocessable, 'CONDITION_AXIS_VALIDATION_ERROR', `${CONDITION_AXIS_MESSAGES.invalid} seed must be between 1 and ${MAX_SEED}.`);
    }

    const bundle = await this.policyContext(worldId);
    const wantedBundle = request.bundle_id;
    if (wantedBundle !== undefined && wantedBundle !== null && wantedBundle !== bundle.bundleId) {
      throw axisError(NotFound, 'CONDITION_AXIS_BUNDLE_NOT_FOUND', `Requested bundle '${wantedBundle}' is not available for world '${worldId}'.`);
    }

    const entity = request.inputs.entity;
    const missingInputs: string[] = [];
    if (!entity.identity.gender.trim()) missingInputs.push('entity.identity.gender');
    if (!entity.species.trim()) missingInputs.push('entity.species');
    if (missingInputs.length > 0) throw missingRuntimeInputs(missingInputs);

    let result: EntityStateResult;
    try {
      result = await this.d.generator.generate(seed, bundle);
    } catch (err) {
      if (err instanceof EntityStateError) {
        const [kind, code] = UPSTREAM_FAILURES[err.failure];
        throw axisError(kind, code, err.message);
      }
      throw err;
    }

    const axes = normalizeEntityAxes(result.payload, bundle);
    if (Object.keys(axes).length === 0) {
      throw axisError(UpstreamFailed, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', CONDITION_AXIS_MESSAGES.empty);
    }
    const present = new Set(Object.keys(axes).map((k) => k.trim().toLowerCase()));
    const missingAxes = [...new Set(bundle.axisNames.map((n) => n.trim().toLowerCase()))].filter((n) => !present.has(n)).sort(byCodeUnit);
    if (missingAxes.length > 0) {
      throw axisError(UpstreamFailed, 'CONDITION_AXIS_UPSTREAM_INCOMPLETE', `Upstream condition-axis payload is missing required policy axes: ${missingAxes.join(', ')}.`);
    }

    return {
      world_id: worldId,
      bundle_id: bundle.bundleId,
      bundle_version: bundle.bundleVersion,
      policy_hash: bundle.policyHash,
      seed,
      axes,
      provenance: {
        source: 'mud_server_canonical',
        served_via: CONDITION_AXIS_SERVED_VIA,
        generator: 'entity_state_generation',
        generator_version: result.generatorVersion,
        generator_capabilities: [...result.generatorCapabilities],
        generated_at: result.generatedAt ?? isoSeconds(now),
      },
    };
  }

  private async policyContext(worldId: string): Promise<AxisBundle> {
    try {
      return await resolveAxisBundle(this.d.policies, worldId);
    } catch (err) {
      if (err instanceof DomainError && typeof err.extra.code === 'string' && POLICY_MISSING_CODES.has(err.extra.code)) {
        throw axisError(FeatureUnsupported, 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED', CONDITION_AXIS_MESSAGES.policyUnsupported);
      }
      // Policy failures are domain errors; anything else (the database down) stays a 500.
      if (!(err instanceof DomainError)) throw err;
      throw axisError(UpstreamFailed, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', CONDITION_AXIS_MESSAGES.policyFailed);
    }
  }
}
