import { expect } from 'chai';
import { afterEach, describe, it } from 'mocha';
import { MAX_RESPONSE_BYTES, OllamaClient } from '../../src/integrations/ollama.ts';
import { createLogger } from '../../src/logging/logger.ts';
import {
  FALLBACK_TEMPLATE,
  Translator,
  buildProfile,
  formatFixed2,
  profileSummary,
  pyTitle,
  renderPrompt,
  translationLayer,
  validateOutput,
} from '../../src/services/lab/translation.ts';
import type { TranslateInput, TranslationLayer } from '../../src/services/lab/translation.ts';
import type { World } from '../../src/services/worlds/world-loader.ts';
import { closedPortUrl, startFakeUpstream } from '../helpers/fake-upstream.ts';
import type { CannedResponse, FakeUpstream } from '../helpers/fake-upstream.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';

function world(translation: Record<string, unknown> | null): World {
  return {
    id: 'w',
    name: 'W',
    description: '',
    version: '1',
    active: true,
    defaultSpawn: { zone: 'z', room: 'r' },
    zones: new Map(),
    rooms: new Map(),
    items: new Map(),
    npcs: new Map(),
    characterPolicy: {} as World['characterPolicy'],
    translationLayer: translation,
    axisEngine: null,
    policyArtifactPath: null,
  };
}

const AXES = { demeanor: { label: 'timid', score: 0.07 }, health: { label: 'scarred', score: 0.65 } };

describe('translation layer: config', () => {
  it('applies the reference defaults', () => {
    expect(translationLayer(world(null), '')).to.deep.equal({
      enabled: false,
      model: 'gemma2:2b',
      ollamaBaseUrl: 'http://localhost:11434',
      timeoutSeconds: 10,
      keepAlive: '5m',
      strictMode: true,
      maxOutputChars: 280,
      promptPolicyId: 'prompt:translation.prompts.ic:default',
      activeAxes: [],
      deterministic: false,
    });
  });

  it('reads the block, blank prompt_policy_id falls back, a non-empty override replaces the URL', () => {
    const raw = {
      enabled: true,
      model: 'm:1b',
      ollama_base_url: 'http://ollama:1/',
      timeout_seconds: 120.0,
      keep_alive: '1m',
      strict_mode: false,
      max_output_chars: 50,
      prompt_policy_id: '  ',
      active_axes: ['demeanor', 'health'],
      deterministic: true,
      prompt_template_path: 'ignored.txt',
    };
    const layer = translationLayer(world(raw), '');
    expect(layer).to.include({ enabled: true, model: 'm:1b', ollamaBaseUrl: 'http://ollama:1/', timeoutSeconds: 120, keepAlive: '1m' });
    expect(layer).to.include({ strictMode: false, maxOutputChars: 50, deterministic: true });
    expect(layer.promptPolicyId).to.equal('prompt:translation.prompts.ic:default');
    expect(layer.activeAxes).to.deep.equal(['demeanor', 'health']);
    expect(translationLayer(world(raw), 'http://override:2').ollamaBaseUrl).to.equal('http://override:2');
  });

  it('has the fallback template text exactly', () => {
    expect(FALLBACK_TEMPLATE).to.equal(
      'You are a character in a text-based RPG.\n' +
        'Translate the following OOC message into a single line of IC dialogue consistent with a character whose demeanor is {{demeanor_label}}.\n' +
        '\n' +
        'Rules:\n' +
        '1. Output exactly one line of spoken dialogue. No stage directions.\n' +
        '2. If the OOC message cannot be rendered as IC dialogue, output only the word: PASSTHROUGH\n' +
        '\n' +
        'OOC MESSAGE:\n' +
        '{{ooc_message}}',
    );
  });
});

