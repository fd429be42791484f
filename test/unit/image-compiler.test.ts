/**
 * Image-prompt compilation and the image policy bundle, as the reference server computes them,
 * on PolicySource objects built from the emberwick artifact's variants, one tweak per case.
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { readFileSync } from 'node:fs';
import { parseJson, payloadHash, PyFloat } from '../../src/shared/canonical-json.ts';
import { Conflict, NotFound } from '../../src/shared/errors.ts';
import {
  compileImagePrompt,
  DEFAULT_IMAGE_MODEL,
  imagePolicyBundle,
  toneBlock,
  type CompileRequest,
  type PolicyRow,
  type PolicySource,
} from '../../src/services/lab/image-compiler.ts';

type Json = Record<string, any>;

const ARTIFACT = parseJson(readFileSync(new URL('../../worlds/emberwick/policy-artifact.json', import.meta.url), 'utf8')) as Json;
const W = 'emberwick';
const SCOPE = `(world_id='${W}', client_profile='')`;
const MANIFEST_ID = `manifest_bundle:world.manifests:${W}`;
const DESCRIPTOR_ID = 'descriptor_layer:image.descriptors:emberwick_descriptors';
const TONE_ID = 'tone_profile:image.tone_profiles:emberwick_ink_wash';
const SPECIES_REG = 'registry:image.registries:species_registry';
const CLOTHING_REG = 'registry:image.registries:clothing_registry';

const text = (id: string): string => (ARTIFACT.variants as Json[]).find((v) => v.policy_id === id)!.content.text as string;

/** All artifact variants, deep-copied, keyed `<id>:<variant>`. */
function freshVariants(): Map<string, PolicyRow> {
  const map = new Map<string, PolicyRow>();
  for (const v of ARTIFACT.variants as Json[]) {
    map.set(`${v.policy_id}:${v.variant}`, { policyId: v.policy_id, variant: v.variant, content: structuredCloneKeepFloats(v.content) });
  }
  return map;
}

function structuredCloneKeepFloats<T>(value: T): T {
  if (value instanceof PyFloat) return value;
  if (Array.isArray(value)) return value.map(structuredCloneKeepFloats) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredCloneKeepFloats(v)])) as T;
  }
  return value;
}

interface Fixture {
  variants: Map<string, PolicyRow>;
  /** `<id>:<variant>` keys of the effective activations (all artifact variants by default). */
  active: Set<string>;
  content(id: string): Json;
  source(): PolicySource;
}

function fixture(tweak?: (f: Fixture) => void): PolicySource {
  const variants = freshVariants();
  const f: Fixture = {
    variants,
    active: new Set(variants.keys()),
    content: (id) => variants.get(`${id}:v1`)!.content as Json,
    source: () => ({
      worldId: W,
      effectiveRows: [...f.active].map((k) => variants.get(k)!).filter(Boolean),
      fetchVariant: async (policyId, variant) => variants.get(`${policyId}:${variant}`) ?? null,
    }),
  };
  tweak?.(f);
  return f.source();
}

const manifestOf = (f: Fixture): Json => f.content(MANIFEST_ID).manifest;
const speciesEntries = (f: Fixture): Json[] => f.content(SPECIES_REG).entries;
const slot = (f: Fixture, name: string): Json[] => f.content(CLOTHING_REG).slots[name];

function request(overrides: Partial<CompileRequest> = {}): CompileRequest {
  return {
    species: 'heron_folk',
    gender: 'female',
    axes: { wealth: { label: 'moneyed', score: 0.9 }, demeanor: { label: 'even', score: 0.5 } },
    worldContext: [],
    occupationSignals: ['lockkeeper'],
    ...overrides,
  };
}

/** Every compile failure is a Conflict (409): the policy data, not the request, is wrong. */
async function compileError(source: PolicySource, req: CompileRequest = request()): Promise<Conflict> {
  try {
    await compileImagePrompt(source, req);
  } catch (err) {
    expect(err).to.be.instanceOf(Conflict);
    return err as Conflict;
  }
  throw new Error('expected a Conflict');
}

/** A species entry shaped like the artifact's, pointing at an existing species block. */
function speciesEntry(id: string, extra: Json = {}): Json {
  return {
    block_type: 'species',
    compatible_genders: ['male', 'female'],
    compatible_species: ['heron_folk'],
    id,
    policy_ref: { policy_id: 'species_block:image.blocks.species:cinderkin', variant: 'v1' },
    render_priority: 0,
    status: 'active',
    ...extra,
  };
}

function clothingEntry(id: string, when: Json | undefined, extra: Json = {}): Json {
  return {
    block_type: 'clothing_fragment',
    compatible_genders: ['male', 'female'],
    id,
    policy_ref: { policy_id: 'clothing_block:image.blocks.clothing:caged_lantern', variant: 'v1' },
    render_priority: 0,
    ...(when === undefined ? {} : { selection_rules: { when } }),
    status: 'active',
    ...extra,
  };
}

