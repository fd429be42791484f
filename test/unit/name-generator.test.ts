import { expect } from 'chai';
import { afterEach, describe, it } from 'mocha';
import {
  BuiltinNameGenerator,
  HttpNameGenerator,
  NameGenerationError,
} from '../../src/integrations/name-generator.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { closedPortUrl, startFakeUpstream } from '../helpers/fake-upstream.ts';
import type { CannedResponse, FakeUpstream } from '../helpers/fake-upstream.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';

// Exact client-facing texts, written out literally on purpose.
const NO_BASE_URL = 'Name generation integration is enabled but no base URL is configured.';
const UNAVAILABLE = 'Name generation API unavailable.';
const httpStatus = (code: number): string => `Name generation API returned HTTP ${code}.`;
const INVALID_JSON = 'Name generation API returned invalid JSON.';
const NON_OBJECT = 'Name generation API returned a non-object payload.';
const INVALID_NAME = 'Name generation API did not return a valid name.';
const EMPTY_NAME = 'Name generation API returned an empty name.';

const FULL_NAME = /^[A-Z][A-Za-z'-]+ [A-Z][A-Za-z'-]+$/;

describe('BuiltinNameGenerator', () => {
  const gen = new BuiltinNameGenerator();

  it('is deterministic for a seed', async () => {
    for (const seed of [1, 42, 2147483647, 123456789]) {
      expect(await gen.fullName(seed)).to.equal(await new BuiltinNameGenerator().fullName(seed));
    }
  });

  it('gives well-formed names: title-cased, 3-12 letters per part, at most 40 characters', async () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const full = await gen.fullName(seed);
      expect(full, `seed ${seed}`).to.match(FULL_NAME);
      expect(full.length).to.be.at.most(40);
      const [first, last] = full.split(' ') as [string, string];
      for (const part of [first, last]) {
        expect(part, `seed ${seed}`).to.match(/^[A-Z][a-z]{2,11}$/);
      }
    }
  });

  it('handles edge seeds (0, negative, huge, fractional, NaN)', async () => {
    for (const seed of [0, -1, -2147483648, 2 ** 40, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER]) {
      expect(await gen.fullName(seed), `seed ${seed}`).to.match(FULL_NAME);
    }
  });

  it('varies: 1000 consecutive seeds give at least 950 distinct full names', async () => {
    const names = new Set<string>();
    for (let seed = 1000; seed < 2000; seed++) names.add(await gen.fullName(seed));
    expect(names.size).to.be.at.least(950);
  });

  it('varies first and last names separately', async () => {
    const firsts = new Set<string>();
    const lasts = new Set<string>();
    for (let seed = 1; seed <= 1000; seed++) {
      const [first, last] = (await gen.fullName(seed)).split(' ') as [string, string];
      firsts.add(first);
      lasts.add(last);
    }
    expect(firsts.size).to.be.at.least(600);
    expect(lasts.size).to.be.at.least(400);
  });
});

