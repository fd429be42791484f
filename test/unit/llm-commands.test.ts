import { expect } from 'chai';
import { afterEach, describe, it } from 'mocha';
import { DomainError, Forbidden, InvalidInput } from '../../src/shared/errors.ts';
import { MAX_RESPONSE_BYTES, OllamaClient } from '../../src/integrations/ollama.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { DEFAULT_REGISTRY, LlmCommandService, registryOf, type LlmCommandConfig } from '../../src/services/lab/llm-commands.ts';
import { closedPortUrl, startFakeUpstream } from '../helpers/fake-upstream.ts';
import type { FakeHandler, FakeUpstream } from '../helpers/fake-upstream.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';

const SESSION = 1;
/** The console's callers: superusers may do everything, admins all but pull. */
const ROOT = 'superuser' as const;

describe('LlmCommandService (fake Ollama)', () => {
  let upstream: FakeUpstream | undefined;
  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
  });

  const logs = new MemoryTransport();
  const ollama = new OllamaClient(createLogger('debug', [logs]));

  function service(urls: string[], extra: Partial<LlmCommandConfig> = {}): LlmCommandService {
    return new LlmCommandService(ollama, {
      allowedServerUrls: urls,
      requestTimeoutSeconds: 5,
      pullTimeoutSeconds: 5,
      historyLimit: 20,
      allowedRegistries: ['registry.ollama.ai'],
      maxPromptBytes: 16384,
      maxHistoryBytesPerSession: 262144,
      maxHistoryBytesTotal: 4194304,
      ...extra,
    });
  }

  async function fake(handler: FakeHandler): Promise<{ up: FakeUpstream; svc: LlmCommandService }> {
    upstream = await startFakeUpstream(handler);
    return { up: upstream, svc: service([`${upstream.url}/`]) };
  }

  async function rejects(promise: Promise<unknown>): Promise<DomainError> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(DomainError);
      return err as DomainError;
    }
    throw new Error('expected a rejection');
  }

  it('list / ls', async () => {
    let calls = 0;
    const { up, svc } = await fake((req) => {
      expect(req.method).to.equal('GET');
      expect(req.url).to.equal('/api/tags');
      calls++;
      if (calls === 1) {
        return {
          body: {
            models: [
              { name: 'gemma2:2b', size: 1629518495, modified_at: '2024-07-01T10:00:00Z' },
              { name: 'llama3:8b', size: 4661224676, modified_at: '2024-06-01T10:00:00Z' },
            ],
          },
        };
      }
      if (calls === 2) return { body: { models: [] } };
      return { status: 500, body: 'nope' };
    });
    expect(await svc.run(SESSION, ROOT, 'list')).to.deep.equal({
      success: true,
      output:
        'Available models:\n' +
        '  - gemma2:2b (size: 1629518495, modified: 2024-07-01T10:00:00Z)\n' +
        '  - llama3:8b (size: 4661224676, modified: 2024-06-01T10:00:00Z)\n',
    });
    expect(await svc.run(SESSION, ROOT, '  LS  ')).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, ROOT, 'list')).to.deep.equal({ success: false, output: 'Failed to list models: HTTP 500' });
    expect(up.requests).to.have.length(3);
  });

  it('ps', async () => {
    const { svc } = await fake((req, _res, i) => {
      expect(req.url).to.equal('/api/ps');
      if (i === 0) return { body: { models: [{ name: 'gemma2:2b' }, { name: 'llama3:8b' }] } };
      if (i === 1) return { body: { models: [] } };
      return { status: 404, body: '' };
    });
    expect(await svc.run(SESSION, ROOT, 'ps')).to.deep.equal({ success: true, output: 'Running models:\n  - gemma2:2b\n  - llama3:8b\n' });
    expect(await svc.run(SESSION, ROOT, 'ps')).to.deep.equal({ success: true, output: 'No models currently running.' });
    expect(await svc.run(SESSION, ROOT, 'ps')).to.deep.equal({ success: false, output: 'Failed to show running models: HTTP 404' });
  });

  it('show', async () => {
    const { up, svc } = await fake((_req, _res, i) => {
      if (i === 0) return { body: { modelfile: 'FROM gemma2', parameters: 'stop "<end>"' } };
      if (i === 1) return { body: {} };
      return { status: 404, body: { error: 'model not found' } };
    });
    expect(await svc.run(SESSION, ROOT, 'show gemma2:2b')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b\nModelfile:\nFROM gemma2\nParameters:\nstop "<end>"\n',
    });
    expect(up.requests[0]).to.include({ method: 'POST', url: '/api/show' });
    expect(up.requests[0]!.body).to.deep.equal({ name: 'gemma2:2b' });
    expect(await svc.run(SESSION, ROOT, 'show x')).to.deep.equal({ success: true, output: 'Model: x\nModelfile:\nN/A\nParameters:\nN/A\n' });
    expect(await svc.run(SESSION, ROOT, 'show x')).to.deep.equal({ success: false, output: 'Failed to show model info: HTTP 404' });
  });

  it('pull streams status lines; a streamed error fails; non-200 fails', async () => {
    const { up, svc } = await fake((_req, res, i) => {
      if (i === 2) return { status: 500, body: 'err' };
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"status":"pulling manifest"}\n');
      setTimeout(() => {
        if (i === 0) {
          res.write('{"status":"pulling abc","digest":"abc","total":10,"completed":5}\n');
          res.end('{"status":"success"}\n');
        } else {
          res.end('{"error":"pull model manifest: file does not exist"}\n');
        }
      }, 20);
    });
    expect(await svc.run(SESSION, ROOT, 'pull gemma2:2b')).to.deep.equal({
      success: true,
      output: "Pulling model 'gemma2:2b'...\npulling manifest\npulling abc\nsuccess\n",
    });
    expect(up.requests[0]).to.include({ method: 'POST', url: '/api/pull' });
    expect(up.requests[0]!.body).to.deep.equal({ name: 'gemma2:2b' });
    expect(await svc.run(SESSION, ROOT, 'pull nope')).to.deep.equal({ success: false, output: 'Error: pull model manifest: file does not exist' });
    expect(await svc.run(SESSION, ROOT, 'pull x')).to.deep.equal({ success: false, output: 'Failed to pull model: HTTP 500' });
  });

  it('run keeps history per session, bounded, and commits only on success; clear empties it', async () => {
    const { up, svc } = await fake((req, _res, i) => {
      if (i === 2) return { status: 500, body: 'model exploded' };
      const messages = (req.body as { messages: unknown[] }).messages;
      return { body: { message: { role: 'assistant', content: `answer ${i} (saw ${messages.length})` } } };
    });
    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'No conversation context to clear.' });

    expect(await svc.run(SESSION, ROOT, 'run gemma2:2b')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b (Context: 2 messages)\nYou: Hello\n\nResponse:\nanswer 0 (saw 1)',
    });
    expect(up.requests[0]!.body).to.deep.equal({ model: 'gemma2:2b', messages: [{ role: 'user', content: 'Hello' }], stream: false });

    expect(await svc.run(SESSION, ROOT, 'run gemma2:2b how   are you')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b (Context: 4 messages)\nYou: how are you\n\nResponse:\nanswer 1 (saw 3)',
    });
    expect((up.requests[1]!.body as { messages: unknown[] }).messages).to.deep.equal([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'answer 0 (saw 1)' },
      { role: 'user', content: 'how are you' },
    ]);

    // Failure: no orphan user turn is left behind.
    expect(await svc.run(SESSION, ROOT, 'run gemma2:2b fail please')).to.deep.equal({
      success: false,
      output: 'Failed to run model: HTTP 500\nmodel exploded',
    });
    expect(svc.history(SESSION)).to.have.length(4);

    // Another session has its own history.
    const other = await svc.run(2, ROOT, 'run other hi');
    expect(other.output).to.equal('Model: other (Context: 2 messages)\nYou: hi\n\nResponse:\nanswer 3 (saw 1)');

    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'Conversation context cleared (4 messages removed).' });
    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'Conversation context cleared (0 messages removed).' });
  });

  it('run history is bounded to historyLimit messages (oldest dropped)', async () => {
    upstream = await startFakeUpstream((req) => ({
      body: { message: { content: `saw ${(req.body as { messages: unknown[] }).messages.length}` } },
    }));
    const svc = service([upstream.url], { historyLimit: 4 });
    for (let i = 0; i < 4; i++) await svc.run(SESSION, ROOT, `run m q${i}`);
    const last = await svc.run(SESSION, ROOT, 'run m final');
    expect(last.output).to.equal('Model: m (Context: 4 messages)\nYou: final\n\nResponse:\nsaw 4');
    expect(svc.history(SESSION).map((m) => m.content)).to.deep.equal(['q3', 'saw 4', 'final', 'saw 4']);
    const lastSent = (upstream.requests.at(-1)!.body as { messages: Array<{ content: string }> }).messages;
    expect(lastSent.map((m) => m.content)).to.deep.equal(['saw 4', 'q3', 'saw 4', 'final']);
  });

  it('unknown verbs, usage errors and an empty command', async () => {
    const { up, svc } = await fake(() => ({ status: 500 }));
    expect(await svc.run(SESSION, ROOT, 'Delete everything')).to.deep.equal({
      success: false,
      output: 'Unknown command: delete\nSupported commands: list, ps, pull, run, show',
    });
    expect(await svc.run(SESSION, ROOT, 'pull')).to.deep.equal({ success: false, output: 'Usage: pull <model_name>' });
    expect(await svc.run(SESSION, ROOT, 'run')).to.deep.equal({ success: false, output: 'Usage: run <model_name> [prompt]' });
    expect(await svc.run(SESSION, ROOT, 'show')).to.deep.equal({ success: false, output: 'Usage: show <model_name>' });
    expect(await svc.run(SESSION, ROOT, '   ')).to.deep.equal({ success: false, output: 'Command is required' });
    expect(up.requests).to.have.length(0);
  });

  it('server_url: default is the first allowed; others must be allowed (trailing slash ignored), else 400', async () => {
    upstream = await startFakeUpstream(() => ({ body: { models: [] } }));
    const other = await closedPortUrl();
    const svc = service([`${upstream.url}/`, other]);
    expect(await svc.run(SESSION, ROOT, 'ls')).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, ROOT, 'ls', `${upstream.url}//`)).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, ROOT, 'ls', other)).to.deep.equal({ success: false, output: `Cannot connect to Ollama server at ${other}` });

    const err = await rejects(svc.run(SESSION, ROOT, 'ls', 'http://169.254.169.254'));
    expect(err).to.be.instanceOf(InvalidInput);
    expect(err.message).to.equal(`server_url must be one of the configured language-model servers: ${upstream.url}, ${other}`);
    expect(upstream.requests).to.have.length(2);
  });

  it('unreachable server → success false; timeout → the timeout message', async () => {
    const closed = await closedPortUrl();
    const svc = service([closed]);
    expect(await svc.run(SESSION, ROOT, 'run m hi')).to.deep.equal({ success: false, output: `Cannot connect to Ollama server at ${closed}` });
    expect(svc.history(SESSION)).to.have.length(0);

    upstream = await startFakeUpstream(() => ({ body: { models: [] }, delayMs: 1000 }));
    const slow = service([upstream.url], { requestTimeoutSeconds: 0.1, pullTimeoutSeconds: 0.1 });
    expect(await slow.run(SESSION, ROOT, 'list')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(await slow.run(SESSION, ROOT, 'pull m')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(await slow.run(SESSION, ROOT, 'run m hi')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(slow.history(SESSION)).to.have.length(0);
  });

  it('logs no prompt contents', async () => {
    const { svc } = await fake(() => ({ body: { message: { content: 'SECRET-ANSWER' } } }));
    await svc.run(SESSION, ROOT, 'run m SECRET-PROMPT');
    expect(logs.text()).to.not.include('SECRET');
  });

  describe('hardening (issue 13)', () => {
    it('reads the registry of a model name as Ollama does: in host/namespace/model the first segment is the host, whatever it looks like', () => {
      expect(registryOf('gemma2:2b')).to.equal(DEFAULT_REGISTRY);
      expect(registryOf('library/llama3:8b')).to.equal(DEFAULT_REGISTRY);
      expect(registryOf('Registry.Ollama.AI/library/llama3')).to.equal('registry.ollama.ai');
      expect(registryOf('attacker.example:8443/ns/model')).to.equal('attacker.example:8443');
      expect(registryOf('hf.co/user/model:Q4')).to.equal('hf.co');
      expect(registryOf('intranet/ns/model')).to.equal('intranet');
      expect(registryOf('intranet:5000/ns/model:latest')).to.equal('intranet:5000');
      // Two segments are namespace/model, on the default registry (Ollama refuses a namespace with a colon).
      expect(registryOf('localhost/x')).to.equal(DEFAULT_REGISTRY);
      expect(registryOf('https://attacker.example/ns/model')).to.equal('attacker.example');
      expect(registryOf('a/b/ns/model')).to.equal('a/b');
    });

    it('pull is for superusers only: an admin gets Forbidden and nothing reaches Ollama', async () => {
      const { up, svc } = await fake(() => ({ body: '{"status":"success"}\n' }));
      const err = await rejects(svc.run(SESSION, 'admin', 'pull gemma2:2b'));
      expect(err).to.be.instanceOf(Forbidden);
      expect(err.message).to.equal('Only superusers may pull models.');
      expect(await rejects(svc.run(SESSION, 'admin', 'PULL'))).to.be.instanceOf(Forbidden);
      expect(up.requests).to.have.length(0);
      expect(await svc.run(SESSION, ROOT, 'pull gemma2:2b')).to.deep.equal({ success: true, output: "Pulling model 'gemma2:2b'...\nsuccess\n" });
    });

    it('pull, show and run only name allowed registries (400 before any request); no host means registry.ollama.ai', async () => {
      const { up, svc } = await fake((req) =>
        req.url === '/api/pull' ? { body: '{"status":"success"}\n' } : req.url === '/api/show' ? { body: {} } : { body: { message: { content: 'hi' } } },
      );
      for (const command of ['pull attacker.example:8443/ns/model', 'run hf.co/u/m hello', 'pull https://attacker.example/ns/m', 'pull intranet/ns/model', 'show localhost/ns/x']) {
        const err = await rejects(svc.run(SESSION, ROOT, command));
        expect(err, command).to.be.instanceOf(InvalidInput);
        expect(err.message).to.match(/^Model '.+' comes from registry '.+', which is not allowed \(allowed registries: registry\.ollama\.ai\)\.$/);
      }
      expect(up.requests).to.have.length(0);
      for (const command of ['pull registry.ollama.ai/library/llama3', 'pull library/llama3', 'show gemma2:2b', 'run gemma2:2b hi']) {
        expect((await svc.run(SESSION, ROOT, command)).success, command).to.equal(true);
      }
      expect(up.requests.map((r) => (r.body as { name?: string; model?: string }).name ?? (r.body as { model: string }).model)).to.deep.equal([
        'registry.ollama.ai/library/llama3',
        'library/llama3',
        'gemma2:2b',
        'gemma2:2b',
      ]);

      // Another list: the default registry is then not allowed either.
      const own = service([up.url], { allowedRegistries: [' Models.Example.Org:5000 '] });
      expect((await own.run(SESSION, ROOT, 'show models.example.org:5000/team/m')).success).to.equal(true);
      expect((await rejects(own.run(SESSION, ROOT, 'show gemma2:2b'))).message).to.equal(
        "Model 'gemma2:2b' comes from registry 'registry.ollama.ai', which is not allowed (allowed registries: models.example.org:5000).",
      );
      const none = service([up.url], { allowedRegistries: [] });
      expect((await rejects(none.run(SESSION, ROOT, 'run m hi'))).message).to.contain('(allowed registries: (none))');
    });

    it('refuses a run prompt over maxPromptBytes (UTF-8 bytes), without a request', async () => {
      const { up, svc } = await fake(() => ({ body: { message: { content: 'ok' } } }));
      const small = service([up.url], { maxPromptBytes: 64 });
      expect((await small.run(SESSION, ROOT, `run m ${'a'.repeat(64)}`)).success).to.equal(true);
      const ascii = await rejects(small.run(SESSION, ROOT, `run m ${'a'.repeat(65)}`));
      expect(ascii).to.be.instanceOf(InvalidInput);
      expect(ascii.message).to.equal('The prompt is 65 bytes; the limit is 64 bytes.');
      // 33 characters, 66 bytes.
      expect((await rejects(small.run(SESSION, ROOT, `run m ${'é'.repeat(33)}`))).message).to.equal('The prompt is 66 bytes; the limit is 64 bytes.');
      expect(up.requests).to.have.length(1);
      expect(svc.history(SESSION)).to.have.length(0);
    });

    it('bounds run history in bytes per session: the oldest messages go first', async () => {
      const answer = 'x'.repeat(300);
      const { up } = await fake(() => ({ body: { message: { content: answer } } }));
      const svc = service([up.url], { maxHistoryBytesPerSession: 1024 });
      for (let i = 0; i < 5; i++) await svc.run(SESSION, ROOT, `run m q${i}`);
      // Each exchange is 302 bytes: three fit (906), the oldest messages were dropped.
      expect(svc.history(SESSION).map((m) => m.content)).to.deep.equal(['q2', answer, 'q3', answer, 'q4', answer]);
      expect(svc.historyBytes()).to.equal(906);
      svc.clear(SESSION);
      expect(svc.historyBytes()).to.equal(0);
    });

    it('bounds run history in bytes over all sessions: whole least recently used sessions go first', async () => {
      const { up } = await fake(() => ({ body: { message: { content: 'y'.repeat(1000) } } }));
      const svc = service([up.url], { maxHistoryBytesPerSession: 4096, maxHistoryBytesTotal: 5000 });
      for (const session of [1, 2, 3, 4]) await svc.run(session, ROOT, 'run m hi');
      await svc.run(1, ROOT, 'run m again'); // session 1 becomes the most recently used
      await svc.run(5, ROOT, 'run m hi');
      // Exchanges of 1002 bytes (1007 for "again"): session 1's second one overflowed 5000 and
      // evicted session 2, the least recently used; session 5's then evicted session 3.
      expect([1, 2, 3, 4, 5].map((session) => svc.history(session).length)).to.deep.equal([4, 0, 0, 2, 2]);
      expect(svc.historyBytes()).to.equal(2007 + 1002 + 1002);
      expect(svc.historyBytes()).to.be.at.most(5000);
    });

    it('an answer larger than the session budget is shown but not kept', async () => {
      const { up } = await fake(() => ({ body: { message: { content: 'z'.repeat(5000) } } }));
      const svc = service([up.url], { maxHistoryBytesPerSession: 4096 });
      const result = await svc.run(SESSION, ROOT, 'run m hi');
      expect(result.success).to.equal(true);
      expect(result.output.endsWith('z'.repeat(5000))).to.equal(true);
      expect(svc.history(SESSION)).to.deep.equal([]);
      expect(svc.historyBytes()).to.equal(0);
    });

    it('keeps memory bounded under many large answers (the audit: 20 × 1 MB)', async () => {
      const big = 'w'.repeat(1024 * 1024 - 100);
      const { up } = await fake(() => ({ body: { message: { content: big } } }));
      const svc = service([up.url]);
      for (let i = 0; i < 20; i++) await svc.run(i % 4, ROOT, `run m ${'p'.repeat(16000)}`);
      expect(svc.historyBytes()).to.be.at.most(4194304);
      for (let session = 0; session < 4; session++) {
        const kept = svc.history(session).reduce((sum, m) => sum + Buffer.byteLength(m.content), 0);
        expect(kept).to.be.at.most(262144);
      }
    });

    it('an Ollama answer over MAX_RESPONSE_BYTES fails like an unreadable one; pull answers get more room', async () => {
      const { up, svc } = await fake((req, res) => {
        if (req.url === '/api/pull') {
          // 1.5 MiB of progress lines: within the pull allowance.
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          const line = `${JSON.stringify({ status: 'pulling abc', digest: 'sha256:abc', total: 10, completed: 5 })}\n`;
          res.end(line.repeat(Math.ceil((1.5 * 1024 * 1024) / line.length)) + '{"status":"success"}\n');
          return;
        }
        return { body: { message: { content: 'v'.repeat(MAX_RESPONSE_BYTES) } } };
      });
      expect(await svc.run(SESSION, ROOT, 'run m hi')).to.deep.equal({
        success: false,
        output: 'Error: Ollama server returned an answer larger than this server reads',
      });
      expect(svc.history(SESSION)).to.have.length(0);
      const pulled = await svc.run(SESSION, ROOT, 'pull m');
      expect(pulled.success).to.equal(true);
      expect(pulled.output.endsWith('pulling abc\nsuccess\n')).to.equal(true);
      expect(up.requests).to.have.length(2);
      expect(logs.text()).to.contain('"reason":"too_large"');
    });
  });
});
