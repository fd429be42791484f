/**
 * The lab (admin diagnostics): which worlds translate, a world's translation config, the
 * image policy bundle, image-prompt compilation and OOC→IC translation. Policy data comes
 * from the world's effective activations; the compiler itself is a pure module.
 */
import type { Config } from '../../config/config.ts';
import type { PolicyRepository } from '../../db/repositories/policy-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { DomainError, FeatureUnavailable, NotFound } from '../../shared/errors.ts';
import { resolveAxisBundle } from '../policy/axis-bundle.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { World } from '../worlds/world-loader.ts';
import { compileImagePrompt, imagePolicyBundle, type PolicySource } from './image-compiler.ts';
import { effectivePromptTemplate, translationLayer, type TranslationLayer, type Translator } from './translation.ts';

type Schemas = components['schemas'];
type AxisValues = Record<string, { label: string; score: number }>;

export interface CompileInput {
  worldId: string;
  species: string;
  gender: string;
  axes: AxisValues;
  worldContext?: string[];
  occupationSignals?: string[];
  modelId?: string | null;
  aspectRatio?: string | null;
  seed?: number | null;
}

export interface TranslateInput {
  worldId: string;
  oocMessage: string;
  axes: AxisValues;
  characterName?: string;
  channel?: string;
  seed?: number;
  temperature?: number;
  promptTemplateOverride?: string | null;
}

export class LabService {
  private readonly worlds: WorldCatalog;
  private readonly policies: PolicyService;
  private readonly repo: PolicyRepository;
  private readonly translator: Translator;
  private readonly config: Config['translation'];

  constructor(worlds: WorldCatalog, policies: PolicyService, repo: PolicyRepository, translator: Translator, config: Config['translation']) {
    this.worlds = worlds;
    this.policies = policies;
    this.repo = repo;
    this.translator = translator;
    this.config = config;
  }

  private available(worldId: string): World {
    const world = this.worlds.get(worldId);
    if (!world || !world.active) throw new NotFound(`World '${worldId}' not found or inactive.`);
    return world;
  }

  /** The world's translation layer when both the server switch and the world enable it. */
  private layer(world: World): TranslationLayer | null {
    const layer = translationLayer(world, this.config.ollamaUrl);
    return this.config.enabled && layer.enabled ? layer : null;
  }

  private worldConfig(world: World, layer: TranslationLayer): Schemas['LabWorldConfig'] {
    return {
      world_id: world.id,
      name: world.name,
      model: layer.model,
      active_axes: layer.activeAxes,
      strict_mode: layer.strictMode,
      max_output_chars: layer.maxOutputChars,
      timeout_seconds: layer.timeoutSeconds,
      translation_enabled: true,
    };
  }

  listWorlds(): Array<{ world_id: string; name: string; translation_enabled: boolean }> {
    return this.worlds
      .list()
      .filter((w) => w.active)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((w) => ({ world_id: w.id, name: w.name, translation_enabled: this.layer(w) !== null }));
  }

  getWorldConfig(worldId: string): Schemas['LabWorldConfig'] {
    const world = this.available(worldId);
    const layer = this.layer(world);
    if (!layer) throw new NotFound(`Translation layer not enabled for world '${worldId}'.`);
    return this.worldConfig(world, layer);
  }

  private async policySource(worldId: string): Promise<PolicySource> {
    const scope = { worldId, clientProfile: '' };
    const rows = await this.policies.effectiveVariants(scope, 'POLICY_EFFECTIVE_REFERENCE_MISSING', (a) => `Effective activation points to missing policy variant: ${a.policyId}:${a.variant}`);
    return {
      worldId,
      effectiveRows: rows.map((r) => ({ policyId: r.policyId, variant: r.variant, content: r.content })),
      fetchVariant: async (policyId, variant) => {
        const row = await this.repo.findVariant(policyId, variant);
        return row ? { policyId: row.policyId, variant: row.variant, content: row.content } : null;
      },
    };
  }

  async imageBundle(worldId: string): Promise<Schemas['ImagePolicyBundle']> {
    this.available(worldId);
    const source = await this.policySource(worldId);
    let axisBundle = null;
    let axisError: string | null = null;
    try {
      axisBundle = await resolveAxisBundle(this.policies, worldId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      axisError = err.message;
    }
    return imagePolicyBundle(source, axisBundle, axisError);
  }

  async compile(input: CompileInput): Promise<Schemas['CompiledImagePrompt']> {
    this.available(input.worldId);
    const source = await this.policySource(input.worldId);
    return compileImagePrompt(source, {
      species: input.species,
      gender: input.gender.trim().toLowerCase(),
      axes: input.axes,
      worldContext: input.worldContext ?? [],
      occupationSignals: input.occupationSignals ?? [],
      modelId: input.modelId ?? null,
      aspectRatio: input.aspectRatio ?? null,
      seed: input.seed ?? null,
    });
  }

  /** The world's prompt template: its effective prompt policy, else the built-in one. */
  private async promptTemplate(worldId: string, layer: TranslationLayer): Promise<string> {
    return effectivePromptTemplate(this.policies, worldId, layer);
  }

  async translate(input: TranslateInput): Promise<Schemas['TranslationResult']> {
    const world = this.available(input.worldId);
    const layer = this.layer(world);
    if (!layer) throw new FeatureUnavailable(`Translation layer not enabled for world '${input.worldId}'.`);
    // An override applies to this request only; stored prompt policy is never changed.
    const template = input.promptTemplateOverride ?? (await this.promptTemplate(world.id, layer));
    const result = await this.translator.translate({
      layer,
      template,
      characterName: input.characterName ?? 'Lab Subject',
      channel: input.channel ?? 'say',
      axes: input.axes,
      oocMessage: input.oocMessage,
      seed: input.seed ?? -1,
      temperature: input.temperature ?? 0.7,
    });
    return {
      ic_text: result.icText,
      status: result.status,
      profile_summary: result.profileSummary,
      rendered_prompt: result.renderedPrompt,
      prompt_template: template,
      model: layer.model,
      world_config: this.worldConfig(world, layer),
    };
  }
}
