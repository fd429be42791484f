/**
 * The built-in entity generator: a deterministic axis profile for a seed over a world's axis
 * bundle, shaped like the upstream entity-state service's answer (numeric values under
 * `axes`, labels under `character` and `occupation`), so both feed the same normalization.
 */
import type { EntityStateResult } from './entity-state.ts';
import { seededRandom } from './seeded-random.ts';

/** The part of a world's axis bundle the generator reads (AxisBundle fits it): integrations need nothing from services. */
export interface AxisLabels {
  axisNames: readonly string[];
  thresholds: ReadonlyMap<string, ReadonlyArray<{ label: string; ordinal: number | null }>>;
}

export const BUILTIN_GENERATOR_VERSION = 'builtin-1';

export class BuiltinEntityGenerator {
  async generate(seed: number, bundle: AxisLabels): Promise<EntityStateResult> {
    const random = seededRandom(seed);
    const axes: Record<string, number> = {};
    const character: Record<string, string> = {};
    const occupation: Record<string, string> = {};
    bundle.axisNames.forEach((name, index) => {
      const labels = [...(bundle.thresholds.get(name) ?? [])].sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0)).map((t) => t.label);
      // Roughly half the axes come as numbers, the rest as labels, like real upstream answers.
      if (labels.length === 0 || random() < 0.5) {
        axes[name] = Math.round(random() * 100) / 100;
      } else {
        (index % 2 === 0 ? character : occupation)[name] = labels[Math.floor(random() * labels.length)]!;
      }
    });
    return {
      payload: { seed, axes, character, occupation, generator_version: BUILTIN_GENERATOR_VERSION },
      generatorVersion: BUILTIN_GENERATOR_VERSION,
      generatorCapabilities: ['numeric_axes', 'label_axes'],
      generatedAt: null,
      attempts: 1,
      latencyMs: 0,
    };
  }
}
