import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { startFakeUpstream, closedPortUrl, type FakeUpstream, type RecordedRequest } from '../helpers/fake-upstream.ts';
import { canonicalJson, parseJson } from '../../src/shared/canonical-json.ts';

const COMPILE = {
  world_id: 'emberwick',
  species: 'heron_folk',
  gender: ' Female ',
  axes: { wealth: { label: 'moneyed', score: 0.9 }, demeanor: { label: 'bold', score: 1 } },
  world_context: ['night'],
  occupation_signals: ['lockkeeper'],
};

/** A copy of the shipped worlds with Emberwick's translation layer switched on and the Hollow Spire's off. */
function worldsWithTranslation(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-lab-worlds-'));
  cpSync('worlds', dir, { recursive: true });
  for (const [id, enabled] of [['emberwick', true], ['hollow_spire', false]] as const) {
    const file = path.join(dir, id, 'world.json');
    const world = JSON.parse(readFileSync(file, 'utf8'));
    world.translation_layer = { ...world.translation_layer, enabled, timeout_seconds: 2 };
    writeFileSync(file, JSON.stringify(world, null, 2));
  }
  return dir;
}

describe('lab routes (HTTP)', () => {
  let server: TestServer;
  let ollama: FakeUpstream;
  let worldsDir: string;
  let admin: string;
  let answer: (req: RecordedRequest) => { status?: number; body?: unknown; delayMs?: number } = () => ({ body: {} });

  before(async () => {
    ollama = await startFakeUpstream((req) => answer(req));
    worldsDir = worldsWithTranslation();
    server = await startTestServer({
      env: { MUD_WORLDS_ROOT: worldsDir, MUD_TRANSLATION_OLLAMA_URL: ollama.url, MUD_LLM_ALLOWED_SERVER_URLS: ollama.url },
    });
    admin = await sessionFor(server, 'labadmin', 'admin');
  });
  after(async () => {
    await server.close();
    await ollama.close();
    rmSync(worldsDir, { recursive: true, force: true });
  });

  describe('access', () => {
    it('answers 403 to players and worldbuilders and 401 without a session, on every route', async () => {
      const player = await sessionFor(server, 'labplayer', 'player');
      const builder = await sessionFor(server, 'labbuilder', 'worldbuilder');
      for (const sid of [player, builder]) {
        for (const res of [
          await server.get(`/api/lab/worlds?session_id=${sid}`),
          await server.get(`/api/lab/world-config/emberwick?session_id=${sid}`),
          await server.get(`/api/lab/world-image-policy-bundle/emberwick?session_id=${sid}`),
          await server.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: sid }),
          await server.post('/api/lab/translate', { session_id: sid, world_id: 'emberwick', axes: {}, ooc_message: 'hi' }),
        ]) {
          expect(res.status).to.equal(403);
          expect(res.body).to.deep.equal({ detail: 'Lab endpoints require admin or superuser role.' });
        }
        const llm = await server.post('/admin/llm/command', { session_id: sid, command: 'list' });
        expect(llm.status).to.equal(403);
      }
      expect((await server.get('/api/lab/worlds')).status).to.equal(401);
      expect((await server.post('/api/lab/compile-image-prompt', { ...COMPILE })).status).to.equal(401);
    });
  });

  describe('worlds and configuration', () => {
    it('lists active worlds with their translation switch', async () => {
      const res = await server.get(`/api/lab/worlds?session_id=${admin}`);
      expect(res.status).to.equal(200);
      expect(res.body.worlds).to.deep.equal([
        { world_id: 'emberwick', name: 'Emberwick', translation_enabled: true },
        { world_id: 'hollow_spire', name: 'The Hollow Spire', translation_enabled: false },
      ]);
    });

    it('gives the translation config, 404 for a world without translation or unknown', async () => {
      const res = await server.get(`/api/lab/world-config/emberwick?session_id=${admin}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ world_id: 'emberwick', name: 'Emberwick', model: 'gemma2:2b', strict_mode: true, max_output_chars: 280, translation_enabled: true });
      expect(res.body.active_axes).to.deep.equal(['demeanor', 'health', 'physique', 'wealth']);
      const disabled = await server.get(`/api/lab/world-config/hollow_spire?session_id=${admin}`);
      expect(disabled.status).to.equal(404);
      expect(disabled.body.detail).to.equal("Translation layer not enabled for world 'hollow_spire'.");
      const unknown = await server.get(`/api/lab/world-config/nowhere?session_id=${admin}`);
      expect(unknown.body.detail).to.equal("World 'nowhere' not found or inactive.");
    });
  });

  describe('image policy bundle and compilation', () => {
    it('resolves the image policy bundle from the effective activations', async () => {
      const res = await server.get(`/api/lab/world-image-policy-bundle/emberwick?session_id=${admin}`);
      expect(res.status).to.equal(200);
      expect(res.body.world_id).to.equal('emberwick');
      expect(res.body.missing_components).to.deep.equal([]);
      expect(res.body.composition_order).to.deep.equal(['species_canon_block', 'descriptor_layer_output', 'clothing_block', 'tone_profile_block']);
      expect(res.body.policy_hash).to.match(/^[0-9a-f]{64}$/);
    });

    it('compiles a prompt whose hashes are stable across calls', async () => {
      const first = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: admin });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.compiled_prompt).to.be.a('string').and.not.equal('');
      expect(first.body.selected_species_block_id).to.be.a('string');
      expect(first.body.generation_defaults).to.deep.equal({ model_id: 'flux-2-klein-4b', aspect_ratio: '1:1', seed: null });
      expect(first.body.missing_components).to.deep.equal([]);
      const second = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, axes: { demeanor: COMPILE.axes.demeanor, wealth: COMPILE.axes.wealth }, session_id: admin });
      expect(second.body.policy_hash).to.equal(first.body.policy_hash);
      expect(second.body.axis_hash).to.equal(first.body.axis_hash);
      expect(second.body.compiled_prompt).to.equal(first.body.compiled_prompt);
    });

    it('answers 409 for data that does not fit, 404 for an unknown world', async () => {
      const species = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, species: 'dragon', session_id: admin });
      expect(species.status).to.equal(409);
      expect(species.body.detail).to.equal("No active species block matched species='dragon' and gender='female'.");
      const noPolicies = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, world_id: 'hollow_spire', session_id: admin });
      expect(noPolicies.status).to.equal(409);
      expect(noPolicies.body.detail).to.contain('No effective manifest bundle activation found');
      const unknown = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, world_id: 'nowhere', session_id: admin });
      expect(unknown.status).to.equal(404);
    });

    it('answers 409 when the winning species entry references a variant that does not exist (spec rule 5)', async () => {
      // The policy API refuses to store such a registry, so the stored row is edited directly.
      const registry = { policy_id: 'registry:image.registries:species_registry', variant: 'v1' };
      const row = await server.db('policy_variants').where(registry).first('content_json');
      const broken = row.content_json.replace('"species_block:image.blocks.species:heron_folk", "variant": "v1"', '"species_block:image.blocks.species:heron_folk", "variant": "v9"');
      expect(broken).to.not.equal(row.content_json);
      await server.db('policy_variants').where(registry).update({ content_json: broken });
      try {
        const res = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: admin });
        expect(res.status, res.text).to.equal(409);
        expect(res.body).to.deep.equal({ detail: "Policy not found for id='species_block:image.blocks.species:heron_folk' variant='v9'." });
      } finally {
        await server.db('policy_variants').where(registry).update({ content_json: row.content_json });
      }
    });
  });

  describe('translation', () => {
    it('renders the world prompt policy, calls Ollama and returns the IC text', async () => {
      answer = () => ({ body: { message: { role: 'assistant', content: '"Aye, lend me your lantern."' } } });
      const before = ollama.requests.length;
      const res = await server.post('/api/lab/translate', {
        session_id: admin,
        world_id: 'emberwick',
        ooc_message: 'can I borrow your lantern?',
        axes: { demeanor: { label: 'bold', score: 0.7 }, unrelated: { label: 'x', score: 0.1 } },
        character_name: 'Wren Ashdown',
        seed: 42,
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ ic_text: 'Aye, lend me your lantern.', status: 'success', model: 'gemma2:2b' });
      expect(res.body.profile_summary).to.equal('  Character: Wren Ashdown\n  Demeanor: bold (0.70)');
      expect(res.body.rendered_prompt).to.contain('Wren Ashdown');
      expect(res.body.prompt_template).to.contain('{{ooc_message}}');
      const sent = ollama.requests.slice(before).find((r) => r.url === '/api/chat');
      const body = sent?.body as { model: string; stream: boolean; messages: Array<{ role: string; content: string }>; options: Record<string, unknown> };
      expect(body.model).to.equal('gemma2:2b');
      expect(body.stream).to.equal(false);
      expect(body.messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
      expect(body.messages[1]!.content).to.equal('can I borrow your lantern?');
      expect(body.options).to.include({ temperature: 0, seed: 42, num_predict: 128 });
    });

    it('uses a template override for that request only', async () => {
      answer = () => ({ body: { message: { content: 'Right you are.' } } });
      const res = await server.post('/api/lab/translate', {
        session_id: admin,
        world_id: 'emberwick',
        ooc_message: 'ok',
        axes: {},
        prompt_template_override: 'Speak as {{character_name}}: {{ooc_message}}',
      });
      expect(res.body.rendered_prompt).to.equal('Speak as Lab Subject: ok');
      const again = await server.post('/api/lab/translate', { session_id: admin, world_id: 'emberwick', ooc_message: 'ok', axes: {} });
      expect(again.body.prompt_template).to.not.contain('Speak as');
    });

    it('falls back when the model answers badly or not at all, and 503 when translation is off', async () => {
      answer = () => ({ body: { message: { content: 'PASSTHROUGH' } } });
      const refused = await server.post('/api/lab/translate', { session_id: admin, world_id: 'emberwick', ooc_message: 'brb', axes: {} });
      expect(refused.body).to.include({ status: 'fallback.validation_failed', ic_text: null });
      answer = () => ({ status: 500, body: 'boom' });
      const broken = await server.post('/api/lab/translate', { session_id: admin, world_id: 'emberwick', ooc_message: 'hi', axes: {} });
      expect(broken.body).to.include({ status: 'fallback.api_error', ic_text: null });
      const off = await server.post('/api/lab/translate', { session_id: admin, world_id: 'hollow_spire', ooc_message: 'hi', axes: {} });
      expect(off.status).to.equal(503);
      expect(off.body.detail).to.equal("Translation layer not enabled for world 'hollow_spire'.");
    });
  });

  describe('language-model runtime commands', () => {
    it('lists models through the configured server and keeps run history per session', async () => {
      answer = (req) =>
        req.url === '/api/tags'
          ? { body: { models: [{ name: 'gemma2:2b', size: 1629518495, modified_at: '2026-11-01T10:00:00Z' }] } }
          : { body: { message: { role: 'assistant', content: 'Hello there.' } } };
      const list = await server.post('/admin/llm/command', { session_id: admin, command: 'list' });
      expect(list.body).to.deep.equal({ success: true, output: 'Available models:\n  - gemma2:2b (size: 1629518495, modified: 2026-11-01T10:00:00Z)\n' });
      const run = await server.post('/admin/llm/command', { session_id: admin, command: 'run gemma2:2b hi there' });
      expect(run.body.success).to.equal(true);
      expect(run.body.output).to.contain('Hello there.');
      const cleared = await server.post('/admin/llm/clear-context', { session_id: admin });
      expect(cleared.body).to.deep.equal({ success: true, message: 'Conversation context cleared (2 messages removed).' });
    });

    it('refuses a server that is not configured (no request forgery), and reports a runtime that is down', async () => {
      const forged = await server.post('/admin/llm/command', { session_id: admin, command: 'list', server_url: 'http://169.254.169.254' });
      expect(forged.status).to.equal(400);
      expect(forged.body.detail).to.contain('server_url must be one of');
      const down = await startTestServer({ env: { MUD_LLM_ALLOWED_SERVER_URLS: await closedPortUrl() } });
      try {
        const sid = await sessionFor(down, 'downadmin', 'admin');
        const res = await down.post('/admin/llm/command', { session_id: sid, command: 'ps' });
        expect(res.status).to.equal(200);
        expect(res.body.success).to.equal(false);
        expect(res.body.output).to.match(/^Cannot connect to Ollama server at /);
      } finally {
        await down.close();
      }
    });
  });

  describe('a policy set built through the policy API', () => {
    it('compiles to the same hashes as the shipped policy data', async () => {
      const expected = await server.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: admin });
      const dir = mkdtempSync(path.join(tmpdir(), 'mud-lab-empty-'));
      cpSync('worlds', dir, { recursive: true });
      rmSync(path.join(dir, 'emberwick', 'policy-artifact.json'));
      const fresh = await startTestServer({ env: { MUD_WORLDS_ROOT: dir } });
      try {
        const sid = await sessionFor(fresh, 'builder', 'admin');
        const empty = await fresh.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: sid });
        expect(empty.status).to.equal(409);
        const artifact = parseJson(readFileSync('worlds/emberwick/policy-artifact.json', 'utf8')) as { variants: Array<Record<string, unknown>> };
        // Blocks before the layers that reference them.
        const order = ['image_block', 'species_block', 'clothing_block', 'prompt', 'tone_profile', 'axis_bundle', 'manifest_bundle', 'descriptor_layer', 'registry'];
        const variants = [...artifact.variants].sort((a, b) => order.indexOf(String(a.policy_type)) - order.indexOf(String(b.policy_type)));
        for (const v of variants) {
          const id = encodeURIComponent(String(v.policy_id));
          // Raw JSON text keeps 1.0 as 1.0, so content hashes match the shipped ones.
          const body = canonicalJson({ schema_version: v.schema_version, policy_version: v.policy_version, status: v.status, content: v.content });
          const put = await fresh.request('PUT', `/api/policies/${id}/variants/${String(v.variant)}?session_id=${sid}`, body);
          expect(put.status, put.text).to.equal(200);
          expect(put.body.content_hash).to.equal(v.content_hash);
          const act = await fresh.post(`/api/policy-activations?session_id=${sid}`, { world_id: 'emberwick', policy_id: v.policy_id, variant: v.variant });
          expect(act.status, act.text).to.equal(200);
        }
        const compiled = await fresh.post('/api/lab/compile-image-prompt', { ...COMPILE, session_id: sid });
        expect(compiled.status, compiled.text).to.equal(200);
        expect(compiled.body.policy_hash).to.equal(expected.body.policy_hash);
        expect(compiled.body.axis_hash).to.equal(expected.body.axis_hash);
        expect(compiled.body.compiled_prompt).to.equal(expected.body.compiled_prompt);
      } finally {
        await fresh.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
