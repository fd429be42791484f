/**
 * Policy validation rules, the slot_kinds of a response and the policy_id / scope grammar,
 * table-driven: every message exactly as the reference server words it, in its order.
 */
import { describe, it } from 'mocha';
import { expect } from 'chai';
import { DomainError, Unprocessable, type DomainErrorKind } from '../../src/shared/errors.ts';
import { parsePolicyId, parseScope, scopeFrom } from '../../src/services/policy/policy-model.ts';
import {
  MAX_CONTENT_BYTES,
  MAX_CONTENT_DEPTH,
  nestingDepth,
  slotKinds,
  validateVariant,
  type VariantDraft,
  type VariantExists,
} from '../../src/services/policy/policy-validation.ts';

const ID_INVALID = "policy_id must be formatted as 'policy_type:namespace:policy_key'.";
const STATUS_ERROR = 'status must be one of: draft, candidate, active, archived';
const LAYER1_LIST = "['clothing_block', 'image_block', 'location', 'prompt', 'species_block', 'tone_profile']";
const REFS_NOT_LIST = 'Layer 2 content.references must be a non-empty list.';

/** The variants a fake store holds: `<policy_id>\u0000<variant>`. */
const STORED = new Set(['species_block:image.blocks.species:goblin\u0000v1', 'prompt:translation.prompts.ic:default\u0000v2']);

/** A fake `exists` that records what it was asked. */
function fakeStore(): { exists: VariantExists; calls: Array<[string, string]> } {
  const calls: Array<[string, string]> = [];
  return {
    calls,
    exists: async (policyId, variant) => {
      calls.push([policyId, variant]);
      return STORED.has(`${policyId}\u0000${variant}`);
    },
  };
}

function draft(content: Record<string, unknown>, overrides: Partial<VariantDraft> = {}): VariantDraft {
  return { variant: 'v1', schemaVersion: '1.0', policyVersion: 1, status: 'draft', content, ...overrides };
}

async function validate(policyId: string, content: Record<string, unknown>, overrides: Partial<VariantDraft> = {}): Promise<string[]> {
  return validateVariant(parsePolicyId(policyId), draft(content, overrides), fakeStore().exists);
}