describe('translation layer: profile', () => {
  it('formats .2f like Python (ties to even on the exact binary value)', () => {
    expect(formatFixed2(0.125)).to.equal('0.12');
    expect(formatFixed2(0.375)).to.equal('0.38');
    expect(formatFixed2(0.625)).to.equal('0.62');
    expect(formatFixed2(2.5)).to.equal('2.50');
    expect(formatFixed2(0.07)).to.equal('0.07');
    expect(formatFixed2(0.005)).to.equal('0.01'); // 0.005 is slightly above the tie in binary
    expect(formatFixed2(1.005)).to.equal('1.00'); // slightly below
    expect(formatFixed2(-0.125)).to.equal('-0.12');
    expect(formatFixed2(-0)).to.equal('-0.00');
    expect(formatFixed2(1)).to.equal('1.00');
  });

  it('title-cases like Python', () => {
    expect(pyTitle('facial signal')).to.equal('Facial Signal');
    expect(pyTitle('hp')).to.equal('Hp');
    expect(pyTitle('a2b')).to.equal('A2B');
    expect(pyTitle('mIXed CASE')).to.equal('Mixed Case');
  });

  it('builds the summary in the canonical format', () => {
    const summary = profileSummary([
      ['character_name', 'Mira'],
      ['facial_signal_label', 'stern'],
      ['facial_signal_score', 0.125],
      ['health_label', 'scarred'],
      ['health_score', 0.375],
    ]);
    expect(summary).to.equal('  Character: Mira\n  Facial Signal: stern (0.12)\n  Health: scarred (0.38)');
    expect(profileSummary([])).to.equal('  Character: unknown');
  });

  it('builds the lab profile in order: active axes present in the request only, summary last', () => {
    const profile = buildProfile('Mira', 'say', { ...AXES, wealth: { label: 'rich', score: 0.9 } }, ['health', 'missing', 'demeanor']);
    expect(profile).to.deep.equal([
      ['character_name', 'Mira'],
      ['health_label', 'scarred'],
      ['health_score', 0.65],
      ['demeanor_label', 'timid'],
      ['demeanor_score', 0.07],
      ['channel', 'say'],
      ['profile_summary', '  Character: Mira\n  Health: scarred (0.65)\n  Demeanor: timid (0.07)'],
    ]);
    expect(buildProfile('Mira', 'say', AXES, [])).to.deep.equal([
      ['character_name', 'Mira'],
      ['channel', 'say'],
      ['profile_summary', '  Character: Mira'],
    ]);
  });

  it('renders placeholders sequentially with Python str() of floats', () => {
    const profile = buildProfile('{{channel}} Bob', 'yell', { d: { label: 'x', score: 1 }, e: { label: 'y', score: 0.00001 } }, ['d', 'e']);
    const out = renderPrompt('{{character_name}}|{{d_score}}|{{e_score}}|{{unknown}}|{{ooc_message}}|{{d_label}}{{d_label}}', profile, 'hi $& there');
    expect(out).to.equal('yell Bob|1.0|1e-05|{{unknown}}|hi $& there|xx');
  });
});

