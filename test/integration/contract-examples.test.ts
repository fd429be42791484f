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
import { loadContract } from '../../src/http/openapi.ts';

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  example?: unknown;
  $ref?: string;
}

interface MediaType {
  example?: unknown;
  examples?: unknown;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': MediaType } };
  responses: Record<string, { $ref?: string; content?: Record<string, MediaType> }>;
}

/** Whose session sends an operation; everything else is sent by the superuser. */
type Actor = 'public' | 'superuser' | 'registered';

/** The order a client would follow, so that each example finds what earlier ones created. */
const FLOW: ReadonlyArray<[string, Actor?]> = [
  ['getServiceInfo', 'public'],
  ['getHealth', 'public'],
  ['register', 'public'],
  ['login', 'public'],
  // The superuser's first character is character 1, which the examples select and inspect.
  ['createCharacter'],
  ['listCharacters'],
  ['selectCharacter'],
  ['runCommand'],
  ['getStatus'],
  ['getRoomChat'],
  ['pingSession'],
  ['registerGuest', 'public'],
  ['loginDirect', 'public'],
  ['changePassword', 'registered'],
  ['logout', 'registered'],
  ['adminListPlayers'],
  ['adminListConnections'],
  ['adminListPlayerLocations'],
  ['adminListTables'],
  ['adminReadTable'],
  ['adminListSessions'],
  ['adminListChatMessages'],
  ['adminKickSession'],
  ['adminCreateUser'],
  ['adminSetWorldAccess'],
  ['adminCreateCharacter'],
  ['adminCharacterAxisState'],
  ['adminCharacterAxisEvents'],
  ['adminManageUser'],
  ['labListWorlds'],
  ['labWorldConfig'],
  ['labImagePolicyBundle'],
  ['labCompileImagePrompt'],
  ['labTranslate'],
  ['adminLlmCommand'],
  ['adminLlmClearContext'],
  ['getPolicyCapabilities'],
  ['listPolicies'],
  ['getPolicy'],
  ['validatePolicy'],
  ['upsertPolicyVariant'],
  ['activatePolicy'],
  ['listPolicyActivations'],
  ['publishPolicies'],
  ['getPublishRun'],
  ['importPolicyArtifact'],
  ['getPolicyHashSnapshot'],
  ['generateConditionAxes'],
  ['adminReadLedger'],
  ['adminStopServer'],
];

/** Operations a fresh install answers with something else on purpose. */
const NOT_ON_A_FRESH_INSTALL: Readonly<Record<string, string>> = {
  getMetrics: '/metrics is off until [metrics] mode is set (404 by default)',
};

const contract = loadContract().document as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { parameters: Record<string, Parameter>; responses: Record<string, { content?: Record<string, MediaType> }> };
};

function operations(): Map<string, { method: string; path: string; op: Operation }> {
  const found = new Map<string, { method: string; path: string; op: Operation }>();
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, op] of Object.entries(item)) found.set(op.operationId, { method: method.toUpperCase(), path, op });
  }
  return found;
}

function resolve(param: Parameter): Parameter {
  return param.$ref ? contract.components.parameters[param.$ref.split('/').pop()!]! : param;
}

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
    const listed = new Set([...FLOW.map(([id]) => id), ...Object.keys(NOT_ON_A_FRESH_INSTALL)]);
    expect([...operations().keys()].filter((id) => !listed.has(id))).to.deep.equal([]);
  });

  it('gives every success response an example, so Postman and Swagger UI show a real answer', () => {
    const missing: string[] = [];
    for (const [operationId, { op }] of operations()) {
      const ok = op.responses['200'];
      const content = ok?.$ref ? contract.components.responses[ok.$ref.split('/').pop()!]!.content : ok?.content;
      for (const [type, media] of Object.entries(content ?? {})) {
        if (media.example === undefined && media.examples === undefined) missing.push(`${operationId} ${type}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('answers every example with success, in flow order', async () => {
    const ops = operations();
    for (const [operationId, actor = 'superuser'] of FLOW) {
      const { method, path, op } = ops.get(operationId)!;
      const session = actor === 'public' ? undefined : sessions[actor];
      let url = path;
      const query = new URLSearchParams();
      for (const param of (op.parameters ?? []).map(resolve)) {
        const value = param.name === 'session_id' ? session : param.example;
        if (param.in === 'path') url = url.replace(`{${param.name}}`, encodeURIComponent(String(value)));
        else if (param.in === 'query' && param.name !== 'session_id' && value !== undefined) query.set(param.name, String(value));
      }
      if (query.size > 0) url += `?${query}`;
      const body = op.requestBody?.content['application/json'].example;
      const headers: Record<string, string> = session ? { Authorization: `Bearer ${session}` } : {};
      const res: HttpResponse = await server.request(method, url, body, headers);
      expect(res.status, `${operationId} ${method} ${url}: ${res.text}`).to.be.within(200, 299);
      if (operationId === 'login') sessions.registered = res.body.session_id;
    }
  });
});
