import { expect } from 'chai';
import { afterEach, describe, it } from 'mocha';
import { DomainError, InvalidInput } from '../../src/services/errors.ts';
import { OllamaClient } from '../../src/integrations/ollama.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { LlmCommandService } from '../../src/services/lab/llm-commands.ts';
import { closedPortUrl, startFakeUpstream } from '../helpers/fake-upstream.ts';
import type { FakeHandler, FakeUpstream } from '../helpers/fake-upstream.ts';
import { MemoryTransport } from '../helpers/memory-transport.ts';

const SESSION = 'session-a';

describe('LlmCommandService (fake Ollama)', () => {
  let upstream: FakeUpstream | undefined;
  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
  });

  const logs = new MemoryTransport();
  const ollama = new OllamaClient(createLogger('debug', [logs]));

  function service(urls: string[], extra: Partial<{ requestTimeoutSeconds: number; pullTimeoutSeconds: number; historyLimit: number }> = {}): LlmCommandService {
    return new LlmCommandService(ollama, { allowedServerUrls: urls, requestTimeoutSeconds: 5, pullTimeoutSeconds: 5, historyLimit: 20, ...extra });
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
    expect(await svc.run(SESSION, 'list')).to.deep.equal({
      success: true,
      output:
        'Available models:\n' +
        '  - gemma2:2b (size: 1629518495, modified: 2024-07-01T10:00:00Z)\n' +
        '  - llama3:8b (size: 4661224676, modified: 2024-06-01T10:00:00Z)\n',
    });
    expect(await svc.run(SESSION, '  LS  ')).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, 'list')).to.deep.equal({ success: false, output: 'Failed to list models: HTTP 500' });
    expect(up.requests).to.have.length(3);
  });

  it('ps', async () => {
    const { svc } = await fake((req, _res, i) => {
      expect(req.url).to.equal('/api/ps');
      if (i === 0) return { body: { models: [{ name: 'gemma2:2b' }, { name: 'llama3:8b' }] } };
      if (i === 1) return { body: { models: [] } };
      return { status: 404, body: '' };
    });
    expect(await svc.run(SESSION, 'ps')).to.deep.equal({ success: true, output: 'Running models:\n  - gemma2:2b\n  - llama3:8b\n' });
    expect(await svc.run(SESSION, 'ps')).to.deep.equal({ success: true, output: 'No models currently running.' });
    expect(await svc.run(SESSION, 'ps')).to.deep.equal({ success: false, output: 'Failed to show running models: HTTP 404' });
  });

  it('show', async () => {
    const { up, svc } = await fake((_req, _res, i) => {
      if (i === 0) return { body: { modelfile: 'FROM gemma2', parameters: 'stop "<end>"' } };
      if (i === 1) return { body: {} };
      return { status: 404, body: { error: 'model not found' } };
    });
    expect(await svc.run(SESSION, 'show gemma2:2b')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b\nModelfile:\nFROM gemma2\nParameters:\nstop "<end>"\n',
    });
    expect(up.requests[0]).to.include({ method: 'POST', url: '/api/show' });
    expect(up.requests[0]!.body).to.deep.equal({ name: 'gemma2:2b' });
    expect(await svc.run(SESSION, 'show x')).to.deep.equal({ success: true, output: 'Model: x\nModelfile:\nN/A\nParameters:\nN/A\n' });
    expect(await svc.run(SESSION, 'show x')).to.deep.equal({ success: false, output: 'Failed to show model info: HTTP 404' });
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
    expect(await svc.run(SESSION, 'pull gemma2:2b')).to.deep.equal({
      success: true,
      output: "Pulling model 'gemma2:2b'...\npulling manifest\npulling abc\nsuccess\n",
    });
    expect(up.requests[0]).to.include({ method: 'POST', url: '/api/pull' });
    expect(up.requests[0]!.body).to.deep.equal({ name: 'gemma2:2b' });
    expect(await svc.run(SESSION, 'pull nope')).to.deep.equal({ success: false, output: 'Error: pull model manifest: file does not exist' });
    expect(await svc.run(SESSION, 'pull x')).to.deep.equal({ success: false, output: 'Failed to pull model: HTTP 500' });
  });

  it('run keeps history per session, bounded, and commits only on success; clear empties it', async () => {
    const { up, svc } = await fake((req, _res, i) => {
      if (i === 2) return { status: 500, body: 'model exploded' };
      const messages = (req.body as { messages: unknown[] }).messages;
      return { body: { message: { role: 'assistant', content: `answer ${i} (saw ${messages.length})` } } };
    });
    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'No conversation context to clear.' });

    expect(await svc.run(SESSION, 'run gemma2:2b')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b (Context: 2 messages)\nYou: Hello\n\nResponse:\nanswer 0 (saw 1)',
    });
    expect(up.requests[0]!.body).to.deep.equal({ model: 'gemma2:2b', messages: [{ role: 'user', content: 'Hello' }], stream: false });

    expect(await svc.run(SESSION, 'run gemma2:2b how   are you')).to.deep.equal({
      success: true,
      output: 'Model: gemma2:2b (Context: 4 messages)\nYou: how are you\n\nResponse:\nanswer 1 (saw 3)',
    });
    expect((up.requests[1]!.body as { messages: unknown[] }).messages).to.deep.equal([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'answer 0 (saw 1)' },
      { role: 'user', content: 'how are you' },
    ]);

    // Failure: no orphan user turn is left behind.
    expect(await svc.run(SESSION, 'run gemma2:2b fail please')).to.deep.equal({
      success: false,
      output: 'Failed to run model: HTTP 500\nmodel exploded',
    });
    expect(svc.history(SESSION)).to.have.length(4);

    // Another session has its own history.
    const other = await svc.run('session-b', 'run other hi');
    expect(other.output).to.equal('Model: other (Context: 2 messages)\nYou: hi\n\nResponse:\nanswer 3 (saw 1)');

    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'Conversation context cleared (4 messages removed).' });
    expect(svc.clear(SESSION)).to.deep.equal({ success: true, message: 'Conversation context cleared (0 messages removed).' });
  });

  it('run history is bounded to historyLimit messages (oldest dropped)', async () => {
    upstream = await startFakeUpstream((req) => ({
      body: { message: { content: `saw ${(req.body as { messages: unknown[] }).messages.length}` } },
    }));
    const svc = service([upstream.url], { historyLimit: 4 });
    for (let i = 0; i < 4; i++) await svc.run(SESSION, `run m q${i}`);
    const last = await svc.run(SESSION, 'run m final');
    expect(last.output).to.equal('Model: m (Context: 4 messages)\nYou: final\n\nResponse:\nsaw 4');
    expect(svc.history(SESSION).map((m) => m.content)).to.deep.equal(['q3', 'saw 4', 'final', 'saw 4']);
    const lastSent = (upstream.requests.at(-1)!.body as { messages: Array<{ content: string }> }).messages;
    expect(lastSent.map((m) => m.content)).to.deep.equal(['saw 4', 'q3', 'saw 4', 'final']);
  });

  it('unknown verbs, usage errors and an empty command', async () => {
    const { up, svc } = await fake(() => ({ status: 500 }));
    expect(await svc.run(SESSION, 'Delete everything')).to.deep.equal({
      success: false,
      output: 'Unknown command: delete\nSupported commands: list, ps, pull, run, show',
    });
    expect(await svc.run(SESSION, 'pull')).to.deep.equal({ success: false, output: 'Usage: pull <model_name>' });
    expect(await svc.run(SESSION, 'run')).to.deep.equal({ success: false, output: 'Usage: run <model_name> [prompt]' });
    expect(await svc.run(SESSION, 'show')).to.deep.equal({ success: false, output: 'Usage: show <model_name>' });
    expect(await svc.run(SESSION, '   ')).to.deep.equal({ success: false, output: 'Command is required' });
    expect(up.requests).to.have.length(0);
  });

  it('server_url: default is the first allowed; others must be allowed (trailing slash ignored), else 400', async () => {
    upstream = await startFakeUpstream(() => ({ body: { models: [] } }));
    const other = await closedPortUrl();
    const svc = service([`${upstream.url}/`, other]);
    expect(await svc.run(SESSION, 'ls')).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, 'ls', `${upstream.url}//`)).to.deep.equal({ success: true, output: 'No models found.' });
    expect(await svc.run(SESSION, 'ls', other)).to.deep.equal({ success: false, output: `Cannot connect to Ollama server at ${other}` });

    const err = await rejects(svc.run(SESSION, 'ls', 'http://169.254.169.254'));
    expect(err).to.be.instanceOf(InvalidInput);
    expect(err.message).to.equal(`server_url must be one of the configured language-model servers: ${upstream.url}, ${other}`);
    expect(upstream.requests).to.have.length(2);
  });

  it('unreachable server → success false; timeout → the timeout message', async () => {
    const closed = await closedPortUrl();
    const svc = service([closed]);
    expect(await svc.run(SESSION, 'run m hi')).to.deep.equal({ success: false, output: `Cannot connect to Ollama server at ${closed}` });
    expect(svc.history(SESSION)).to.have.length(0);

    upstream = await startFakeUpstream(() => ({ body: { models: [] }, delayMs: 1000 }));
    const slow = service([upstream.url], { requestTimeoutSeconds: 0.1, pullTimeoutSeconds: 0.1 });
    expect(await slow.run(SESSION, 'list')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(await slow.run(SESSION, 'pull m')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(await slow.run(SESSION, 'run m hi')).to.deep.equal({ success: false, output: 'Request timed out. The operation may still be in progress.' });
    expect(slow.history(SESSION)).to.have.length(0);
  });

  it('logs no prompt contents', async () => {
    const { svc } = await fake(() => ({ body: { message: { content: 'SECRET-ANSWER' } } }));
    await svc.run(SESSION, 'run m SECRET-PROMPT');
    expect(logs.text()).to.not.include('SECRET');
  });
});
