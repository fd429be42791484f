/**
 * Condition-axis generation through HTTP: the built-in generator (provenance, determinism,
 * random seeds, any role), the strict body at every nesting level, the order of world and
 * policy checks, and the HTTP entity-state upstream (labels through thresholds, numbers
 * winning, timeouts, failures, incomplete payloads, version and capabilities).
 */
import { describe, it, before, beforeEach, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { closedPortUrl, startFakeUpstream, type CannedResponse, type FakeUpstream } from '../helpers/fake-upstream.ts';

const PATH = '/api/pipeline/condition-axis/generate';
const INVALID_SESSION = 'Invalid or expired session';
const INVALID_BODY = {
  detail: 'Invalid request payload for condition-axis generation.',
  code: 'CONDITION_AXIS_VALIDATION_ERROR',
  stage: 'axis_input',
};
const AXES = ['demeanor', 'health', 'physique', 'wealth'];
const HEX64 = /^[0-9a-f]{64}$/;
const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const RESPONSE_KEYS = ['world_id', 'bundle_id', 'bundle_version', 'policy_hash', 'seed', 'axes', 'provenance'];
const UNSUPPORTED_UPSTREAM = 'Condition-axis generation is not available in the current upstream configuration.';
const TIMEOUT = 'Timed out waiting for upstream condition-axis generation.';
const GENERATION_FAILED = 'Failed to generate condition axis from upstream entity generator.';

let seq = 0;
const uname = (prefix: string): string => `${prefix}${++seq}`;

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    world_id: 'emberwick',
    inputs: { entity: { identity: { gender: 'female' }, species: 'heron_folk' } },
    ...overrides,
  };
}

function generate(server: TestServer, session: string | null, payload: unknown): Promise<HttpResponse> {
  const query = session === null ? '' : `?session_id=${encodeURIComponent(session)}`;
  return server.post(`${PATH}${query}`, payload);
}

function expectAxisError(res: HttpResponse, status: number, code: string, detail: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.deep.equal({ detail, code, stage: 'axis_input' });
}

