/**
 * Security hardening of the lab and policy areas (issue 13: findings 9, 10 and 15), through
 * HTTP against the real app, with a fake Ollama on 127.0.0.1: the admin language-model console
 * (who may pull, from which registries, prompt and history sizes, oversized answers), policy
 * content bounds, publish artifact size, paths and retention, and the documentation pages'
 * security headers.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { startFakeUpstream, type FakeHandler, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { MAX_RESPONSE_BYTES } from '../../src/integrations/ollama.ts';

const enc = encodeURIComponent;

describe('hardening: the admin language-model console (issue 13 #9)', () => {
  let server: TestServer;
  let ollama: FakeUpstream;
  let admin: string;
  let root: string;
  let answer: FakeHandler = () => ({ body: { message: { content: 'ok' } } });

  before(async () => {
    ollama = await startFakeUpstream((req, res, i) => answer(req, res, i));
    server = await startTestServer({ env: { MUD_LLM_ALLOWED_SERVER_URLS: ollama.url, MUD_LLM_MAX_HISTORY_BYTES_PER_SESSION: '2048' } });
    admin = await sessionFor(server, 'llmadmin', 'admin');
    root = await sessionFor(server, 'llmroot', 'superuser');
  });
  after(async () => {
    await server.close();
    await ollama.close();
  });

  const command = (session: string, text: string): Promise<HttpResponse> => server.post('/admin/llm/command', { session_id: session, command: text });

  it('pull is for superusers: an admin gets 403 and nothing reaches Ollama', async () => {
    answer = () => ({ body: '{"status":"pulling manifest"}\n{"status":"success"}\n' });
    const before = ollama.requests.length;
    const refused = await command(admin, 'pull gemma2:2b');
    expect(refused.status, refused.text).to.equal(403);
    expect(refused.body).to.deep.equal({ detail: 'Only superusers may pull models.' });
    expect(ollama.requests.length).to.equal(before);

    const pulled = await command(root, 'pull gemma2:2b');
    expect(pulled.status, pulled.text).to.equal(200);
    expect(pulled.body).to.deep.equal({ success: true, output: "Pulling model 'gemma2:2b'...\npulling manifest\nsuccess\n" });
    expect(ollama.requests.at(-1)!.body).to.deep.equal({ name: 'gemma2:2b' });
  });

  it('pull, show and run name only allowed registries (400 before any request)', async () => {
    answer = () => ({ body: { message: { content: 'ok' } } });
    const before = ollama.requests.length;
    for (const [session, text, registry] of [
      [root, 'pull attacker.example:8443/ns/model', 'attacker.example:8443'],
      [root, 'pull https://attacker.example/ns/model', 'attacker.example'],
      [root, 'pull intranet/ns/model', 'intranet'],
      [admin, 'show localhost/library/model', 'localhost'],
      [admin, 'run hf.co/someone/model hello', 'hf.co'],
    ] as const) {
      const res = await command(session, text);
      expect(res.status, `${text}: ${res.text}`).to.equal(400);
      expect(res.body.detail).to.equal(`Model '${text.split(' ')[1]}' comes from registry '${registry}', which is not allowed (allowed registries: registry.ollama.ai).`);
    }
    expect(ollama.requests.length).to.equal(before);
    // No host, or the default registry named: allowed.
    for (const text of ['show library/llama3', 'show registry.ollama.ai/library/llama3:8b']) {
      const res = await command(admin, text);
      expect(res.status, res.text).to.equal(200);
    }
  });

  it('a prompt over [llm] max_prompt_bytes is a 400; a command over the contract maxLength too', async () => {
    answer = () => ({ body: { message: { content: 'ok' } } });
    const before = ollama.requests.length;
    // 9000 characters (within maxLength), 18000 bytes.
    const wide = await command(admin, `run gemma2:2b ${'é'.repeat(9000)}`);
    expect(wide.status, wide.text).to.equal(400);
    expect(wide.body).to.deep.equal({ detail: 'The prompt is 18000 bytes; the limit is 16384 bytes.' });
    const long = await command(admin, `run gemma2:2b ${'a'.repeat(16384)}`);
    expect(long.status).to.equal(400);
    expect(long.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/body/command']);
    expect(ollama.requests.length).to.equal(before);
    const fits = await command(admin, `run gemma2:2b ${'a'.repeat(16384 - 'run gemma2:2b '.length)}`);
    expect(fits.body.success, fits.text).to.equal(true);
    await server.post('/admin/llm/clear-context', { session_id: admin });
  });

  it('run history is bounded in bytes per session: the oldest messages go first', async () => {
    answer = () => ({ body: { message: { content: 'x'.repeat(1000) } } });
    const contexts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await command(root, 'run gemma2:2b hi');
      contexts.push(/Context: (\d+) messages/.exec(res.body.output)![1]!);
    }
    // 1002 bytes per exchange against a 2048-byte budget: the third evicted the first.
    expect(contexts).to.deep.equal(['2', '4', '4']);
    const sent = ollama.requests.at(-1)!.body as { messages: unknown[] };
    expect(sent.messages).to.have.length(5);
    const cleared = await server.post('/admin/llm/clear-context', { session_id: root });
    expect(cleared.body).to.deep.equal({ success: true, message: 'Conversation context cleared (4 messages removed).' });
  });

  it('an Ollama answer over 1 MiB is refused like an unreadable one', async () => {
    answer = () => ({ body: { message: { content: 'y'.repeat(MAX_RESPONSE_BYTES) } } });
    const res = await command(admin, 'run gemma2:2b hi');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ success: false, output: 'Error: Ollama server returned an answer larger than this server reads' });
    const cleared = await server.post('/admin/llm/clear-context', { session_id: admin });
    expect(cleared.body.message).to.equal('Conversation context cleared (0 messages removed).');
  });

  it('[llm] allowed_registries and max_prompt_bytes come from the configuration', async () => {
    const own = await startTestServer({
      env: { MUD_LLM_ALLOWED_SERVER_URLS: ollama.url, MUD_LLM_ALLOWED_REGISTRIES: 'models.example.org:5000', MUD_LLM_MAX_PROMPT_BYTES: '100' },
    });
    try {
      const sid = await sessionFor(own, 'ownroot', 'superuser');
      answer = () => ({ body: '{"status":"success"}\n' });
      const ours = await own.post('/admin/llm/command', { session_id: sid, command: 'pull models.example.org:5000/team/model' });
      expect(ours.body, ours.text).to.deep.equal({ success: true, output: "Pulling model 'models.example.org:5000/team/model'...\nsuccess\n" });
      const library = await own.post('/admin/llm/command', { session_id: sid, command: 'pull gemma2:2b' });
      expect(library.status).to.equal(400);
      expect(library.body.detail).to.equal(
        "Model 'gemma2:2b' comes from registry 'registry.ollama.ai', which is not allowed (allowed registries: models.example.org:5000).",
      );
      const prompt = await own.post('/admin/llm/command', { session_id: sid, command: `run models.example.org:5000/team/m ${'a'.repeat(101)}` });
      expect(prompt.body).to.deep.equal({ detail: 'The prompt is 101 bytes; the limit is 100 bytes.' });
    } finally {
      await own.close();
    }
  });
});

describe('hardening: policy content, publish artifacts and retention (issue 13 #10, #15)', () => {
  let server: TestServer;
  let sid: string;
  const WORLD = 'hollow_spire';

  before(async () => {
    server = await startTestServer({
      env: { MUD_POLICY_MAX_ARTIFACTS_PER_SCOPE: '2', MUD_POLICY_MAX_CLIENT_PROFILES_PER_WORLD: '2', MUD_POLICY_MAX_ARTIFACT_BYTES: String(128 * 1024) },
    });
    sid = await sessionFor(server, 'hardener', 'admin');
  });
  after(async () => {
    await server.close();
  });

  const call = (method: string, urlPath: string, body?: unknown): Promise<HttpResponse> =>
    server.request(method, `${urlPath}${urlPath.includes('?') ? '&' : '?'}session_id=${sid}`, body);
  /** Raw JSON text, so no client-side serializer limits the nesting. */
  const put = (policyId: string, contentJson: string): Promise<HttpResponse> =>
    call('PUT', `/api/policies/${enc(policyId)}/variants/v1`, `{"schema_version": "1.0", "policy_version": 1, "status": "active", "content": ${contentJson}}`);
  const exportsRoot = (): string => path.resolve(server.config.policy.exportsRoot);
  const worldDir = (): string => path.join(exportsRoot(), 'worlds', WORLD);

  /** `{"text": "t", "n": {"n": ... {"leaf": true}}}`: `levels` levels in all. */
  function nested(levels: number): string {
    return `{"text": "t", "n": ${'{"n": '.repeat(levels - 2)}{"leaf": true}${'}'.repeat(levels - 2)}}`;
  }

  async function activateAndPublish(policyId: string, clientProfile: string | null): Promise<HttpResponse> {
    const activated = await call('POST', '/api/policy-activations', { world_id: WORLD, client_profile: clientProfile, policy_id: policyId, variant: 'v1' });
    expect(activated.status, activated.text).to.equal(200);
    return call('POST', '/api/policy-publish', { world_id: WORLD, client_profile: clientProfile });
  }

  it('content may nest 32 levels, not 33: 422 POLICY_VALIDATION_ERROR on upsert, is_valid false on validate', async () => {
    expect((await put('prompt:hardening.depth:ok', nested(32))).status).to.equal(200);
    for (const content of [nested(33), nested(1500)]) {
      const res = await put('prompt:hardening.depth:deep', content);
      expect(res.status, res.text).to.equal(422);
      expect(res.body).to.deep.equal({ code: 'POLICY_VALIDATION_ERROR', stage: 'policy', detail: 'content must not be nested more than 32 levels deep' });
    }
    const validated = await call(
      'POST',
      `/api/policies/${enc('prompt:hardening.depth:deep')}/validate?variant=v1`,
      `{"schema_version": "1.0", "policy_version": 1, "status": "active", "content": ${nested(33)}}`,
    );
    expect(validated.status, validated.text).to.equal(200);
    expect(validated.body).to.deep.include({ is_valid: false, errors: ['content must not be nested more than 32 levels deep'] });
  });

  it('content may take 256 KiB of canonical JSON, not more', async () => {
    const text = (n: number): string => `{"text": "${'a'.repeat(n)}"}`;
    expect((await put('prompt:hardening.size:ok', text(256 * 1024 - 12))).status).to.equal(200);
    const res = await put('prompt:hardening.size:big', text(256 * 1024 - 11));
    expect(res.status).to.equal(422);
    expect(res.body.detail).to.equal('content must not be larger than 262144 bytes as canonical JSON');
  });

  it('an imported variant with too deep content is refused on its own', async () => {
    const raw = `{"activate": false, "artifact": {"world_id": "${WORLD}", "variants": [{"policy_id": "prompt:hardening.import:deep", "variant": "v1", "schema_version": "1.0", "policy_version": 1, "status": "active", "content": ${nested(40)}}]}}`;
    const res = await call('POST', '/api/policy-import', raw);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.include({ error_count: 1, imported_count: 0 });
    expect(res.body.entries).to.deep.equal([
      { policy_id: 'prompt:hardening.import:deep', variant: 'v1', action: 'error', detail: 'content must not be nested more than 32 levels deep' },
    ]);
  });

  it('publish answers paths relative to the exports root, never the server directory', async () => {
    const res = await activateAndPublish('prompt:hardening.depth:ok', null);
    expect(res.status, res.text).to.equal(200);
    const { artifact_path: artifactPath, latest_path: latestPath } = res.body.artifact;
    expect(artifactPath).to.equal(`worlds/${WORLD}/world/publish_${res.body.manifest.manifest_hash}.json`);
    expect(latestPath).to.equal(`worlds/${WORLD}/world/latest.json`);
    expect(res.text).to.not.contain(exportsRoot());
    expect(existsSync(path.join(exportsRoot(), artifactPath))).to.equal(true);
    expect(JSON.parse(readFileSync(path.join(exportsRoot(), latestPath), 'utf8')).artifact_path).to.equal(artifactPath);
    const run = await call('GET', `/api/policy-publish/${res.body.publish_run_id}`);
    expect(run.body.artifact).to.deep.equal(res.body.artifact);
  });

  it('keeps the newest [policy] max_artifacts_per_scope artifacts of a scope', async () => {
    const files: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      expect((await put('prompt:hardening.retention:rotating', `{"text": "${text}"}`)).status).to.equal(200);
      const res = await activateAndPublish('prompt:hardening.retention:rotating', null);
      expect(res.status, res.text).to.equal(200);
      files.push(path.posix.basename(res.body.artifact.artifact_path));
    }
    const left = readdirSync(path.join(worldDir(), 'world')).sort();
    expect(left).to.deep.equal([...files.slice(1), 'latest.json'].sort());
    expect(JSON.parse(readFileSync(path.join(worldDir(), 'world', 'latest.json'), 'utf8')).artifact_file).to.equal(files[2]);
  });

  it('keeps the [policy] max_client_profiles_per_world client folders published most recently', async () => {
    for (const profile of ['alpha', 'beta', 'gamma']) expect((await activateAndPublish('prompt:hardening.depth:ok', profile)).status).to.equal(200);
    expect(readdirSync(worldDir()).sort()).to.deep.equal(['client_beta', 'client_gamma', 'world']);
    expect((await activateAndPublish('prompt:hardening.depth:ok', 'alpha')).status).to.equal(200);
    expect(readdirSync(worldDir()).sort()).to.deep.equal(['client_alpha', 'client_gamma', 'world']);
  });

  it('an artifact over [policy] max_artifact_bytes is a 422: no file, no run', async () => {
    expect((await put('prompt:hardening.size:ok2', `{"text": "${'b'.repeat(200 * 1024)}"}`)).status).to.equal(200);
    const runs = async (): Promise<number> => Number((await server.db('policy_publish_runs').count({ n: '*' }).first())?.n);
    const before = await runs();
    const res = await activateAndPublish('prompt:hardening.size:ok2', 'big');
    expect(res.status, res.text).to.equal(422);
    expect(res.body).to.deep.equal({
      code: 'POLICY_PUBLISH_ARTIFACT_TOO_LARGE',
      stage: 'policy',
      detail: `The publish artifact would be larger than this server's limit of ${128 * 1024} bytes.`,
    });
    expect(await runs()).to.equal(before);
    expect(existsSync(path.join(worldDir(), 'client_big')) ? readdirSync(path.join(worldDir(), 'client_big')) : []).to.deep.equal([]);
  });
});

describe('hardening: documentation pages (issue 13 #15)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it('/docs and /redoc may not be framed or sniffed, and run only same-origin scripts', async () => {
    for (const urlPath of ['/docs/', '/docs/swagger-initializer.js', '/docs/swagger-ui-bundle.js', '/redoc', '/redoc/init.js', '/redoc/redoc.standalone.js']) {
      const res = await fetch(`${server.url}${urlPath}`);
      await res.arrayBuffer();
      expect(res.status, urlPath).to.equal(200);
      expect(res.headers.get('x-content-type-options'), urlPath).to.equal('nosniff');
      expect(res.headers.get('x-frame-options'), urlPath).to.equal('DENY');
      const csp = (res.headers.get('content-security-policy') ?? '').split('; ');
      expect(csp, urlPath).to.include.members(["script-src 'self'", "frame-ancestors 'none'", "worker-src 'self' blob:", "object-src 'none'"]);
    }
    const redirect = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    expect(redirect.status).to.equal(301);
    expect(redirect.headers.get('x-frame-options')).to.equal('DENY');
  });
});