describe('HttpNameGenerator', () => {
  let upstream: FakeUpstream | null = null;
  let logs: MemoryTransport;

  afterEach(async () => {
    await upstream?.close();
    upstream = null;
  });

  async function withUpstream(responses: CannedResponse[], timeoutMs = 2000): Promise<HttpNameGenerator> {
    upstream = await startFakeUpstream(responses);
    return generator(upstream.url, timeoutMs);
  }

  function generator(baseUrl: string, timeoutMs = 2000): HttpNameGenerator {
    logs = new MemoryTransport();
    return new HttpNameGenerator({ baseUrl, timeoutMs, logger: createLogger('debug', [logs]) });
  }

  async function failure(promise: Promise<unknown>): Promise<NameGenerationError> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(NameGenerationError);
      return err as NameGenerationError;
    }
    expect.fail('expected a NameGenerationError');
  }

  const ok = (name: unknown): CannedResponse => ({ status: 200, body: { names: [name] } });

  it('asks for the first name with seed and the last name with seed + 1', async () => {
    const gen = await withUpstream([ok(' Ada '), ok('Lovelace')]);
    expect(await gen.fullName(77)).to.equal('Ada Lovelace');
    const requests = upstream!.requests;
    expect(requests).to.have.length(2);
    for (const req of requests) {
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal('/api/generate');
      expect(req.headers['content-type']).to.match(/^application\/json/);
    }
    const common = {
      package_id: 2,
      syllable_key: 'all',
      generation_count: 1,
      unique_only: true,
      output_format: 'json',
      render_style: 'title',
    };
    expect(requests[0]!.body).to.deep.equal({ class_key: 'first_name', ...common, seed: 77 });
    expect(requests[1]!.body).to.deep.equal({ class_key: 'last_name', ...common, seed: 78 });
  });

  it('strips trailing slashes from the base URL', async () => {
    upstream = await startFakeUpstream([ok('Ada'), ok('Byron')]);
    const gen = generator(`${upstream.url}//`);
    expect(await gen.fullName(1)).to.equal('Ada Byron');
    expect(upstream.requests.map((r) => r.url)).to.deep.equal(['/api/generate', '/api/generate']);
  });

  it('rejects an empty base URL without any request', async () => {
    expect((await failure(generator('  ').fullName(1))).message).to.equal(NO_BASE_URL);
  });

  it('retries 503 twice and succeeds on the third attempt', async () => {
    const gen = await withUpstream([{ status: 503 }, { status: 503 }, ok('Ada'), ok('Byron')]);
    expect(await gen.fullName(5)).to.equal('Ada Byron');
    expect(upstream!.requests).to.have.length(4);
    expect(upstream!.requests.slice(0, 3).map((r) => (r.body as { seed: number }).seed)).to.deep.equal([5, 5, 5]);
    const retries = logs.entries.filter((e) => e.event === 'namegen_retry');
    expect(retries.map((e) => [e.level, e.class_key, e.attempt, e.status])).to.deep.equal([
      ['warn', 'first_name', 1, 503],
      ['warn', 'first_name', 2, 503],
    ]);
  });

  for (const status of [408, 429, 500, 502, 504]) {
    it(`retries HTTP ${status}`, async () => {
      const gen = await withUpstream([{ status }, ok('Ada'), ok('Byron')]);
      expect(await gen.fullName(5)).to.equal('Ada Byron');
      expect(upstream!.requests).to.have.length(3);
    });
  }

  it('gives up after 3 attempts on a retryable status, reporting that status', async () => {
    const gen = await withUpstream([{ status: 502 }, { status: 503 }, { status: 504 }]);
    expect((await failure(gen.fullName(5))).message).to.equal(httpStatus(504));
    expect(upstream!.requests).to.have.length(3);
    const failures = logs.entries.filter((e) => e.event === 'namegen_failure');
    expect(failures).to.have.length(1);
    expect(failures[0]).to.include({ level: 'warn', class_key: 'first_name', attempt: 3, status: 504 });
  });

  it('fails at once on a non-retryable status (400, 404, 201)', async () => {
    for (const status of [400, 404, 201]) {
      await upstream?.close();
      const gen = await withUpstream([{ status, body: { names: ['Ada'] } }]);
      expect((await failure(gen.fullName(5))).message).to.equal(httpStatus(status));
      expect(upstream!.requests).to.have.length(1);
    }
  });

  it('retries on the last-name call too', async () => {
    const gen = await withUpstream([ok('Ada'), { status: 500 }, ok('Byron')]);
    expect(await gen.fullName(9)).to.equal('Ada Byron');
    expect(upstream!.requests.map((r) => (r.body as { class_key: string; seed: number }).seed)).to.deep.equal([9, 10, 10]);
    expect(logs.entries.find((e) => e.event === 'namegen_retry')).to.include({ class_key: 'last_name', attempt: 1 });
  });

  it('reports the API unavailable when nothing listens (3 attempts)', async () => {
    const gen = generator(await closedPortUrl());
    expect((await failure(gen.fullName(1))).message).to.equal(UNAVAILABLE);
    const events = logs.entries.map((e) => [e.event, e.attempt, e.reason]);
    expect(events).to.deep.equal([
      ['namegen_retry', 1, 'request_exception'],
      ['namegen_retry', 2, 'request_exception'],
      ['namegen_failure', 3, 'request_exception'],
    ]);
  });

  it('reports the API unavailable when the socket is destroyed every time', async () => {
    const gen = await withUpstream([{ destroy: true }, { destroy: true }, { destroy: true }]);
    expect((await failure(gen.fullName(1))).message).to.equal(UNAVAILABLE);
    expect(upstream!.requests).to.have.length(3);
  });

  it('treats a timeout as a transport failure and retries it', async () => {
    const gen = await withUpstream([{ delayMs: 500, ...ok('Late') }, ok('Ada'), ok('Byron')], 100);
    expect(await gen.fullName(1)).to.equal('Ada Byron');
    expect(logs.entries.find((e) => e.event === 'namegen_retry')).to.include({ attempt: 1, reason: 'timeout' });
  });

  it('reports the API unavailable after 3 timeouts', async () => {
    const slow = { delayMs: 500, ...ok('Late') };
    const gen = await withUpstream([slow, slow, slow], 100);
    expect((await failure(gen.fullName(1))).message).to.equal(UNAVAILABLE);
    expect(upstream!.requests).to.have.length(3);
    expect(logs.entries.at(-1)).to.include({ event: 'namegen_failure', attempt: 3, reason: 'timeout' });
  });

  const payloadCases: Array<{ name: string; response: CannedResponse; message: string }> = [
    { name: 'not JSON', response: { body: 'names: Ada' }, message: INVALID_JSON },
    { name: 'empty body', response: { status: 200 }, message: INVALID_JSON },
    { name: 'JSON array', response: { body: [{ names: ['Ada'] }] }, message: NON_OBJECT },
    { name: 'JSON string', response: { body: '"Ada"' }, message: NON_OBJECT },
    { name: 'JSON null', response: { body: 'null' }, message: NON_OBJECT },
    { name: 'names missing', response: { body: { name: 'Ada' } }, message: INVALID_NAME },
    { name: 'names not a list', response: { body: { names: 'Ada' } }, message: INVALID_NAME },
    { name: 'names empty', response: { body: { names: [] } }, message: INVALID_NAME },
    { name: 'first element not a string', response: { body: { names: [{ name: 'Ada' }] } }, message: INVALID_NAME },
    { name: 'blank name', response: { body: { names: ['   '] } }, message: EMPTY_NAME },
  ];
  for (const c of payloadCases) {
    it(`rejects a payload: ${c.name}`, async () => {
      const gen = await withUpstream([c.response]);
      expect((await failure(gen.fullName(1))).message).to.equal(c.message);
      expect(upstream!.requests).to.have.length(1);
      expect(logs.entries.at(-1)).to.include({ event: 'namegen_failure', class_key: 'first_name', attempt: 1 });
    });
  }

  it('rejects a bad last-name payload after a good first name', async () => {
    const gen = await withUpstream([ok('Ada'), { body: { names: [''] } }]);
    expect((await failure(gen.fullName(1))).message).to.equal(EMPTY_NAME);
    expect(logs.entries.at(-1)).to.include({ class_key: 'last_name' });
  });

  it('logs no URL or payload', async () => {
    const gen = await withUpstream([{ status: 500 }, { status: 400, body: { secret: 'x' } }]);
    await failure(gen.fullName(1));
    expect(logs.text()).not.to.contain('127.0.0.1');
    expect(logs.text()).not.to.contain('secret');
  });
});