describe('condition-axis generation (builtin generator)', function () {
  let server: TestServer;
  let player: string;

  before(async () => {
    server = await startTestServer();
    player = await sessionFor(server, uname('axisp'), 'player');
  });
  after(async () => {
    await server?.close();
  });

  it('answers a body that is not well-formed JSON with 400 {detail}, as the contract documents', async () => {
    const res = await generate(server, player, '{"world_id": "emberwick",');
    expect(res.status, res.text).to.equal(400);
    expect(res.body).to.deep.equal({ detail: 'Malformed JSON in request body' });
  });

  it('answers the bundle, the axes and the provenance for a given seed, for a player', async () => {
    const before = new Date(server.clock.now().getTime() - 1000);
    const res = await generate(server, player, body({ seed: 12345 }));
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal([...RESPONSE_KEYS].sort());
    expect(res.body.world_id).to.equal('emberwick');
    expect(res.body.bundle_id).to.equal('emberwick_axes');
    expect(res.body.bundle_version).to.equal('1');
    expect(res.body.policy_hash).to.match(HEX64);
    expect(res.body.seed).to.equal(12345);
    expect(Object.keys(res.body.axes)).to.deep.equal(AXES);
    for (const value of Object.values(res.body.axes)) {
      expect(value).to.be.a('number').within(0, 1);
    }
    const p = res.body.provenance;
    expect(p).to.deep.include({
      source: 'mud_server_canonical',
      served_via: PATH,
      generator: 'entity_state_generation',
      generator_version: 'builtin-1',
      generator_capabilities: ['numeric_axes', 'label_axes'],
    });
    expect(p.generated_at).to.match(ISO_SECONDS);
    expect(Date.parse(p.generated_at)).to.be.at.least(before.getTime());
  });

  it('is deterministic for a seed and accepts a matching bundle_id and unused entity axes', async () => {
    const first = await generate(server, player, body({ seed: 777 }));
    const second = await generate(
      server,
      player,
      body({ seed: 777, bundle_id: 'emberwick_axes', inputs: { entity: { identity: { gender: 'male' }, species: 'human', axes: { wealth: 0.1 } } } }),
    );
    expect(first.status, first.text).to.equal(200);
    expect(second.status, second.text).to.equal(200);
    expect(second.body.axes).to.deep.equal(first.body.axes);
    expect(second.body.policy_hash).to.equal(first.body.policy_hash);
    const other = await generate(server, player, body({ seed: 778 }));
    expect(other.body.axes).to.not.deep.equal(first.body.axes);
  });

  it('draws a random seed in range when none (or null) is given', async () => {
    const seeds = new Set<number>();
    for (const extra of [{}, { seed: null }, {}]) {
      const res = await generate(server, player, body(extra));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.seed).to.be.a('number');
      expect(Number.isInteger(res.body.seed)).to.equal(true);
      expect(res.body.seed).to.be.within(1, 2147483647);
      seeds.add(res.body.seed);
    }
    expect(seeds.size).to.be.greaterThan(1);
  });

  it('accepts the highest and lowest seeds', async () => {
    for (const seed of [1, 2147483647]) {
      const res = await generate(server, player, body({ seed }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.seed).to.equal(seed);
    }
  });

  it('answers 401 without a session or with an unknown one', async () => {
    for (const session of [null, 'no-such-session']) {
      const res = await generate(server, session, body({ seed: 3 }));
      expect(res.status, res.text).to.equal(401);
      expect(res.body).to.deep.equal({ detail: INVALID_SESSION });
    }
  });

  describe('strict body: 422 CONDITION_AXIS_VALIDATION_ERROR', () => {
    const entity = { identity: { gender: 'female' }, species: 'heron_folk' };
    const cases: Array<[string, unknown]> = [
      ['an unknown top-level key', body({ extra: 1 })],
      ['an unknown key in inputs', body({ inputs: { entity, extra: 1 } })],
      ['an unknown key in entity', body({ inputs: { entity: { ...entity, extra: 1 } } })],
      ['an unknown key in identity', body({ inputs: { entity: { ...entity, identity: { gender: 'female', extra: 1 } } } })],
      ['world_id missing', { inputs: { entity } }],
      ['inputs missing', { world_id: 'emberwick' }],
      ['entity missing', body({ inputs: {} })],
      ['identity missing', body({ inputs: { entity: { species: 'heron_folk' } } })],
      ['gender missing', body({ inputs: { entity: { identity: {}, species: 'heron_folk' } } })],
      ['species missing', body({ inputs: { entity: { identity: { gender: 'female' } } } })],
      ['world_id not a string', body({ world_id: 7 })],
      ['seed a string', body({ seed: '12' })],
      ['seed not an integer', body({ seed: 1.5 })],
      ['seed 0', body({ seed: 0 })],
      ['seed 2147483648', body({ seed: 2147483648 })],
      ['seed negative', body({ seed: -5 })],
      ['bundle_id a number', body({ bundle_id: 3 })],
      ['gender a number', body({ inputs: { entity: { identity: { gender: 1 }, species: 'heron_folk' } } })],
      ['species null', body({ inputs: { entity: { identity: { gender: 'female' }, species: null } } })],
      ['entity axes a list', body({ inputs: { entity: { ...entity, axes: [1] } } })],
      ['inputs a string', body({ inputs: 'x' })],
      ['the body a list', [body()]],
    ];
    for (const [name, payload] of cases) {
      it(name, async () => {
        const res = await generate(server, player, payload);
        expect(res.status, res.text).to.equal(422);
        expect(res.body).to.deep.equal(INVALID_BODY);
      });
    }

    it('blank gender and species name the missing runtime inputs, sorted', async () => {
      const res = await generate(server, player, body({ inputs: { entity: { identity: { gender: '  ' }, species: '' } } }));
      expectAxisError(
        res,
        422,
        'CONDITION_AXIS_VALIDATION_ERROR',
        'Invalid request payload for condition-axis generation. Missing required runtime inputs: entity.identity.gender, entity.species.',
      );
      const one = await generate(server, player, body({ inputs: { entity: { identity: { gender: 'female' }, species: ' ' } } }));
      expectAxisError(one, 422, 'CONDITION_AXIS_VALIDATION_ERROR', 'Invalid request payload for condition-axis generation. Missing required runtime inputs: entity.species.');
    });
  });

  it('answers 404 for an unknown world before the bundle is checked', async () => {
    const res = await generate(server, player, body({ world_id: 'atlantis', bundle_id: 'nope' }));
    expectAxisError(res, 404, 'CONDITION_AXIS_WORLD_NOT_FOUND', "World 'atlantis' not found or inactive.");
  });

  it('answers 501 for a world without an axis policy activation', async () => {
    const res = await generate(server, player, body({ world_id: 'hollow_spire', seed: 5 }));
    expectAxisError(res, 501, 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED', 'Condition-axis generation is not available in the current canonical policy activation state.');
  });

  it('answers 404 for a bundle_id other than the active axis bundle', async () => {
    const res = await generate(server, player, body({ bundle_id: 'other_axes' }));
    expectAxisError(res, 404, 'CONDITION_AXIS_BUNDLE_NOT_FOUND', "Requested bundle 'other_axes' is not available for world 'emberwick'.");
  });

  it('keeps no entity-state counters in builtin mode', () => {
    expect(server.services.entityStateCounters()).to.equal(null);
  });
});

describe('condition-axis generation (HTTP entity-state upstream)', function () {
  let upstream: FakeUpstream;
  let server: TestServer;
  let player: string;
  let queue: CannedResponse[];

  const FULL_LABELS = {
    axes: { demeanor: 0.33 },
    character: { health: 'Hardy', physique: { label: 'broad' } },
    occupation: { wealth: { value: 'moneyed' }, demeanor: 'brazen' },
  };

  before(async () => {
    // Request i of a test gets queue[i] (requests are cleared before each test).
    upstream = await startFakeUpstream((_req, _res, index) => queue[index] ?? { status: 599, body: 'no canned response left' });
    server = await startTestServer({
      env: {
        MUD_ENTITY_STATE_MODE: 'http',
        MUD_ENTITY_STATE_BASE_URL: `${upstream.url}/`,
        MUD_ENTITY_STATE_TIMEOUT_SECONDS: '0.3',
      },
    });
    player = await sessionFor(server, uname('axish'), 'player');
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    queue = [];
  });

  it('maps labels through the thresholds, lets numbers win, and sends only {seed, include_prompts}', async () => {
    queue = [{ body: { ...FULL_LABELS, generator_version: 'es-2.1', generator_capabilities: ['labels', 'numeric'] }, headers: { 'X-Generator-Capabilities': 'numeric, prompts' } }];
    const res = await generate(server, player, body({ seed: 4242 }));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.axes).to.deep.equal({ demeanor: 0.33, health: 0.875, physique: 0.85, wealth: 0.875 });
    expect(res.body.seed).to.equal(4242);
    expect(res.body.provenance.generator_version).to.equal('es-2.1');
    expect(res.body.provenance.generator_capabilities).to.deep.equal(['labels', 'numeric', 'prompts']);
    expect(res.body.provenance.generated_at).to.match(ISO_SECONDS);
    expect(upstream.requests).to.have.length(1);
    expect(upstream.requests[0]!.method).to.equal('POST');
    expect(upstream.requests[0]!.url).to.equal('/api/entity');
    expect(upstream.requests[0]!.body).to.deep.equal({ seed: 4242, include_prompts: false });
  });

  it('takes the version and capabilities from the headers and generated_at from the payload', async () => {
    queue = [
      {
        body: { ...FULL_LABELS, generated_at: '2030-01-02T03:04:05Z' },
        headers: { 'X-Generator-Version': 'hdr-9', 'X-Generator-Capabilities': 'a,b, a' },
      },
    ];
    const res = await generate(server, player, body({ seed: 9 }));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.provenance).to.deep.equal({
      source: 'mud_server_canonical',
      served_via: PATH,
      generator: 'entity_state_generation',
      generator_version: 'hdr-9',
      generator_capabilities: ['a', 'b'],
      generated_at: '2030-01-02T03:04:05Z',
    });
  });

  it("uses payload 'version' and reports 'unknown' and no capabilities otherwise", async () => {
    queue = [{ body: { ...FULL_LABELS, version: 'v-7' } }, { body: FULL_LABELS }];
    const first = await generate(server, player, body({ seed: 10 }));
    expect(first.status, first.text).to.equal(200);
    expect(first.body.provenance.generator_version).to.equal('v-7');
    const second = await generate(server, player, body({ seed: 11 }));
    expect(second.status, second.text).to.equal(200);
    expect(second.body.provenance.generator_version).to.equal('unknown');
    expect(second.body.provenance.generator_capabilities).to.deep.equal([]);
  });

  it('answers 504 after two slow attempts', async () => {
    queue = [{ delayMs: 1500, body: FULL_LABELS }, { delayMs: 1500, body: FULL_LABELS }];
    const res = await generate(server, player, body({ seed: 12 }));
    expectAxisError(res, 504, 'CONDITION_AXIS_UPSTREAM_TIMEOUT', TIMEOUT);
    expect(upstream.requests).to.have.length(2);
  });

  it('retries one slow attempt and succeeds', async () => {
    queue = [{ delayMs: 1500, body: FULL_LABELS }, { body: FULL_LABELS }];
    const res = await generate(server, player, body({ seed: 13 }));
    expect(res.status, res.text).to.equal(200);
    expect(upstream.requests).to.have.length(2);
  });

  it('answers 504 after two HTTP 504s', async () => {
    queue = [{ status: 504 }, { status: 408 }];
    const res = await generate(server, player, body({ seed: 14 }));
    expectAxisError(res, 504, 'CONDITION_AXIS_UPSTREAM_TIMEOUT', TIMEOUT);
    expect(upstream.requests).to.have.length(2);
  });

  it('answers 502 at once for an upstream 500', async () => {
    queue = [{ status: 500, body: { error: 'boom' } }];
    const res = await generate(server, player, body({ seed: 15 }));
    expectAxisError(res, 502, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', GENERATION_FAILED);
    expect(upstream.requests).to.have.length(1);
  });

  it('answers 502 for a body that is not JSON or not an object', async () => {
    queue = [{ body: 'not json' }, { body: [1, 2] }];
    for (const seed of [16, 17]) {
      const res = await generate(server, player, body({ seed }));
      expectAxisError(res, 502, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', GENERATION_FAILED);
    }
  });

  it('answers 501 at once for an upstream 404', async () => {
    queue = [{ status: 404 }];
    const res = await generate(server, player, body({ seed: 18 }));
    expectAxisError(res, 501, 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED', UNSUPPORTED_UPSTREAM);
    expect(upstream.requests).to.have.length(1);
  });

  it('answers 502 INCOMPLETE naming the missing policy axes, sorted', async () => {
    queue = [{ body: { axes: { Demeanor: 0.2 }, character: { health: 'sound', unknown_axis: 'whatever' }, occupation: { title: 0.4 } } }];
    const res = await generate(server, player, body({ seed: 19 }));
    expectAxisError(res, 502, 'CONDITION_AXIS_UPSTREAM_INCOMPLETE', 'Upstream condition-axis payload is missing required policy axes: physique, wealth.');
  });

  it('answers 502 GENERATION_FAILED when no axis can be read', async () => {
    queue = [{ body: { axes: {}, character: { health: 'nonsense' } } }];
    const res = await generate(server, player, body({ seed: 20 }));
    expectAxisError(res, 502, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', GENERATION_FAILED);
  });

  it('checks world, policy and inputs before calling the upstream', async () => {
    for (const payload of [body({ world_id: 'atlantis' }), body({ world_id: 'hollow_spire' }), body({ bundle_id: 'x' }), body({ inputs: { entity: { identity: { gender: '' }, species: 'x' } } })]) {
      const res = await generate(server, player, payload);
      expect(res.status, res.text).to.be.oneOf([404, 422, 501]);
    }
    expect(upstream.requests).to.have.length(0);
  });

  it('exposes the shared client counters', async () => {
    const counters = server.services.entityStateCounters();
    expect(counters).to.not.equal(null);
    const c = counters!;
    const outcomes =
      c.success_total + c.timeouts_total + c.request_exceptions_total + c.unsupported_total + c.http_failures_total + c.json_failures_total + c.shape_failures_total;
    expect(c.requests_total).to.equal(outcomes);
    expect(c.requests_total).to.be.at.least(12);
    expect(c.timeouts_total).to.be.at.least(2);
    expect(c.unsupported_total).to.be.at.least(1);
    expect(c.retries_total).to.be.at.least(3);
  });
});

describe('condition-axis generation (upstream down)', function () {
  let server: TestServer;
  let player: string;

  before(async () => {
    server = await startTestServer({
      env: { MUD_ENTITY_STATE_MODE: 'http', MUD_ENTITY_STATE_BASE_URL: await closedPortUrl(), MUD_ENTITY_STATE_TIMEOUT_SECONDS: '0.3' },
    });
    player = await sessionFor(server, uname('axisd'), 'player');
  });
  after(async () => {
    await server?.close();
  });

  it('answers 502 after two refused connections', async () => {
    const res = await generate(server, player, body({ seed: 21 }));
    expectAxisError(res, 502, 'CONDITION_AXIS_UPSTREAM_GENERATION_FAILED', GENERATION_FAILED);
    expect(server.services.entityStateCounters()).to.deep.include({ requests_total: 1, retries_total: 1, request_exceptions_total: 1 });
  });
});