describe('translation layer: output validator', () => {
  it('rejects blanks and PASSTHROUGH', () => {
    expect(validateOutput('   ', true, 280)).to.equal(null);
    expect(validateOutput('  passthrough.', false, 280)).to.equal(null);
    expect(validateOutput('PASSTHROUGH', true, 280)).to.equal(null);
  });

  it('multi-line: strict rejects, lenient takes the first non-blank line', () => {
    expect(validateOutput('Hello there\nsecond', true, 280)).to.equal(null);
    expect(validateOutput('Hello there\nsecond', false, 280)).to.equal('Hello there');
    expect(validateOutput('\n  \n  Hi\nno', false, 280)).to.equal('Hi');
  });

  it('strips quotes, then apostrophes, then whitespace', () => {
    expect(validateOutput('"Well met, friend."', true, 280)).to.equal('Well met, friend.');
    expect(validateOutput(`"'  inner  '"`, true, 280)).to.equal('inner');
  });

  it('strict rejects stage directions, lenient keeps them', () => {
    expect(validateOutput('*waves*', true, 280)).to.equal(null);
    expect(validateOutput('Hello [smiles] there', true, 280)).to.equal(null);
    expect(validateOutput('(quietly)', true, 280)).to.equal(null);
    expect(validateOutput('*waves*', false, 280)).to.equal('*waves*');
    expect(validateOutput('Hello [smiles] there', false, 280)).to.equal('Hello [smiles] there');
    expect(validateOutput('(quietly) hi', true, 280)).to.equal('(quietly) hi');
  });

  it('over-long: strict rejects, lenient truncates by code points and right-strips', () => {
    expect(validateOutput('abcdefghij', true, 5)).to.equal(null);
    expect(validateOutput('abcd efghij', false, 5)).to.equal('abcd');
    expect(validateOutput('😀😀😀', true, 3)).to.equal('😀😀😀');
    expect(validateOutput('😀😀😀😀', false, 3)).to.equal('😀😀😀');
  });

  it('stays linear on long adversarial whitespace and brackets (issue 13), keeping the results', () => {
    // Each case took seconds to minutes with the former regexes, which rescanned from every start.
    const inner = `a${' '.repeat(200_000)}b`;
    expect(validateOutput(`\t${inner}\u3000 \n`, false, 300_000)).to.equal(inner);
    expect(validateOutput(inner, true, 300_000)).to.equal(inner);
    const truncated = validateOutput(`x${' '.repeat(200_000)}y`, false, 100_000);
    expect(truncated).to.equal('x');
    const brackets = '['.repeat(200_000);
    expect(validateOutput(brackets, true, 300_000)).to.equal(brackets);
    expect(validateOutput(`${brackets}]`, true, 300_000)).to.equal(null);
    expect(validateOutput(`${'] '.repeat(100_000)}[`, true, 300_000)).to.equal(`${'] '.repeat(100_000)}[`.trim());
  });
});