describe('image compiler: compileImagePrompt', () => {
  describe('the emberwick policy data', () => {
    it('compiles heron_folk/female/moneyed/lockkeeper with the expected blocks', async () => {
      const result = await compileImagePrompt(fixture(), request());
      expect(result.world_id).to.equal(W);
      expect(result.policy_schema).to.equal('emberwick.policy.v1');
      expect(result.policy_bundle_id).to.equal('emberwick_core');
      expect(result.policy_bundle_version).to.equal('1');
      expect(result.required_runtime_inputs).to.deep.equal(['entity.species', 'entity.identity.gender', 'entity.axes']);
      expect(result.selected_descriptor_layer_id).to.equal('emberwick_descriptors_v1');
      expect(result.selected_tone_profile_id).to.equal('emberwick_ink_wash_v1');
      expect(result.selected_species_block_id).to.equal('species_heron_folk');
      expect(result.selected_clothing_profile_id).to.equal('emberwick_everyday');
      expect(result.selected_clothing_slot_ids).to.deep.equal({ outerwear: 'outerwear_greatcoat_brass', accessory: 'accessory_lock_key_lanyard' });
      expect(result.compiled_prompt).to.equal(
        [
          text('species_block:image.blocks.species:heron_folk').trim(),
          text(DESCRIPTOR_ID).trim(),
          `${text('clothing_block:image.blocks.clothing:greatcoat_brass').trim()}\n${text('clothing_block:image.blocks.clothing:lock_key_lanyard').trim()}`,
          (fixtureContent(TONE_ID).prompt_block as string).trim(),
        ].join('\n\n'),
      );
      expect(result.generation_defaults).to.deep.equal({ model_id: DEFAULT_IMAGE_MODEL, aspect_ratio: '1:1', seed: null });
      expect(result.missing_components).to.deep.equal([]);
      expect(result.policy_hash).to.match(/^[0-9a-f]{64}$/);
      expect(result.axis_hash).to.match(/^[0-9a-f]{64}$/);
    });

    it('hashes policy_hash over exactly the reference payload', async () => {
      const result = await compileImagePrompt(fixture(), request());
      const manifest = fixtureContent(MANIFEST_ID).manifest;
      const expected = payloadHash({
        manifest,
        descriptor_layer_text: text(DESCRIPTOR_ID),
        tone_profile_payload: fixtureContent(TONE_ID),
        descriptor_policy_id: DESCRIPTOR_ID,
        descriptor_variant: 'v1',
        tone_policy_id: TONE_ID,
        tone_variant: 'v1',
        composition_order: manifest.image.composition.order,
        selected_blocks: {
          species: { id: 'species_heron_folk', content: text('species_block:image.blocks.species:heron_folk').trim() },
          clothing_profile_id: 'emberwick_everyday',
          clothing_slots: { outerwear: 'outerwear_greatcoat_brass', accessory: 'accessory_lock_key_lanyard' },
          clothing_block_texts: [text('clothing_block:image.blocks.clothing:greatcoat_brass').trim(), text('clothing_block:image.blocks.clothing:lock_key_lanyard').trim()],
        },
      });
      expect(result.policy_hash).to.equal(expected);
    });
  });

  describe('manifest and composition (steps 1–2)', () => {
    const cases: Array<[string, (f: Fixture) => void, string]> = [
      ['manifest activation missing', (f) => f.active.delete(`${MANIFEST_ID}:v1`), `No effective manifest bundle activation found for compile scope ${SCOPE}.`],
      ['content.manifest not an object', (f) => (f.content(MANIFEST_ID).manifest = []), `Effective manifest bundle row is missing content.manifest object: ${MANIFEST_ID}:v1`],
      ['image.composition missing', (f) => delete manifestOf(f).image.composition, 'Manifest content missing image.composition object for compile.'],
      ['image.composition not an object', (f) => (manifestOf(f).image.composition = ['x']), 'Manifest content missing image.composition object for compile.'],
      ['order empty', (f) => (manifestOf(f).image.composition.order = []), 'Manifest image.composition.order must be a non-empty list.'],
      ['order not a list', (f) => (manifestOf(f).image.composition.order = 'species_canon_block'), 'Manifest image.composition.order must be a non-empty list.'],
      ['required_runtime_inputs not a list', (f) => (manifestOf(f).image.composition.required_runtime_inputs = 'entity.axes'), 'Manifest image.composition.required_runtime_inputs must be a list.'],
    ];
    for (const [name, tweak, message] of cases) {
      it(`409 when ${name}`, async () => {
        const err = await compileError(fixture(tweak));
        expect(err.message).to.equal(message);
      });
    }
  });

  describe('hints and row selection (steps 3–4)', () => {
    it('strips `_v<version>` only for an int version', async () => {
      // version "1" (a string) keeps the suffix, so the preferred id is not activated.
      const err = await compileError(fixture((f) => (manifestOf(f).image.tone_profile.version = '1')));
      expect(err.message).to.equal(`Preferred active tone_profile policy is not activated for scope ${SCOPE}: tone_profile:image.tone_profiles:emberwick_ink_wash_v1.`);
    });

    it('does not strip a suffix of a different version', async () => {
      const err = await compileError(fixture((f) => (manifestOf(f).image.descriptor_layer.version = 2)));
      expect(err.message).to.equal(`Preferred active descriptor_layer policy is not activated for scope ${SCOPE}: descriptor_layer:image.descriptors:emberwick_descriptors_v1.`);
    });

    it('uses an id without suffix as is', async () => {
      const result = await compileImagePrompt(fixture((f) => (manifestOf(f).image.tone_profile = { id: 'emberwick_ink_wash' })), request());
      expect(result.selected_tone_profile_id).to.equal('emberwick_ink_wash');
    });

    it('409 when the hinted policy is not activated', async () => {
      const err = await compileError(fixture((f) => f.active.delete(`${DESCRIPTOR_ID}:v1`)));
      expect(err.message).to.equal(`Preferred active descriptor_layer policy is not activated for scope ${SCOPE}: ${DESCRIPTOR_ID}.`);
    });

    it('without a hint takes the single active policy of the type, reporting its policy_id', async () => {
      const result = await compileImagePrompt(fixture((f) => delete manifestOf(f).image.tone_profile), request());
      expect(result.selected_tone_profile_id).to.equal(TONE_ID);
      const blank = await compileImagePrompt(fixture((f) => (manifestOf(f).image.descriptor_layer.id = '  ')), request());
      expect(blank.selected_descriptor_layer_id).to.equal(DESCRIPTOR_ID);
    });

    it('without a hint 409 when none or several are active', async () => {
      const none = await compileError(
        fixture((f) => {
          delete manifestOf(f).image.tone_profile;
          f.active.delete(`${TONE_ID}:v1`);
        }),
      );
      expect(none.message).to.equal(`Expected exactly one active tone_profile policy for scope ${SCOPE}; found 0.`);
      const two = await compileError(
        fixture((f) => {
          delete manifestOf(f).image.descriptor_layer;
          f.variants.set('descriptor_layer:image.descriptors:other:v1', { policyId: 'descriptor_layer:image.descriptors:other', variant: 'v1', content: { text: 'x' } });
          f.active.add('descriptor_layer:image.descriptors:other:v1');
        }),
      );
      expect(two.message).to.equal(`Expected exactly one active descriptor_layer policy for scope ${SCOPE}; found 2.`);
    });

    for (const id of [SPECIES_REG, CLOTHING_REG]) {
      it(`409 when ${id} is not activated`, async () => {
        const err = await compileError(fixture((f) => f.active.delete(`${id}:v1`)));
        expect(err.message).to.equal(`Preferred active registry policy is not activated for scope ${SCOPE}: ${id}.`);
      });
    }
  });

  describe('payload contents (step 5)', () => {
    const cases: Array<[string, (f: Fixture) => void, string]> = [
      ['descriptor text blank', (f) => (f.content(DESCRIPTOR_ID).text = '   '), `Descriptor layer content missing canonical text payload: ${DESCRIPTOR_ID}:v1`],
      ['descriptor text missing', (f) => delete f.content(DESCRIPTOR_ID).text, `Descriptor layer content missing canonical text payload: ${DESCRIPTOR_ID}:v1`],
      ['tone profile not an object', (f) => (f.variants.get(`${TONE_ID}:v1`)!.content = [] as unknown as Json), 'Tone profile payload missing in policy bundle.'],
      ['species registry not an object', (f) => (f.variants.get(`${SPECIES_REG}:v1`)!.content = null as unknown as Json), 'Species registry payload missing in policy bundle.'],
      ['clothing registry not an object', (f) => (f.variants.get(`${CLOTHING_REG}:v1`)!.content = 'x' as unknown as Json), 'Clothing registry payload missing in policy bundle.'],
    ];
    for (const [name, tweak, message] of cases) {
      it(`409 when ${name}`, async () => {
        const err = await compileError(fixture(tweak));
        expect(err.message).to.equal(message);
      });
    }
  });

  describe('runtime inputs (step 6)', () => {
    it('lists every missing input, sorted and comma-joined', async () => {
      const err = await compileError(fixture(), request({ species: ' ', gender: '  ', axes: {} }));
      expect(err.message).to.equal('Missing required runtime inputs for compile: entity.axes, entity.identity.gender, entity.species');
    });

    it('reports a single missing input', async () => {
      const err = await compileError(fixture(), request({ axes: {} }));
      expect(err.message).to.equal('Missing required runtime inputs for compile: entity.axes');
    });

    it('checks only inputs the manifest lists', async () => {
      const source = fixture((f) => (manifestOf(f).image.composition.required_runtime_inputs = ['entity.species']));
      const result = await compileImagePrompt(source, request({ axes: {} }));
      expect(result.required_runtime_inputs).to.deep.equal(['entity.species']);
      expect(result.axis_hash).to.equal(payloadHash({}));
    });

    it('trims and lower-cases the gender; any non-blank value is allowed', async () => {
      const err = await compileError(fixture(), request({ gender: '  Nonbinary ' }));
      expect(err.message).to.equal("No active species block matched species='heron_folk' and gender='nonbinary'.");
      const ok = await compileImagePrompt(fixture(), request({ gender: ' FEMALE ' }));
      expect(ok.selected_species_block_id).to.equal('species_heron_folk');
    });
  });

  describe('species entry (steps 7–8)', () => {
    it('matches the species exactly (case-sensitive)', async () => {
      const err = await compileError(fixture(), request({ species: 'Heron_Folk' }));
      expect(err.message).to.equal("No active species block matched species='Heron_Folk' and gender='female'.");
    });

    it('picks the highest render_priority, then the lowest id', async () => {
      const byPriority = await compileImagePrompt(
        fixture((f) => speciesEntries(f).push(speciesEntry('zz_high', { render_priority: 5 }), speciesEntry('aa_low', { render_priority: -1 }))),
        request(),
      );
      expect(byPriority.selected_species_block_id).to.equal('zz_high');
      expect(byPriority.compiled_prompt.startsWith(text('species_block:image.blocks.species:cinderkin').trim())).to.equal(true);
      const byId = await compileImagePrompt(fixture((f) => speciesEntries(f).push(speciesEntry('species_aaa'))), request());
      expect(byId.selected_species_block_id).to.equal('species_aaa');
    });

    const rejected: Array<[string, Json]> = [
      ['inactive status', { status: 'draft' }],
      ['other block_type', { block_type: 'Species' }],
      ['compatible_species without the species', { compatible_species: ['cinderkin'] }],
      ['compatible_genders without the gender', { compatible_genders: ['male'] }],
      ['species_any without the species', { selection_rules: { when: { species_any: ['lockborn'] } } }],
      ['species_any of another type', { selection_rules: { when: { species_any: 'heron_folk' } } }],
    ];
    for (const [name, extra] of rejected) {
      it(`rejects an entry with ${name}`, async () => {
        const result = await compileImagePrompt(fixture((f) => speciesEntries(f).push(speciesEntry('aaa', { render_priority: 9, ...extra }))), request());
        expect(result.selected_species_block_id).to.equal('species_heron_folk');
      });
    }

    const accepted: Array<[string, Json]> = [
      ['status in another case', { status: 'ACTIVE' }],
      ['empty compatible_species', { compatible_species: [] }],
      ['empty compatible_genders', { compatible_genders: [] }],
      ['species_any null', { selection_rules: { when: { species_any: null } } }],
      ['species_any containing the species', { selection_rules: { when: { species_any: ['heron_folk'] } } }],
    ];
    for (const [name, extra] of accepted) {
      it(`accepts an entry with ${name}`, async () => {
        const result = await compileImagePrompt(fixture((f) => speciesEntries(f).push(speciesEntry('aaa', { render_priority: 9, ...extra }))), request());
        expect(result.selected_species_block_id).to.equal('aaa');
      });
    }

    it('409 when no entries list exists', async () => {
      const err = await compileError(fixture((f) => (f.content(SPECIES_REG).entries = { a: 1 })));
      expect(err.message).to.equal("No active species block matched species='heron_folk' and gender='female'.");
    });

    const refCases: Array<[string, Json, string]> = [
      ['policy_ref missing', { policy_ref: undefined }, `Registry entry missing canonical policy_ref mapping for scope (world_id='${W}'): 'aaa'`],
      ['policy_ref blank variant', { policy_ref: { policy_id: 'species_block:image.blocks.species:cinderkin', variant: ' ' } }, "Registry entry has invalid policy_ref: {'policy_id': 'species_block:image.blocks.species:cinderkin', 'variant': ' '}"],
      ['policy_ref of another type', { policy_ref: { policy_id: 'clothing_block:image.blocks.clothing:caged_lantern', variant: 'v1' } }, "Registry entry policy_ref type must be one of ['species_block']; got 'clothing_block' (clothing_block:image.blocks.clothing:caged_lantern:v1)."],
      ['policy_ref with a malformed id', { policy_ref: { policy_id: 'species_block:nokey', variant: 'v1' } }, "policy_id must be formatted as 'policy_type:namespace:policy_key'."],
      ['policy_ref to a missing variant', { policy_ref: { policy_id: 'species_block:image.blocks.species:cinderkin', variant: 'v9' } }, "Policy not found for id='species_block:image.blocks.species:cinderkin' variant='v9'."],
    ];
    for (const [name, extra, message] of refCases) {
      it(`409 when ${name}`, async () => {
        const err = await compileError(fixture((f) => speciesEntries(f).push(speciesEntry('aaa', { render_priority: 9, ...extra }))));
        expect(err.message).to.equal(message);
      });
    }

    it('409 when the referenced block text is blank', async () => {
      const err = await compileError(fixture((f) => (f.content('species_block:image.blocks.species:heron_folk').text = ' \n')));
      expect(err.message).to.equal('Policy variant content.text must be non-empty: species_block:image.blocks.species:heron_folk:v1');
    });

    it('reads policy_ref targets that are not activated', async () => {
      const result = await compileImagePrompt(fixture((f) => f.active.delete('species_block:image.blocks.species:heron_folk:v1')), request());
      expect(result.selected_species_block_id).to.equal('species_heron_folk');
    });
  });

  describe('clothing (step 9)', () => {
    it('ranks a fallback below a non-fallback match even with a higher priority', async () => {
      const result = await compileImagePrompt(
        fixture((f) => slot(f, 'accessory').push(clothingEntry('a_fallback_top', { fallback: true }, { render_priority: 100 }))),
        request({ occupationSignals: [] }),
      );
      expect(result.selected_clothing_slot_ids.accessory).to.equal('accessory_watch_chain');
    });

    it('takes the fallback when nothing else matches', async () => {
      const result = await compileImagePrompt(fixture(), request({ axes: { demeanor: { label: 'even', score: 0.5 } }, occupationSignals: [] }));
      expect(result.selected_clothing_slot_ids).to.deep.equal({ outerwear: 'outerwear_canal_jacket', accessory: 'accessory_ember_charm_cord' });
    });

    it('breaks ties by higher priority, then lower id', async () => {
      const result = await compileImagePrompt(fixture((f) => slot(f, 'outerwear').push(clothingEntry('outerwear_aaa', undefined, { render_priority: 10 }))), request({ axes: { wealth: { label: 'comfortable', score: 0.6 } }, occupationSignals: [] }));
      expect(result.selected_clothing_slot_ids.outerwear).to.equal('outerwear_aaa');
    });

    it('wealth_any uses the label of the `wealth` axis', async () => {
      const poor = await compileImagePrompt(fixture(), request({ axes: { wealth: { label: 'scraping', score: 0.2 } } }));
      expect(poor.selected_clothing_slot_ids.outerwear).to.equal('outerwear_oilskin_patched');
      const otherAxis = await compileImagePrompt(fixture(), request({ axes: { status: { label: 'moneyed', score: 0.9 } } }));
      expect(otherAxis.selected_clothing_slot_ids.outerwear).to.equal('outerwear_canal_jacket');
    });

    it('wealth_any that is not a list never matches', async () => {
      const result = await compileImagePrompt(fixture((f) => (slot(f, 'outerwear')[1]!.selection_rules.when.axis_labels.wealth_any = 'moneyed')), request());
      expect(result.selected_clothing_slot_ids.outerwear).to.equal('outerwear_canal_jacket');
    });

    it('world_context_any must intersect world_context', async () => {
      const night = await compileImagePrompt(fixture(), request({ occupationSignals: [], worldContext: ['night'] }));
      expect(night.selected_clothing_slot_ids.accessory).to.equal('accessory_caged_lantern');
      const day = await compileImagePrompt(fixture(), request({ occupationSignals: [], worldContext: ['day'] }));
      expect(day.selected_clothing_slot_ids.accessory).to.equal('accessory_watch_chain');
    });

    it('occupation_signal_any must intersect occupation_signals', async () => {
      const smith = await compileImagePrompt(fixture(), request({ occupationSignals: ['smith'] }));
      expect(smith.selected_clothing_slot_ids.outerwear).to.equal('outerwear_foundry_apron');
      expect(smith.selected_clothing_slot_ids.accessory).to.equal('accessory_watch_chain');
    });

    it('filters by status, block_type and gender', async () => {
      const source = fixture((f) =>
        slot(f, 'outerwear').push(
          clothingEntry('o_draft', undefined, { status: 'draft', render_priority: 99 }),
          clothingEntry('o_type', undefined, { block_type: 'clothing', render_priority: 99 }),
          clothingEntry('o_male', undefined, { compatible_genders: ['male'], render_priority: 99 }),
        ),
      );
      const result = await compileImagePrompt(source, request());
      expect(result.selected_clothing_slot_ids.outerwear).to.equal('outerwear_greatcoat_brass');
    });

    it('a slot with no candidate gets a null id and adds no text', async () => {
      const source = fixture((f) => (f.content(CLOTHING_REG).slots.accessory = []));
      const result = await compileImagePrompt(source, request());
      expect(result.selected_clothing_slot_ids).to.deep.equal({ outerwear: 'outerwear_greatcoat_brass', accessory: null });
      expect(result.compiled_prompt).to.include(`${text('clothing_block:image.blocks.clothing:greatcoat_brass').trim()}\n\n`);
      expect(result.compiled_prompt).not.to.include(text('clothing_block:image.blocks.clothing:lock_key_lanyard').trim());
    });

    it('slots not an object → no slots at all; profile id only when a string', async () => {
      const source = fixture((f) => {
        f.content(CLOTHING_REG).slots = [];
        f.content(CLOTHING_REG).defaults.profile_id = 7;
      });
      const result = await compileImagePrompt(source, request());
      expect(result.selected_clothing_slot_ids).to.deep.equal({});
      expect(result.selected_clothing_profile_id).to.equal(null);
    });

    it('slot texts follow composition_contract.slots order', async () => {
      const source = fixture((f) => (f.content(CLOTHING_REG).composition_contract.slots = ['accessory', 'outerwear']));
      const result = await compileImagePrompt(source, request());
      expect(Object.keys(result.selected_clothing_slot_ids)).to.deep.equal(['accessory', 'outerwear']);
      expect(result.compiled_prompt).to.include(`${text('clothing_block:image.blocks.clothing:lock_key_lanyard').trim()}\n${text('clothing_block:image.blocks.clothing:greatcoat_brass').trim()}`);
    });

    it('clothing policy_ref must be a clothing_block', async () => {
      const err = await compileError(fixture((f) => (slot(f, 'outerwear')[1]!.policy_ref = { policy_id: 'species_block:image.blocks.species:cinderkin', variant: 'v1' })));
      expect(err.message).to.equal("Registry entry policy_ref type must be one of ['clothing_block']; got 'species_block' (species_block:image.blocks.species:cinderkin:v1).");
    });
  });

  describe('tone block (step 10) and assembly (step 11)', () => {
    const toneCases: Array<[string, Json, string]> = [
      ['prompt_block as is', { prompt_block: ' Inked. ', linework_style: 'x' }, ' Inked. '],
      ['joined fields when prompt_block blank', { prompt_block: '  ', linework_style: ' a ', palette_descriptor: 'b..', presentation_context: '' }, 'a. b.'],
      ['joined fields when prompt_block missing', { linework_style: 'a.', palette_descriptor: 'b', presentation_context: 'c' }, 'a.. b. c.'],
      ['non-string fields skipped', { linework_style: 3, presentation_context: 'c' }, 'c.'],
      ['nothing usable', { prompt_block: '' }, ''],
    ];
    for (const [name, tone, expected] of toneCases) {
      it(`tone: ${name}`, () => {
        expect(toneBlock(tone)).to.equal(expected);
      });
    }

    it('uses the joined tone fields in the prompt', async () => {
      const result = await compileImagePrompt(fixture((f) => delete f.content(TONE_ID).prompt_block), request());
      const tone = fixtureContent(TONE_ID);
      expect(result.compiled_prompt.endsWith(`\n\n${tone.linework_style}. ${tone.palette_descriptor}. ${tone.presentation_context}.`)).to.equal(true);
    });

    it('follows composition_order, repeats duplicates, drops unknown names and empty blocks', async () => {
      const source = fixture((f) => {
        manifestOf(f).image.composition.order = ['tone_profile_block', 'mystery', 'species_canon_block', 'clothing_block', 'tone_profile_block'];
        f.content(TONE_ID).prompt_block = '  Tone.  ';
        f.content(CLOTHING_REG).slots = {};
      });
      const result = await compileImagePrompt(source, request());
      expect(result.compiled_prompt).to.equal(`Tone.\n\n${text('species_block:image.blocks.species:heron_folk').trim()}\n\nTone.`);
    });
  });

  describe('hashes and defaults (steps 12–13)', () => {
    it('is deterministic', async () => {
      const a = await compileImagePrompt(fixture(), request());
      const b = await compileImagePrompt(fixture(), request());
      expect(a).to.deep.equal(b);
    });

    it('axis order does not matter', async () => {
      const a = await compileImagePrompt(fixture(), request({ axes: { a: { label: 'x', score: 0.1 }, b: { label: 'y', score: 0.2 } } }));
      const b = await compileImagePrompt(fixture(), request({ axes: { b: { label: 'y', score: 0.2 }, a: { label: 'x', score: 0.1 } } }));
      expect(a.axis_hash).to.equal(b.axis_hash);
      expect(a.axis_hash).to.equal(payloadHash({ a: { label: 'x', score: 0.1 }, b: { label: 'y', score: 0.2 } }));
    });

    it('an integral score hashes as a Python float', async () => {
      const result = await compileImagePrompt(fixture(), request({ axes: { wealth: { label: 'moneyed', score: 1 } } }));
      expect(result.axis_hash).to.equal(payloadHash({ wealth: { label: 'moneyed', score: new PyFloat(1) } }));
      expect(result.axis_hash).not.to.equal(payloadHash({ wealth: { label: 'moneyed', score: 1 } }));
    });

    it('axes and gender stay out of policy_hash, but selection follows them', async () => {
      const base = await compileImagePrompt(fixture(), request());
      const male = await compileImagePrompt(fixture(), request({ gender: 'male' }));
      expect(male.policy_hash).to.equal(base.policy_hash);
      const otherAxes = await compileImagePrompt(fixture(), request({ axes: { wealth: { label: 'moneyed', score: 0.95 } } }));
      expect(otherAxes.policy_hash).to.equal(base.policy_hash);
      expect(otherAxes.axis_hash).not.to.equal(base.axis_hash);

      // A male-only entry changes what a male request selects, and so its policy_hash.
      const source = (): PolicySource => fixture((f) => slot(f, 'outerwear').push(clothingEntry('o_male', undefined, { compatible_genders: ['male'], render_priority: 99 })));
      const maleSel = await compileImagePrompt(source(), request({ gender: 'male' }));
      const femaleSel = await compileImagePrompt(source(), request({ gender: 'female' }));
      expect(maleSel.selected_clothing_slot_ids.outerwear).to.equal('o_male');
      expect(femaleSel.selected_clothing_slot_ids.outerwear).to.equal('outerwear_greatcoat_brass');
      expect(maleSel.policy_hash).not.to.equal(femaleSel.policy_hash);
    });

    it('policy data changes policy_hash', async () => {
      const base = await compileImagePrompt(fixture(), request());
      const changed = await compileImagePrompt(fixture((f) => (f.content(TONE_ID).linework_style = 'other')), request());
      expect(changed.policy_hash).not.to.equal(base.policy_hash);
      expect(changed.compiled_prompt).to.equal(base.compiled_prompt);
    });

    it('generation_defaults echo the request, empty strings fall back', async () => {
      const given = await compileImagePrompt(fixture(), request({ modelId: 'sdxl', aspectRatio: '3:4', seed: 42 }));
      expect(given.generation_defaults).to.deep.equal({ model_id: 'sdxl', aspect_ratio: '3:4', seed: 42 });
      const empty = await compileImagePrompt(fixture(), request({ modelId: '', aspectRatio: '', seed: null }));
      expect(empty.generation_defaults).to.deep.equal({ model_id: 'flux-2-klein-4b', aspect_ratio: '1:1', seed: null });
    });

    it('stringifies policy_bundle_version; non-string schema/bundle id become null', async () => {
      const result = await compileImagePrompt(
        fixture((f) => {
          manifestOf(f).policy_bundle = { id: 3, version: new PyFloat(2) };
          delete manifestOf(f).policy_schema;
        }),
        request(),
      );
      expect([result.policy_schema, result.policy_bundle_id, result.policy_bundle_version]).to.deep.equal([null, null, '2.0']);
    });
  });
});

