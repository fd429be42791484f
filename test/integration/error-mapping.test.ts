/**
 * Domain errors through HTTP: the status and body each refusal answers with, and how the
 * error mapper logs it (a disabled or unsupported feature and a failing upstream at warn, our
 * own failures at error, client errors not at all). The layering rule behind it (services
 * raise domain errors and never import a door) is test/unit/layering.test.ts.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { closedPortUrl } from '../helpers/fake-upstream.ts';

const CONDITION_AXIS = '/api/pipeline/condition-axis/generate';

let seq = 0;

/** Sends with a fresh request id and returns the response with the log entries of that request. */
async function traced(server: TestServer, urlPath: string, body: unknown): Promise<{ res: HttpResponse; logs: Array<Record<string, unknown>> }> {
  const requestId = `error-mapping-${++seq}`;
  const res = await server.post(urlPath, body, { 'X-Request-Id': requestId });
  // The access line is written when the response closes, possibly after the client has it.
  const deadline = Date.now() + 2000;
  while (!server.logs.entries.some((e) => e.request_id === requestId && e.message === 'request') && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { res, logs: server.logs.entries.filter((e) => e.request_id === requestId && e.message !== 'request') };
}

const atLevel = (logs: Array<Record<string, unknown>>, level: string): Array<Record<string, unknown>> => logs.filter((e) => e.level === level);

describe('error mapping: domain errors to HTTP answers and log levels', () => {
  let server: TestServer;
  let admin: string;
  let exportsDir: string;

  before(async () => {
    // Publishing writes below the exports root; a plain file there makes every write fail.
    exportsDir = mkdtempSync(path.join(tmpdir(), 'mud-error-mapping-'));
    const exportsRoot = path.join(exportsDir, 'not-a-folder');
    writeFileSync(exportsRoot, '');
    server = await startTestServer({ env: { MUD_POLICY_EXPORTS_ROOT: exportsRoot } });
    admin = await sessionFor(server, 'mapadmin', 'admin');
  });
  after(async () => {
    await server?.close();
    rmSync(exportsDir, { recursive: true, force: true });
  });

  it('a disabled feature answers 503 and is logged at warn, not as a server error', async () => {
    // Emberwick ships with its translation layer switched off.
    const { res, logs } = await traced(server, '/api/lab/translate', { session_id: admin, world_id: 'emberwick', ooc_message: 'hi', axes: {} });
    expect(res.status, res.text).to.equal(503);
    expect(res.body).to.deep.equal({ detail: "Translation layer not enabled for world 'emberwick'." });
    expect(atLevel(logs, 'warn')).to.have.length(1);
    expect(atLevel(logs, 'warn')[0]).to.deep.include({ message: 'Request refused', status: 503, detail: "Translation layer not enabled for world 'emberwick'." });
    expect(atLevel(logs, 'error')).to.deep.equal([]);
  });

  it('an unsupported feature answers 501 with its code and is logged at warn', async () => {
    // The Hollow Spire has no axis policy activation.
    const { res, logs } = await traced(server, `${CONDITION_AXIS}?session_id=${admin}`, {
      world_id: 'hollow_spire',
      seed: 5,
      inputs: { entity: { identity: { gender: 'female' }, species: 'heron_folk' } },
    });
    const detail = 'Condition-axis generation is not available in the current canonical policy activation state.';
    expect(res.status, res.text).to.equal(501);
    expect(res.body).to.deep.equal({ detail, code: 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED', stage: 'axis_input' });
    expect(atLevel(logs, 'warn').map((e) => [e.message, e.status, e.code, e.detail])).to.deep.equal([['Request refused', 501, 'CONDITION_AXIS_UPSTREAM_UNSUPPORTED', detail]]);
    expect(atLevel(logs, 'error')).to.deep.equal([]);
  });

  it('a client error is answered but not logged by the error mapper', async () => {
    const { res, logs } = await traced(server, '/api/lab/translate', { session_id: admin, world_id: 'atlantis', ooc_message: 'hi', axes: {} });
    expect(res.status, res.text).to.equal(404);
    expect(res.body).to.deep.equal({ detail: "World 'atlantis' not found or inactive." });
    expect(logs.filter((e) => e.level === 'warn' || e.level === 'error')).to.deep.equal([]);
  });

  it('our own failure answers 500 with its detail and is logged at error with the cause', async () => {
    const { res, logs } = await traced(server, `/api/policy-publish?session_id=${admin}`, { world_id: 'emberwick' });
    expect(res.status, res.text).to.equal(500);
    expect(res.body).to.deep.equal({ detail: 'Failed to write the publish artifact.', code: 'POLICY_PUBLISH_ARTIFACT_WRITE_ERROR', stage: 'policy' });
    const errors = atLevel(logs, 'error');
    expect(errors.map((e) => [e.message, e.status, e.detail])).to.deep.equal([['Server error', 500, 'Failed to write the publish artifact.']]);
    // The path and the system error reach the log only.
    expect(errors[0]!.cause).to.be.a('string').and.match(/ENOTDIR|EEXIST/);
  });
});

describe('error mapping: a failing upstream', () => {
  let server: TestServer;
  let player: string;

  before(async () => {
    server = await startTestServer({
      env: { MUD_ENTITY_STATE_MODE: 'http', MUD_ENTITY_STATE_BASE_URL: await closedPortUrl(), MUD_ENTITY_STATE_TIMEOUT_SECONDS: '0.3' },
    });
    player = await sessionFor(server, 'mapplayer', 'player');
  });
  after(async () => {
    await server?.close();
  });

  it('answers 502 and is logged at warn as an upstream failure', async () => {
    const { res, logs } = await traced(server, `${CONDITION_AXIS}?session_id=${player}`, {
      world_id: 'emberwick',
      seed: 7,
      inputs: { entity: { identity: { gender: 'female' }, species: 'heron_folk' } },
    });
    expect(res.status, res.text).to.equal(502);
    expect(res.body.code).to.equal('CONDITION_AXIS_UPSTREAM_GENERATION_FAILED');
    expect(logs.filter((e) => e.message === 'Upstream failure').map((e) => [e.level, e.status, e.detail])).to.deep.equal([['warn', 502, res.body.detail]]);
    expect(atLevel(logs, 'error')).to.deep.equal([]);
  });
});
