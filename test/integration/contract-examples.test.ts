/**
 * Every example in openapi.yaml works on a fresh install with the shipped worlds: each
 * operation is sent as its examples describe it (path and query parameters, body), in the
 * order a client would call them, and must succeed. Postman and Swagger UI users send exactly
 * these requests, so an example that fails here fails for them.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { createUser, login, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { closedPortUrl } from '../helpers/fake-upstream.ts';
import { contractDocument, contractOperations, EXAMPLE_FLOW, exampleRequest, type Actor } from '../helpers/contract.ts';
import { fileReport } from '../helpers/moderation.ts';

/** Operations the flow leaves out, and why. */
const NOT_ON_A_FRESH_INSTALL: Readonly<Record<string, string>> = {
  getMetrics: '/metrics is off until [metrics] mode is set (404 by default)',
  streamEvents: 'an event stream never ends by itself (test/integration/events.test.ts covers it)',
};

/**
 * What an example needs that no operation of the flow makes, done first the way a client does
 * it: report 1, which only the game files (a player's `report` through POST /command).
 */
const PREPARE: Readonly<Record<string, (server: TestServer, session: string) => Promise<void>>> = {
  adminResolveReport: fileReport,
};

describe('contract examples on a fresh install', function () {
  let server: TestServer;
  const sessions: Partial<Record<Actor, string>> = {};
  before(async () => {
    const nowhere = await closedPortUrl();
    server = await startTestServer({ env: { MUD_TRANSLATION_OLLAMA_URL: nowhere, MUD_LLM_ALLOWED_SERVER_URLS: nowhere } });
    await createUser(server, 'root', 'superuser');
    sessions.superuser = await login(server, 'root', GOOD_PASSWORD);
  });
  after(async () => {
    await server.close();
  });

  it('lists every operation of the contract in the flow, or says why not', () => {
    const listed = new Set([...EXAMPLE_FLOW.map(([id]) => id), ...Object.keys(NOT_ON_A_FRESH_INSTALL)]);
    expect([...contractOperations().keys()].filter((id) => !listed.has(id))).to.deep.equal([]);
  });

  it('gives every success response an example, so Postman and Swagger UI show a real answer', () => {
    const missing: string[] = [];
    for (const [operationId, { op }] of contractOperations()) {
      const ok = op.responses['200'];
      const content = ok?.$ref ? contractDocument().components.responses[ok.$ref.split('/').pop()!]!.content : ok?.content;
      for (const [type, media] of Object.entries(content ?? {})) {
        if (media.example === undefined && media.examples === undefined) missing.push(`${operationId} ${type}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('answers every example with success, in flow order', async () => {
    const ops = contractOperations();
    for (const [operationId, actor = 'superuser'] of EXAMPLE_FLOW) {
      const session = actor === 'public' ? undefined : sessions[actor];
      await PREPARE[operationId]?.(server, session!);
      const { method, url, body, headers } = exampleRequest(ops.get(operationId)!, session);
      const res: HttpResponse = await server.request(method, url, body, headers);
      expect(res.status, `${operationId} ${method} ${url}: ${res.text}`).to.be.within(200, 299);
      if (operationId === 'login') sessions.registered = res.body.session_id;
    }
  });
});