describe('image compiler: imagePolicyBundle', () => {
  const axisRow = (): Json => fixtureContent('axis_bundle:axis.bundles:emberwick_axes');
  const axisBundle = (): { content: { axes: unknown; thresholds: unknown; resolution: unknown } } => ({
    content: { axes: axisRow().axes, thresholds: axisRow().thresholds, resolution: axisRow().resolution },
  });

  it('resolves the full emberwick bundle', () => {
    const bundle = imagePolicyBundle(fixture(), axisBundle(), null);
    const manifest = fixtureContent(MANIFEST_ID).manifest;
    expect(bundle).to.deep.equal({
      world_id: W,
      policy_schema: 'emberwick.policy.v1',
      policy_bundle_id: 'emberwick_core',
      policy_bundle_version: '1',
      policy_hash: payloadHash({
        manifest,
        axis_bundle: { axes: axisRow().axes, thresholds: axisRow().thresholds, resolution: axisRow().resolution },
        descriptor_layer_payload: fixtureContent(DESCRIPTOR_ID),
        tone_profile_payload: fixtureContent(TONE_ID),
        species_registry_payload: fixtureContent(SPECIES_REG),
        clothing_registry_payload: fixtureContent(CLOTHING_REG),
        composition_order: manifest.image.composition.order,
        required_runtime_inputs: manifest.image.composition.required_runtime_inputs,
        missing_components: [],
      }),
      composition_order: ['species_canon_block', 'descriptor_layer_output', 'clothing_block', 'tone_profile_block'],
      required_runtime_inputs: ['entity.species', 'entity.identity.gender', 'entity.axes'],
      descriptor_layer_path: 'descriptor_layer/image/descriptors/emberwick_descriptors/v1.json',
      tone_profile_path: 'tone_profile/image/tone_profiles/emberwick_ink_wash/v1.json',
      species_registry_path: 'registry/image/registries/species_registry/v1.json',
      clothing_registry_path: 'registry/image/registries/clothing_registry/v1.json',
      missing_components: [],
    });
  });

  it('lists a missing tone profile activation', () => {
    const bundle = imagePolicyBundle(fixture((f) => f.active.delete(`${TONE_ID}:v1`)), axisBundle(), null);
    expect(bundle.missing_components).to.deep.equal([`tone_profile: missing effective tone_profile activation for preferred policy_id '${TONE_ID}' in scope ${SCOPE}`]);
    const full = imagePolicyBundle(fixture(), axisBundle(), null);
    expect(bundle.policy_hash).not.to.equal(full.policy_hash);
  });

  it('lists unhinted none/ambiguous activations and non-object content', () => {
    const source = fixture((f) => {
      delete manifestOf(f).image.descriptor_layer;
      delete manifestOf(f).image.tone_profile;
      f.active.delete(`${TONE_ID}:v1`);
      f.variants.set('descriptor_layer:image.descriptors:other:v1', { policyId: 'descriptor_layer:image.descriptors:other', variant: 'v1', content: { text: 'x' } });
      f.active.add('descriptor_layer:image.descriptors:other:v1');
      f.variants.get(`${SPECIES_REG}:v1`)!.content = [] as unknown as Json;
      f.active.delete(`${CLOTHING_REG}:v1`);
    });
    const bundle = imagePolicyBundle(source, axisBundle(), null);
    expect(bundle.missing_components).to.deep.equal([
      `descriptor_layer: ambiguous effective descriptor_layer activation set in scope ${SCOPE}; found 2`,
      `tone_profile: missing effective tone_profile activation in scope ${SCOPE}`,
      `species_registry: policy content is not an object: ${SPECIES_REG}:v1`,
      `clothing_registry: missing effective registry activation for preferred policy_id '${CLOTHING_REG}' in scope ${SCOPE}`,
    ]);
    expect(bundle.descriptor_layer_path).to.equal(null);
  });

  it('lists invalid composition fields and uses []', () => {
    const bundle = imagePolicyBundle(fixture((f) => delete manifestOf(f).image.composition), axisBundle(), null);
    expect(bundle.composition_order).to.deep.equal([]);
    expect(bundle.required_runtime_inputs).to.deep.equal([]);
    expect(bundle.missing_components).to.deep.equal([
      'manifest field missing/invalid: image.composition.order',
      'manifest field missing/invalid: image.composition.required_runtime_inputs',
    ]);
  });

  it('a missing axis bundle adds `axis_bundle: <detail>` and hashes {}', () => {
    const detail = "No effective axis bundle activation found for axis_bundle:axis.bundles:emberwick_axes in scope (world_id='emberwick', client_profile='').";
    const bundle = imagePolicyBundle(fixture(), null, detail);
    expect(bundle.missing_components).to.deep.equal([`axis_bundle: ${detail}`]);
    const manifest = fixtureContent(MANIFEST_ID).manifest;
    expect(bundle.policy_hash).to.equal(
      payloadHash({
        manifest,
        axis_bundle: {},
        descriptor_layer_payload: fixtureContent(DESCRIPTOR_ID),
        tone_profile_payload: fixtureContent(TONE_ID),
        species_registry_payload: fixtureContent(SPECIES_REG),
        clothing_registry_payload: fixtureContent(CLOTHING_REG),
        composition_order: manifest.image.composition.order,
        required_runtime_inputs: manifest.image.composition.required_runtime_inputs,
        missing_components: [`axis_bundle: ${detail}`],
      }),
    );
  });

  it('manifest problems throw 404 / 409', () => {
    const missing = (): unknown => imagePolicyBundle(fixture((f) => f.active.delete(`${MANIFEST_ID}:v1`)), axisBundle(), null);
    expect(missing).to.throw(NotFound, `No effective manifest bundle activation found for scope ${SCOPE}.`);
    const invalid = (): unknown => imagePolicyBundle(fixture((f) => (f.content(MANIFEST_ID).manifest = 'x')), axisBundle(), null);
    expect(invalid).to.throw(Conflict, `Effective manifest bundle row is missing content.manifest object: ${MANIFEST_ID}:v1`);
  });
});

function fixtureContent(id: string): Json {
  return (ARTIFACT.variants as Json[]).find((v) => v.policy_id === id)!.content;
}
