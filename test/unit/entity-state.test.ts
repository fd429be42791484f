import { expect } from 'chai';
import { afterEach, describe, it } from 'mocha';
import {
  EntityStateError,
  HttpEntityStateClient,
} from '../../src/integrations/entity-state.ts';
import type { EntityStateCounters, EntityStateFailure } from '../../src/integrations/entity-state.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { closedPortUrl, startFakeUpstream } from '../helpers/fake-upstream.ts';
import type { CannedResponse, FakeUpstream } from '../helpers/fake-upstream.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';

// Exact client-facing texts, written out literally on purpose.
const UNSUPPORTED = 'Condition-axis generation is not available in the current upstream configuration.';
const TIMEOUT = 'Timed out waiting for upstream condition-axis generation.';
const FAILED = 'Failed to generate condition axis from upstream entity generator.';

const ZERO: EntityStateCounters = {
  requests_total: 0,
  retries_total: 0,
  timeouts_total: 0,
  request_exceptions_total: 0,
  unsupported_total: 0,
  http_failures_total: 0,
  json_failures_total: 0,
  shape_failures_total: 0,
  success_total: 0,
};

describe('HttpEntityStateClient', () => {
  let upstream: FakeUpstream | null = null;
  let logs: MemoryTransport;

  afterEach(async () => {
    await upstream?.close();
    upstream = null;
  });

  function client(baseUrl: string, options: { timeoutMs?: number; includePrompts?: boolean } = {}): HttpEntityStateClient {
    logs = new MemoryTransport();
    return new HttpEntityStateClient({
      baseUrl,
      timeoutMs: options.timeoutMs ?? 2000,
      includePrompts: options.includePrompts ?? false,
      logger: createLogger('debug', [logs]),
      backoffMs: 10,
    });
  }

  async function withUpstream(
    responses: CannedResponse[],
    options: { timeoutMs?: number; includePrompts?: boolean } = {},
  ): Promise<HttpEntityStateClient> {
    upstream = await startFakeUpstream(responses);
    return client(upstream.url, options);
  }

  async function failure(promise: Promise<unknown>, kind: EntityStateFailure, message: string): Promise<void> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(EntityStateError);
      expect((err as EntityStateError).failure).to.equal(kind);
      expect((err as EntityStateError).message).to.equal(message);
      return;
    }
    expect.fail(`expected EntityStateError(${kind})`);
  }

  const events = (name: string): Array<Record<string, unknown>> => logs.entries.filter((e) => e.event === name);

  it('posts {seed, include_prompts} and returns the payload with provenance from the payload', async () => {
    const payload = {
      generator_version: ' 2.3.1 ',
      version: 'ignored',
      generator_capabilities: ['axes', ' prompts ', '', 7, 'axes'],
      generated_at: '2026-01-02T03:04:05Z',
      axes: { wealth: { score: 0.4 } },
    };
    const es = await withUpstream([{ body: payload, headers: { 'X-Generator-Capabilities': 'prompts, occupation ,,axes' } }], {
      includePrompts: true,
    });
    const result = await es.generate(4242);

    expect(upstream!.requests).to.have.length(1);
    const req = upstream!.requests[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/api/entity');
    expect(req.headers['content-type']).to.match(/^application\/json/);
    expect(req.body).to.deep.equal({ seed: 4242, include_prompts: true });

    expect(result.payload).to.deep.equal(payload);
    expect(result.generatorVersion).to.equal('2.3.1');
    expect(result.generatorCapabilities).to.deep.equal(['axes', 'prompts', 'occupation']);
    expect(result.generatedAt).to.equal('2026-01-02T03:04:05Z');
    expect(result.attempts).to.equal(1);
    expect(result.latencyMs).to.be.a('number').and.at.least(0);

    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, success_total: 1 });
    const success = events('condition_axis_upstream_success');
    expect(success).to.have.length(1);
    expect(success[0]).to.include({
      level: 'info',
      seed: 4242,
      attempts: 1,
      generator_version: '2.3.1',
      capabilities: 'axes,prompts,occupation',
    });
    expect(success[0]!.latency_ms).to.be.a('number');
  });

  it('falls back to payload.version, then to the headers, then to unknown', async () => {
    let es = await withUpstream([{ body: { version: 'v7', generator_version: '  ' } }]);
    expect((await es.generate(1)).generatorVersion).to.equal('v7');
    await upstream!.close();

    es = await withUpstream([
      {
        body: { generator_version: 3, generator_capabilities: 'a, b,a' },
        headers: { 'X-Generator-Version': ' hdr-1 ', 'x-generator-capabilities': 'b,c' },
      },
    ]);
    const fromHeaders = await es.generate(1);
    expect(fromHeaders.generatorVersion).to.equal('hdr-1');
    expect(fromHeaders.generatorCapabilities).to.deep.equal(['a', 'b', 'c']);
    expect(fromHeaders.generatedAt).to.equal(null);
    await upstream!.close();

    es = await withUpstream([{ body: { generated_at: '  ' } }]);
    const bare = await es.generate(1);
    expect(bare.generatorVersion).to.equal('unknown');
    expect(bare.generatorCapabilities).to.deep.equal([]);
    expect(bare.generatedAt).to.equal(null);
    expect(events('condition_axis_upstream_success')[0]).to.include({ generator_version: 'unknown', capabilities: 'none' });
  });

  it('sends include_prompts false and strips trailing slashes from the base URL', async () => {
    upstream = await startFakeUpstream([{ body: {} }]);
    const es = client(`${upstream.url}/`);
    await es.generate(9);
    expect(upstream.requests[0]!.url).to.equal('/api/entity');
    expect(upstream.requests[0]!.body).to.deep.equal({ seed: 9, include_prompts: false });
  });

  it('is unsupported without a base URL (no request)', async () => {
    const es = client(' ');
    await failure(es.generate(1), 'unsupported', UNSUPPORTED);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, unsupported_total: 1 });
  });

  for (const status of [404, 405, 501]) {
    it(`is unsupported at once on HTTP ${status}`, async () => {
      const es = await withUpstream([{ status }, { body: {} }]);
      await failure(es.generate(3), 'unsupported', UNSUPPORTED);
      expect(upstream!.requests).to.have.length(1);
      expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, unsupported_total: 1 });
      const [fail] = events('condition_axis_upstream_failure');
      expect(fail).to.include({ level: 'warn', seed: 3, attempts: 1, reason: 'unsupported', status_code: status });
      expect(fail!.latency_ms).to.be.a('number');
    });
  }

  for (const status of [500, 400, 201, 302]) {
    it(`fails at once on HTTP ${status}`, async () => {
      const es = await withUpstream([{ status, body: {}, headers: { location: '/elsewhere' } }, { body: {} }]);
      await failure(es.generate(3), 'generation_failed', FAILED);
      expect(upstream!.requests).to.have.length(1);
      expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, http_failures_total: 1 });
      expect(events('condition_axis_upstream_failure')[0]).to.include({ attempts: 1, reason: 'http_error', status_code: status });
    });
  }

  it('retries HTTP 504 and succeeds on the second attempt', async () => {
    const es = await withUpstream([{ status: 504 }, { body: { generator_version: '1' } }]);
    const result = await es.generate(11);
    expect(result.attempts).to.equal(2);
    expect(upstream!.requests).to.have.length(2);
    expect(upstream!.requests.map((r) => r.body)).to.deep.equal([
      { seed: 11, include_prompts: false },
      { seed: 11, include_prompts: false },
    ]);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, success_total: 1 });
    const [retry] = events('condition_axis_upstream_retry');
    expect(retry).to.include({ level: 'warn', seed: 11, attempt: '1/2', reason: 'http_timeout', status_code: 504 });
    expect(retry!.latency_ms).to.be.a('number');
    expect(events('condition_axis_upstream_success')[0]).to.include({ attempts: 2 });
  });

  it('ends in a timeout after HTTP 408 twice', async () => {
    const es = await withUpstream([{ status: 408 }, { status: 408 }]);
    await failure(es.generate(11), 'timeout', TIMEOUT);
    expect(upstream!.requests).to.have.length(2);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, timeouts_total: 1 });
    expect(events('condition_axis_upstream_failure')[0]).to.include({ attempts: 2, reason: 'http_timeout', status_code: 408 });
  });

  it('retries a network timeout, then reports a timeout', async () => {
    const slow: CannedResponse = { delayMs: 1000, body: {} };
    const es = await withUpstream([slow, slow], { timeoutMs: 100 });
    await failure(es.generate(5), 'timeout', TIMEOUT);
    expect(upstream!.requests).to.have.length(2);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, timeouts_total: 1 });
    const [retry] = events('condition_axis_upstream_retry');
    expect(retry).to.include({ attempt: '1/2', reason: 'timeout' });
    expect(retry).not.to.have.property('status_code');
    expect(retry!.latency_ms).to.be.at.least(90);
    const [fail] = events('condition_axis_upstream_failure');
    expect(fail).to.include({ seed: 5, attempts: 2, reason: 'timeout' });
    expect(fail).not.to.have.property('status_code');
  });

  it('succeeds after one network timeout', async () => {
    const es = await withUpstream([{ delayMs: 1000, body: {} }, { body: { version: 'ok' } }], { timeoutMs: 100 });
    const result = await es.generate(5);
    expect(result.attempts).to.equal(2);
    expect(result.latencyMs).to.be.at.least(100);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, success_total: 1 });
  });

  it('reports generation_failed when the connection is refused twice', async () => {
    const es = client(await closedPortUrl());
    await failure(es.generate(6), 'generation_failed', FAILED);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, request_exceptions_total: 1 });
    expect(events('condition_axis_upstream_retry')[0]).to.include({ attempt: '1/2', reason: 'request_exception' });
    expect(events('condition_axis_upstream_failure')[0]).to.include({ attempts: 2, reason: 'request_exception' });
  });

  it('retries a dropped connection', async () => {
    const es = await withUpstream([{ destroy: true }, { body: {} }]);
    expect((await es.generate(6)).attempts).to.equal(2);
    expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, retries_total: 1, success_total: 1 });
  });

  it('waits backoffMs before the retry', async () => {
    upstream = await startFakeUpstream([{ status: 504 }, { body: {} }]);
    logs = new MemoryTransport();
    const es = new HttpEntityStateClient({
      baseUrl: upstream.url,
      timeoutMs: 2000,
      includePrompts: false,
      logger: createLogger('debug', [logs]),
      backoffMs: 150,
    });
    const result = await es.generate(1);
    expect(result.latencyMs).to.be.at.least(140);
  });

  const badBodies: Array<{ name: string; response: CannedResponse; counter: keyof EntityStateCounters; reason: string }> = [
    { name: 'invalid JSON', response: { body: '{"axes":' }, counter: 'json_failures_total', reason: 'invalid_json' },
    { name: 'empty body', response: { status: 200 }, counter: 'json_failures_total', reason: 'invalid_json' },
    { name: 'an array', response: { body: [{ axes: {} }] }, counter: 'shape_failures_total', reason: 'non_object' },
    { name: 'null', response: { body: 'null' }, counter: 'shape_failures_total', reason: 'non_object' },
  ];
  for (const c of badBodies) {
    it(`fails on a body that is ${c.name}`, async () => {
      const es = await withUpstream([c.response]);
      await failure(es.generate(2), 'generation_failed', FAILED);
      expect(upstream!.requests).to.have.length(1);
      expect(es.counters).to.deep.equal({ ...ZERO, requests_total: 1, [c.counter]: 1 });
      expect(events('condition_axis_upstream_failure')[0]).to.include({ attempts: 1, reason: c.reason });
    });
  }

  it('keeps counters monotonic across calls', async () => {
    const es = await withUpstream([
      { body: {} },
      { status: 504 },
      { body: {} },
      { status: 404 },
      { status: 500 },
      { body: 'nope' },
      { body: [] },
      { status: 408 },
      { status: 408 },
    ]);
    await es.generate(1);
    await es.generate(2);
    await failure(es.generate(3), 'unsupported', UNSUPPORTED);
    await failure(es.generate(4), 'generation_failed', FAILED);
    await failure(es.generate(5), 'generation_failed', FAILED);
    await failure(es.generate(6), 'generation_failed', FAILED);
    await failure(es.generate(7), 'timeout', TIMEOUT);
    expect(es.counters).to.deep.equal({
      requests_total: 7,
      retries_total: 2,
      timeouts_total: 1,
      request_exceptions_total: 0,
      unsupported_total: 1,
      http_failures_total: 1,
      json_failures_total: 1,
      shape_failures_total: 1,
      success_total: 2,
    });
  });

  it('logs no URL or payload content', async () => {
    const es = await withUpstream([{ status: 504 }, { body: { secret_prompt: 'hidden' } }]);
    await es.generate(1);
    expect(logs.text()).not.to.contain('127.0.0.1');
    expect(logs.text()).not.to.contain('hidden');
  });
});