/** Runs `work` and returns the policy error it throws. */
function policyFailure(work: () => unknown): DomainError {
  try {
    work();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error('expected a policy error');
}

function expectPolicyError(err: DomainError, kind: DomainErrorKind, code: string, detail: string): void {
  expect(err).to.be.instanceOf(kind);
  expect(err.message).to.equal(detail);
  expect(err.extra).to.deep.equal({ code, stage: 'policy' });
}

/** A valid content object for every policy type (Layer 2 types reference a stored block). */
const VALID_CONTENT: Record<string, { id: string; content: Record<string, unknown> }> = {
  species_block: { id: 'species_block:image.blocks.species:goblin', content: { text: 'goblin text' } },
  clothing_block: { id: 'clothing_block:image.blocks.clothing:cloak', content: { text: 'a cloak' } },
  image_block: { id: 'image_block:image.blocks.style:ink', content: { text: 'ink wash' } },
  location: { id: 'location:image.locations:canal', content: { text: 'a canal' } },
  prompt: { id: 'prompt:translation.prompts.ic:default', content: { text: 'Speak in character.' } },
  tone_profile: { id: 'tone_profile:image.tones:grim', content: { prompt_block: 'grim and grey' } },
  axis_bundle: { id: 'axis_bundle:axis.bundles:core', content: { axes: { a: 1 }, thresholds: { a: 1 }, resolution: { version: '1' } } },
  manifest_bundle: { id: 'manifest_bundle:world.manifests:emberwick', content: { manifest: { axis: {} } } },
  descriptor_layer: {
    id: 'descriptor_layer:image.descriptors:base',
    content: { text: 'descriptor', references: [{ policy_id: 'species_block:image.blocks.species:goblin', variant: 'v1' }] },
  },
  registry: {
    id: 'registry:image.registries:species_registry',
    content: { references: [{ policy_id: 'species_block:image.blocks.species:goblin', variant: 'v1' }] },
  },
};

describe('policy_id grammar', () => {
  const parsed: Array<[string, { policyType: string; namespace: string; policyKey: string }]> = [
    ['species_block:image.blocks.species:goblin', { policyType: 'species_block', namespace: 'image.blocks.species', policyKey: 'goblin' }],
    ['prompt:a.b:key:extra', { policyType: 'prompt', namespace: 'a.b', policyKey: 'key:extra' }],
    ['prompt:a.b:key::x:', { policyType: 'prompt', namespace: 'a.b', policyKey: 'key::x:' }],
    [' prompt : a.b : key ', { policyType: 'prompt', namespace: 'a.b', policyKey: 'key' }],
  ];
  for (const [id, parts] of parsed) {
    it(`parses ${JSON.stringify(id)}`, () => {
      expect(parsePolicyId(id)).to.deep.equal(parts);
    });
  }

  const malformed = ['', 'prompt', 'prompt:ns', 'prompt::key', ':ns:key', 'prompt:ns:', '  :ns:key', 'prompt: :key', 'prompt:ns:  ', '::', ' : : ', 'widget::key'];
  for (const id of malformed) {
    it(`rejects ${JSON.stringify(id)} with POLICY_ID_INVALID (422)`, () => {
      expectPolicyError(policyFailure(() => parsePolicyId(id)), Unprocessable, 'POLICY_ID_INVALID', ID_INVALID);
    });
  }

  const unsupported: Array<[string, string]> = [
    ['widget:ns:key', "Unsupported policy_type: 'widget'"],
    ['Prompt:ns:key', "Unsupported policy_type: 'Prompt'"],
    [' speciesblock :ns:key', "Unsupported policy_type: 'speciesblock'"],
    ["it's:ns:key", `Unsupported policy_type: "it's"`],
  ];
  for (const [id, detail] of unsupported) {
    it(`rejects ${JSON.stringify(id)} with POLICY_TYPE_UNSUPPORTED (422) and a Python repr`, () => {
      expectPolicyError(policyFailure(() => parsePolicyId(id)), Unprocessable, 'POLICY_TYPE_UNSUPPORTED', detail);
    });
  }
});

describe('activation scope grammar', () => {
  const parsed: Array<[string, { worldId: string; clientProfile: string }]> = [
    ['emberwick', { worldId: 'emberwick', clientProfile: '' }],
    ['  emberwick  ', { worldId: 'emberwick', clientProfile: '' }],
    ['emberwick:mobile', { worldId: 'emberwick', clientProfile: 'mobile' }],
    [' emberwick : mobile ', { worldId: 'emberwick', clientProfile: 'mobile' }],
    ['emberwick:', { worldId: 'emberwick', clientProfile: '' }],
    ['emberwick:  ', { worldId: 'emberwick', clientProfile: '' }],
    ['emberwick:a:b', { worldId: 'emberwick', clientProfile: 'a:b' }],
  ];
  for (const [text, scope] of parsed) {
    it(`parses ${JSON.stringify(text)}`, () => {
      expect(parseScope(text)).to.deep.equal(scope);
    });
  }

  const invalid: Array<[string, string]> = [
    ['', 'Activation scope must not be empty.'],
    ['   ', 'Activation scope must not be empty.'],
    [':x', 'Scope world_id must not be empty.'],
    [' : x ', 'Scope world_id must not be empty.'],
    [':', 'Scope world_id must not be empty.'],
  ];
  for (const [text, detail] of invalid) {
    it(`rejects ${JSON.stringify(text)} with POLICY_SCOPE_INVALID (422)`, () => {
      expectPolicyError(policyFailure(() => parseScope(text)), Unprocessable, 'POLICY_SCOPE_INVALID', detail);
    });
  }

  it('builds the scope of a request body: null or absent client profile is the world scope', () => {
    expect(scopeFrom('emberwick', null)).to.deep.equal({ worldId: 'emberwick', clientProfile: '' });
    expect(scopeFrom('emberwick', undefined)).to.deep.equal({ worldId: 'emberwick', clientProfile: '' });
    expect(scopeFrom('emberwick', ' mobile ')).to.deep.equal({ worldId: 'emberwick', clientProfile: 'mobile' });
    expect(scopeFrom('emberwick', '')).to.deep.equal({ worldId: 'emberwick', clientProfile: '' });
    expectPolicyError(policyFailure(() => scopeFrom('  ', null)), Unprocessable, 'POLICY_SCOPE_INVALID', 'Activation scope must not be empty.');
    expectPolicyError(policyFailure(() => scopeFrom(' ', 'mobile')), Unprocessable, 'POLICY_SCOPE_INVALID', 'Scope world_id must not be empty.');
  });
});

describe('validateVariant: common field errors', () => {
  it('accepts a valid variant of every policy type', async () => {
    for (const [type, { id, content }] of Object.entries(VALID_CONTENT)) {
      expect(await validate(id, content), type).to.deep.equal([]);
    }
  });

  it('accepts every status, case-sensitively', async () => {
    for (const status of ['draft', 'candidate', 'active', 'archived']) {
      expect(await validate(VALID_CONTENT.prompt!.id, { text: 'x' }, { status })).to.deep.equal([]);
    }
    for (const status of ['Active', 'DRAFT', ' draft', 'published', '']) {
      expect(await validate(VALID_CONTENT.prompt!.id, { text: 'x' }, { status }), status).to.deep.equal([STATUS_ERROR]);
    }
  });

  const cases: Array<[string, Partial<VariantDraft>, string[]]> = [
    ['blank variant', { variant: '   ' }, ['variant must not be empty']],
    ['empty variant', { variant: '' }, ['variant must not be empty']],
    ['blank schema_version', { schemaVersion: ' ' }, ['schema_version must not be empty']],
    ['policy_version 0', { policyVersion: 0 }, ['policy_version must be >= 1']],
    ['negative policy_version', { policyVersion: -3 }, ['policy_version must be >= 1']],
    ['unknown status', { status: 'live' }, [STATUS_ERROR]],
  ];
  for (const [name, overrides, errors] of cases) {
    it(`reports ${name}`, async () => {
      expect(await validate(VALID_CONTENT.prompt!.id, { text: 'x' }, overrides)).to.deep.equal(errors);
    });
  }

  it('collects the common errors in order, then slot_kinds, then the type rule', async () => {
    const errors = await validate('prompt:a.b:c', { slot_kinds: [] }, { variant: ' ', schemaVersion: '', policyVersion: 0, status: 'Active' });
    expect(errors).to.deep.equal([
      'variant must not be empty',
      'schema_version must not be empty',
      'policy_version must be >= 1',
      STATUS_ERROR,
      'content.slot_kinds must not be empty when present',
      'prompt content.text must be a non-empty string',
    ]);
  });
});

describe('validateVariant: content.slot_kinds, for every policy type', () => {
  const cases: Array<[string, unknown, string | null]> = [
    ['a string', 'atmosphere', 'content.slot_kinds must be a list of strings when present'],
    ['an object', { a: 'b' }, 'content.slot_kinds must be a list of strings when present'],
    ['null', null, 'content.slot_kinds must be a list of strings when present'],
    ['a number', 3, 'content.slot_kinds must be a list of strings when present'],
    ['an empty list', [], 'content.slot_kinds must not be empty when present'],
    ['a blank first entry', ['  ', 'x'], 'content.slot_kinds[0] must be a non-empty string'],
    ['a number entry (stops at the first)', ['atmosphere', 3, ''], 'content.slot_kinds[1] must be a non-empty string'],
    ['a null entry', ['a', 'b', null], 'content.slot_kinds[2] must be a non-empty string'],
    ['an empty-string entry', ['a', ''], 'content.slot_kinds[1] must be a non-empty string'],
    ['valid kinds', ['atmosphere', ' atmosphere ', 'lighting'], null],
  ];
  for (const [type, { id, content }] of Object.entries(VALID_CONTENT)) {
    it(`${type}: checks slot_kinds before its own rule`, async () => {
      for (const [name, kinds, error] of cases) {
        expect(await validate(id, { ...content, slot_kinds: kinds }), name).to.deep.equal(error === null ? [] : [error]);
      }
      // With the type rule failing too, the slot_kinds error comes first.
      const broken = await validate(id, { slot_kinds: [] });
      expect(broken[0]).to.equal('content.slot_kinds must not be empty when present');
      expect(broken.length).to.be.greaterThan(1);
    });
  }
});

describe('validateVariant: per-type rules', () => {
  const textTypes: Array<[string, string]> = [
    ['species_block', 'species_block:image.blocks.species:goblin'],
    ['clothing_block', 'clothing_block:image.blocks.clothing:cloak'],
    ['image_block', 'image_block:image.blocks.style:ink'],
    ['location', 'location:image.locations:canal'],
    ['prompt', 'prompt:translation.prompts.ic:default'],
  ];
  const badTexts: Array<[string, Record<string, unknown>]> = [
    ['missing', {}],
    ['empty', { text: '' }],
    ['blank', { text: ' \n\t ' }],
    ['a number', { text: 5 }],
    ['a list', { text: ['a'] }],
    ['null', { text: null }],
  ];
  for (const [type, id] of textTypes) {
    it(`${type}: content.text must be a non-blank string`, async () => {
      for (const [name, content] of badTexts) {
        expect(await validate(id, content), name).to.deep.equal([`${type} content.text must be a non-empty string`]);
      }
      expect(await validate(id, { text: ' x ' })).to.deep.equal([]);
    });
  }

  it("species_block: the namespace must be exactly 'image.blocks.species' (before the text rule)", async () => {
    const nsError = "species_block namespace must be exactly 'image.blocks.species'.";
    expect(await validate('species_block:image.blocks.other:goblin', { text: 'goblin' })).to.deep.equal([nsError]);
    expect(await validate('species_block:Image.Blocks.Species:goblin', { text: 'goblin' })).to.deep.equal([nsError]);
    expect(await validate('species_block:image.blocks.species.x:goblin', {})).to.deep.equal([nsError, 'species_block content.text must be a non-empty string']);
    // The namespace is checked after stripping (the id parser strips each part).
    expect(await validate('species_block: image.blocks.species :goblin', { text: 'goblin' })).to.deep.equal([]);
  });

  it('tone_profile: content.prompt_block must be a non-blank string (text is not enough)', async () => {
    const error = 'tone_profile content.prompt_block must be a non-empty string';
    const id = 'tone_profile:image.tones:grim';
    for (const content of [{}, { text: 'grim' }, { prompt_block: '' }, { prompt_block: '  ' }, { prompt_block: 1 }, { prompt_block: { a: 1 } }]) {
      expect(await validate(id, content), JSON.stringify(content)).to.deep.equal([error]);
    }
    expect(await validate(id, { prompt_block: 'grim' })).to.deep.equal([]);
  });

  it('axis_bundle: axes, thresholds and resolution must each be a non-empty object (one message per key)', async () => {
    const id = 'axis_bundle:axis.bundles:core';
    const msg = (key: string): string => `axis_bundle content.${key} must be a non-empty object`;
    expect(await validate(id, {})).to.deep.equal([msg('axes'), msg('thresholds'), msg('resolution')]);
    expect(await validate(id, { axes: {}, thresholds: [], resolution: 'x' })).to.deep.equal([msg('axes'), msg('thresholds'), msg('resolution')]);
    expect(await validate(id, { axes: { a: 1 }, thresholds: null, resolution: { v: 1 } })).to.deep.equal([msg('thresholds')]);
    expect(await validate(id, { axes: [1], thresholds: { a: 1 }, resolution: { v: 1 } })).to.deep.equal([msg('axes')]);
    expect(await validate(id, { axes: { a: 1 }, thresholds: { a: 1 }, resolution: {} })).to.deep.equal([msg('resolution')]);
  });

  it('manifest_bundle: content.manifest must be a non-empty object', async () => {
    const id = 'manifest_bundle:world.manifests:emberwick';
    const error = 'manifest_bundle content.manifest must be a non-empty object';
    for (const content of [{}, { manifest: {} }, { manifest: [] }, { manifest: ['a'] }, { manifest: 'm' }, { manifest: null }]) {
      expect(await validate(id, content), JSON.stringify(content)).to.deep.equal([error]);
    }
    expect(await validate(id, { manifest: { a: 1 } })).to.deep.equal([]);
  });
});

describe('validateVariant: Layer 2 reference rules', () => {
  const REGISTRY = 'registry:image.registries:species_registry';
  const DESCRIPTOR = 'descriptor_layer:image.descriptors:base';
  const GOBLIN = { policy_id: 'species_block:image.blocks.species:goblin', variant: 'v1' };

  it('content.references must be a non-empty list (one error, nothing else checked)', async () => {
    for (const references of [undefined, null, [], {}, 'x', { policy_id: GOBLIN.policy_id, variant: 'v1' }]) {
      const content = references === undefined ? {} : { references };
      expect(await validate(REGISTRY, content), JSON.stringify(references)).to.deep.equal([REFS_NOT_LIST]);
    }
  });

  it('descriptor_layer: the reference rules, then content.text', async () => {
    const textError = 'descriptor_layer content.text must be a non-empty string';
    expect(await validate(DESCRIPTOR, {})).to.deep.equal([REFS_NOT_LIST, textError]);
    expect(await validate(DESCRIPTOR, { references: [GOBLIN], text: '  ' })).to.deep.equal([textError]);
    expect(await validate(DESCRIPTOR, { references: [{ ...GOBLIN, variant: 'v9' }] })).to.deep.equal([
      'content.references[0] references missing Layer 1 variant: species_block:image.blocks.species:goblin:v9',
      textError,
    ]);
    expect(await validate(DESCRIPTOR, { references: [GOBLIN], text: 'ok' })).to.deep.equal([]);
  });

  const elementCases: Array<[string, unknown, string]> = [
    ['a number', 5, 'content.references[0] must be an object with policy_id and variant.'],
    ['a string', 'species_block:image.blocks.species:goblin', 'content.references[0] must be an object with policy_id and variant.'],
    ['a list', [GOBLIN], 'content.references[0] must be an object with policy_id and variant.'],
    ['null', null, 'content.references[0] must be an object with policy_id and variant.'],
    ['no policy_id', { variant: 'v1' }, 'content.references[0].policy_id must be a non-empty string.'],
    ['a blank policy_id', { policy_id: '  ', variant: 'v1' }, 'content.references[0].policy_id must be a non-empty string.'],
    ['a numeric policy_id (and no variant)', { policy_id: 7 }, 'content.references[0].policy_id must be a non-empty string.'],
    ['no variant', { policy_id: GOBLIN.policy_id }, 'content.references[0].variant must be a non-empty string.'],
    ['a blank variant', { policy_id: GOBLIN.policy_id, variant: ' ' }, 'content.references[0].variant must be a non-empty string.'],
    ['a malformed policy_id', { policy_id: 'goblin', variant: 'v1' }, `content.references[0].policy_id is invalid: ${ID_INVALID}`],
    ['a policy_id with a blank part', { policy_id: 'prompt::x', variant: 'v1' }, `content.references[0].policy_id is invalid: ${ID_INVALID}`],
    ['an unknown type', { policy_id: 'widget:a:b', variant: 'v1' }, "content.references[0].policy_id is invalid: Unsupported policy_type: 'widget'"],
    ...(['registry', 'descriptor_layer', 'axis_bundle', 'manifest_bundle'] as const).map(
      (type): [string, unknown, string] => [
        `a reference to a ${type}`,
        { policy_id: `${type}:ns:key`, variant: 'v1' },
        `content.references[0].policy_id must reference a Layer 1 policy type ${LAYER1_LIST}; got '${type}'.`,
      ],
    ),
    ['a missing block', { policy_id: 'species_block:image.blocks.species:elf', variant: 'v1' }, 'content.references[0] references missing Layer 1 variant: species_block:image.blocks.species:elf:v1'],
    ['a missing variant of a stored block', { policy_id: GOBLIN.policy_id, variant: 'v2' }, `content.references[0] references missing Layer 1 variant: ${GOBLIN.policy_id}:v2`],
  ];
  for (const [name, element, error] of elementCases) {
    it(`registry: an element that is ${name}`, async () => {
      expect(await validate(REGISTRY, { references: [element] })).to.deep.equal([error]);
    });
  }

  it('accepts references to every Layer 1 type that exists', async () => {
    const layer1 = ['clothing_block', 'image_block', 'location', 'prompt', 'species_block', 'tone_profile'];
    const all = new Set(layer1.map((t) => `${t}:ns:key\u0000v1`));
    const exists: VariantExists = async (p, v) => all.has(`${p}\u0000${v}`);
    const references = layer1.map((t) => ({ policy_id: `${t}:ns:key`, variant: 'v1' }));
    expect(await validateVariant(parsePolicyId(REGISTRY), draft({ references }), exists)).to.deep.equal([]);
  });

  it('checks every element, at most one error each, and asks the store only about well-formed Layer 1 references', async () => {
    const store = fakeStore();
    const references = [
      GOBLIN,
      7,
      { policy_id: 'registry:x:y', variant: 'v1' },
      { policy_id: 'prompt:translation.prompts.ic:default', variant: 'v2' },
      { policy_id: 'prompt:translation.prompts.ic:default', variant: 'v3' },
      { policy_id: 'nope', variant: '' },
      { policy_id: ' prompt : x : y ', variant: 'v1' },
    ];
    const errors = await validateVariant(parsePolicyId(REGISTRY), draft({ references }), store.exists);
    expect(errors).to.deep.equal([
      'content.references[1] must be an object with policy_id and variant.',
      `content.references[2].policy_id must reference a Layer 1 policy type ${LAYER1_LIST}; got 'registry'.`,
      'content.references[4] references missing Layer 1 variant: prompt:translation.prompts.ic:default:v3',
      'content.references[5].variant must be a non-empty string.',
      'content.references[6] references missing Layer 1 variant:  prompt : x : y :v1',
    ]);
    // The store sees the raw policy_id and variant of each reference that got that far.
    expect(store.calls).to.deep.equal([
      [GOBLIN.policy_id, 'v1'],
      ['prompt:translation.prompts.ic:default', 'v2'],
      ['prompt:translation.prompts.ic:default', 'v3'],
      [' prompt : x : y ', 'v1'],
    ]);
  });

  it('no Layer 2 rules for other types (references are ignored there)', async () => {
    expect(await validate('prompt:a:b', { text: 'x', references: 'nonsense' })).to.deep.equal([]);
  });
});

describe('slot_kinds of a response', () => {
  const cases: Array<[string, Record<string, unknown>, string, string[]]> = [
    ['authored kinds, trimmed and de-duplicated', { slot_kinds: ['atmosphere', ' atmosphere ', 'lighting'] }, 'image.blocks.style', ['atmosphere', 'lighting']],
    ['non-strings and blanks dropped', { slot_kinds: [3, '  ', 'b', null, 'a', 'b '] }, 'ns', ['b', 'a']],
    ['no authored kinds', {}, 'image.blocks.species', ['image.blocks.species']],
    ['an empty list', { slot_kinds: [] }, 'ns.x', ['ns.x']],
    ['nothing usable in the list', { slot_kinds: ['', ' ', 4] }, 'ns.x', ['ns.x']],
    ['not a list', { slot_kinds: 'atmosphere' }, 'ns.x', ['ns.x']],
    ['a blank namespace', {}, '  ', []],
  ];
  for (const [name, content, namespace, expected] of cases) {
    it(name, () => {
      expect(slotKinds(content, namespace)).to.deep.equal(expected);
    });
  }
});

describe('content bounds (issue 13)', () => {
  const PROMPT = 'prompt:translation.prompts.ic:default';
  const DEPTH_ERROR = `content must not be nested more than ${MAX_CONTENT_DEPTH} levels deep`;
  const SIZE_ERROR = `content must not be larger than ${MAX_CONTENT_BYTES} bytes as canonical JSON`;

  /** `{"text": "t", "n": {"n": ... }}` with `levels` levels in all (the content object is one). */
  function nested(levels: number): Record<string, unknown> {
    let inner: Record<string, unknown> = { leaf: true };
    for (let i = 2; i < levels; i++) inner = { n: inner };
    return { text: 't', n: inner };
  }

  it('measures nesting iteratively, whatever the depth', () => {
    expect(nestingDepth('x', 5)).to.equal(0);
    expect(nestingDepth({}, 5)).to.equal(1);
    expect(nestingDepth({ a: [1, { b: [] }] }, 5)).to.equal(4);
    expect(nestingDepth(nested(MAX_CONTENT_DEPTH), 100)).to.equal(MAX_CONTENT_DEPTH);
    // Far deeper than any recursion could go; counting stops past the limit.
    const chain = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    expect(nestingDepth(chain, MAX_CONTENT_DEPTH)).to.equal(MAX_CONTENT_DEPTH + 1);
  });

  it(`accepts ${MAX_CONTENT_DEPTH} levels and refuses ${MAX_CONTENT_DEPTH + 1}`, async () => {
    expect(await validate(PROMPT, nested(MAX_CONTENT_DEPTH))).to.deep.equal([]);
    expect(await validate(PROMPT, nested(MAX_CONTENT_DEPTH + 1))).to.deep.equal([DEPTH_ERROR]);
    expect(await validate(PROMPT, { text: 't', deep: JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) })).to.deep.equal([DEPTH_ERROR]);
  });

  it(`accepts ${MAX_CONTENT_BYTES} bytes of canonical JSON (UTF-8) and refuses one more`, async () => {
    // {"text": "<filler>"} is 12 bytes around the filler.
    const exact = { text: 'a'.repeat(MAX_CONTENT_BYTES - 12) };
    expect(await validate(PROMPT, exact)).to.deep.equal([]);
    expect(await validate(PROMPT, { text: `${'a'.repeat(MAX_CONTENT_BYTES - 13)}é` })).to.deep.equal([SIZE_ERROR]);
    // Sizes count the canonical form (", " and ": "), not the compact one a client may send.
    const list = Array.from({ length: MAX_CONTENT_BYTES / 3 }, () => 0);
    expect(JSON.stringify({ text: 't', list }).length).to.be.below(MAX_CONTENT_BYTES);
    expect(await validate(PROMPT, { text: 't', list })).to.deep.equal([SIZE_ERROR]);
  });
});