describe('Translator (fake Ollama)', () => {
  let upstream: FakeUpstream | undefined;
  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
  });

  const logs = new MemoryTransport();
  const translator = new Translator(new OllamaClient(createLogger('debug', [logs])));

  function layer(url: string, extra: Partial<TranslationLayer> = {}): TranslationLayer {
    return {
      ...translationLayer(world({ enabled: true, active_axes: ['demeanor', 'health'] }), ''),
      ollamaBaseUrl: url,
      ...extra,
    };
  }

  function input(url: string, extra: Partial<TranslateInput> = {}, layerExtra: Partial<TranslationLayer> = {}): TranslateInput {
    return {
      layer: layer(url, layerExtra),
      template: 'You are {{character_name}} ({{demeanor_label}}).\n{{profile_summary}}\nSay: {{ooc_message}}',
      characterName: 'Mira',
      channel: 'say',
      axes: AXES,
      oocMessage: 'hello all',
      seed: -1,
      temperature: 0.7,
      ...extra,
    };
  }

  const answer = (content: unknown): CannedResponse => ({ body: { model: 'gemma2:2b', message: { role: 'assistant', content }, done: true } });

  it('sends the reference payload exactly (unseeded) and returns success', async () => {
    upstream = await startFakeUpstream([answer('  "Greetings, all."  ')]);
    const result = await translator.translate(input(`${upstream.url}/`));
    const rendered = 'You are Mira (timid).\n  Character: Mira\n  Demeanor: timid (0.07)\n  Health: scarred (0.65)\nSay: hello all';
    expect(result).to.deep.equal({
      icText: 'Greetings, all.',
      status: 'success',
      profileSummary: '  Character: Mira\n  Demeanor: timid (0.07)\n  Health: scarred (0.65)',
      renderedPrompt: rendered,
    });
    expect(upstream.requests).to.have.length(1);
    const req = upstream.requests[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/api/chat');
    expect(req.body).to.deep.equal({
      model: 'gemma2:2b',
      stream: false,
      keep_alive: '5m',
      messages: [
        { role: 'system', content: rendered },
        { role: 'user', content: 'hello all' },
      ],
      options: { temperature: 0.7, num_predict: 128 },
    });
    // Prompt contents never reach the logs.
    expect(logs.text()).to.not.include('hello all');
    expect(logs.text()).to.not.include('Greetings');
    expect(logs.entries.some((e) => e.event === 'ollama_request' && e.model === 'gemma2:2b' && e.status === 200)).to.equal(true);
  });

  it('a seed forces temperature 0.0 and sets options.seed (negative seeds too, -1 means none)', async () => {
    upstream = await startFakeUpstream([answer('Hi.'), answer('Hi.'), answer('Hi.')]);
    await translator.translate(input(upstream.url, { seed: 42, temperature: 0.9 }));
    await translator.translate(input(upstream.url, { seed: -7, temperature: 0.9 }));
    await translator.translate(input(upstream.url, { seed: -1, temperature: 1 }));
    const [a, b, c] = upstream.requests;
    expect((a!.body as Record<string, unknown>).options).to.deep.equal({ temperature: 0, num_predict: 128, seed: 42 });
    expect(a!.bodyText).to.include('"temperature":0.0,');
    expect((b!.body as Record<string, unknown>).options).to.deep.equal({ temperature: 0, num_predict: 128, seed: -7 });
    expect((c!.body as Record<string, unknown>).options).to.deep.equal({ temperature: 1, num_predict: 128 });
    expect(c!.bodyText).to.include('"temperature":1.0,');
  });

  it('timeout → fallback.api_error', async () => {
    upstream = await startFakeUpstream([{ ...answer('late'), delayMs: 1000 }]);
    const result = await translator.translate(input(upstream.url, {}, { timeoutSeconds: 0.1 }));
    expect(result.status).to.equal('fallback.api_error');
    expect(result.icText).to.equal(null);
  });

  it('connection refused → fallback.api_error, summary and prompt still returned', async () => {
    const result = await translator.translate(input(await closedPortUrl()));
    expect(result.status).to.equal('fallback.api_error');
    expect(result.icText).to.equal(null);
    expect(result.profileSummary).to.include('Character: Mira');
    expect(result.renderedPrompt).to.include('Say: hello all');
  });

  it('an answer over MAX_RESPONSE_BYTES → fallback.api_error, like an unreadable one (issue 13)', async () => {
    upstream = await startFakeUpstream([answer('a'.repeat(MAX_RESPONSE_BYTES)), answer('Just right.')]);
    const big = await translator.translate(input(upstream.url));
    expect(big.status).to.equal('fallback.api_error');
    expect(big.icText).to.equal(null);
    expect((await translator.translate(input(upstream.url))).icText).to.equal('Just right.');
    expect(logs.entries.some((e) => e.event === 'ollama_request_failed' && e.reason === 'too_large')).to.equal(true);
  });

  it('non-2xx, invalid JSON and empty/missing content → fallback.api_error', async () => {
    upstream = await startFakeUpstream([
      { status: 500, body: 'boom' },
      { body: 'not json{' },
      answer('   '),
      { body: { done: true } },
    ]);
    for (let i = 0; i < 4; i++) {
      const result = await translator.translate(input(upstream.url));
      expect(result.status, `request ${i}`).to.equal('fallback.api_error');
      expect(result.icText).to.equal(null);
    }
  });

  it('validation failures → fallback.validation_failed; lenient mode keeps more', async () => {
    const long = 'x'.repeat(300);
    upstream = await startFakeUpstream([
      answer('PASSTHROUGH'),
      answer('Line one\nLine two'),
      answer(long),
      answer('*bows*'),
      answer('Line one\nLine two'),
      answer(long),
    ]);
    const statuses: Array<string | null> = [];
    for (let i = 0; i < 4; i++) {
      const r = await translator.translate(input(upstream.url));
      expect(r.status, `request ${i}`).to.equal('fallback.validation_failed');
      statuses.push(r.icText);
    }
    expect(statuses).to.deep.equal([null, null, null, null]);
    const lenientA = await translator.translate(input(upstream.url, {}, { strictMode: false }));
    expect(lenientA).to.include({ status: 'success', icText: 'Line one' });
    const lenientB = await translator.translate(input(upstream.url, {}, { strictMode: false }));
    expect(lenientB).to.include({ status: 'success', icText: 'x'.repeat(280) });
  });
});
