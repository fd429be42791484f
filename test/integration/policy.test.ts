/**
 * The policy control plane through HTTP against the real app, held to the reference server's
 * rules: role gates on every route, variant upsert/validate/read/list, Layer 2 references,
 * activation scopes with the effective overlay and rollback, deterministic publish and the
 * artifact files, artifact import (integrity, envelope, per-row errors, dependency order,
 * round trip between two servers), and the world hash snapshot.
 *
 * Our deliberate differences from the reference are asserted as such: actor fields always
 * record the session's username, import keeps each row's `updated_at`, reading a publish run
 * has no side effects, contract violations are 400 `{detail, errors}`, and the snapshot's
 * world defaults to the server's default world.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { canonicalJson, canonicalJsonIndented, parseJson, payloadHash, PyFloat } from '../../src/shared/canonical-json.ts';
import type { Role } from '../../src/shared/roles.ts';
import { POLICY_ARTIFACT_FILE } from '../../src/services/worlds/world-loader.ts';

const INVALID_SESSION = 'Invalid or expired session';
const POLICY_FORBIDDEN = 'Policy API requires admin or superuser role.';
const SNAPSHOT_FORBIDDEN = 'Policy hash snapshot endpoint requires admin or superuser role.';
const STATUS_ERROR = 'status must be one of: draft, candidate, active, archived';
const EMPTY_ITEMS_HASH = 'eeb85c2675888473ec64b7580aa0c76c6fd6b2bd51828870286ef202ad89dae2';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const HEX64 = /^[0-9a-f]{64}$/;

const GOBLIN = 'species_block:image.blocks.species:goblin';
const ELF = 'species_block:image.blocks.species:elf';
const ORC = 'species_block:image.blocks.species:orc';
const ORC_REGISTRY = 'registry:image.registries:orc_registry';
const PROMPT_IC = 'prompt:translation.prompts.ic:default';
const PROMPT_OOC = 'prompt:translation.prompts.ooc:default';
const SPECIES_REGISTRY = 'registry:image.registries:species_registry';
const TONE = 'tone_profile:image.tones:grim';
const CLOAK = 'clothing_block:image.blocks.clothing:cloak';

const POLICY_OBJECT_KEYS = [
  'policy_id',
  'policy_type',
  'namespace',
  'policy_key',
  'variant',
  'schema_version',
  'policy_version',
  'status',
  'content',
  'content_hash',
  'updated_at',
  'updated_by',
  'slot_kinds',
];
const MANIFEST_ITEM_KEYS = ['policy_id', 'policy_type', 'namespace', 'policy_key', 'variant', 'schema_version', 'policy_version', 'status', 'content_hash', 'updated_at'];
const ARTIFACT_KEYS = [
  'artifact_hash',
  'client_profile',
  'export_schema_version',
  'item_count',
  'items',
  'items_hash',
  'manifest_hash',
  'mirror_mode',
  'policy_authority',
  'variants',
  'variants_hash',
  'world_id',
];
const POLICY_TABLES = ['policy_items', 'policy_variants', 'policy_activations', 'policy_validation_runs', 'policy_audit_events', 'policy_publish_runs'];

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

/**
 * A test server whose worlds are copies of the real ones without their shipped policy
 * artifacts, so every world starts with no policies and each test knows the whole state.
 */
async function startPolicyServer(): Promise<TestServer> {
  const worldsRoot = mkdtempSync(path.join(tmpdir(), 'mud-policy-worlds-'));
  cpSync(path.resolve('worlds'), worldsRoot, { recursive: true, filter: (src) => path.basename(src) !== POLICY_ARTIFACT_FILE });
  let server: TestServer;
  try {
    server = await startTestServer({ env: { MUD_WORLDS_ROOT: worldsRoot } });
  } catch (err) {
    rmSync(worldsRoot, { recursive: true, force: true });
    throw err;
  }
  const close = server.close;
  server.close = async () => {
    await close();
    rmSync(worldsRoot, { recursive: true, force: true });
  };
  return server;
}

/** `:` travels as `%3A`, as the reference's clients send it. */
const enc = encodeURIComponent;

function withSession(urlPath: string, sessionId: string): string {
  return `${urlPath}${urlPath.includes('?') ? '&' : '?'}session_id=${enc(sessionId)}`;
}

interface VariantFields {
  schema_version?: string;
  policy_version?: number;
  status?: string;
  [extra: string]: unknown;
}

/** One admin session's view of the policy API; `session_id` always goes in the query. */
class PolicyClient {
  readonly server: TestServer;
  readonly session: string;
  readonly username: string;

  constructor(server: TestServer, session: string, username: string) {
    this.server = server;
    this.session = session;
    this.username = username;
  }

  call(method: string, urlPath: string, body?: unknown): Promise<HttpResponse> {
    return this.server.request(method, withSession(urlPath, this.session), body);
  }

  put(policyId: string, variant: string, content: Record<string, unknown>, fields: VariantFields = {}): Promise<HttpResponse> {
    return this.call('PUT', `/api/policies/${enc(policyId)}/variants/${enc(variant)}`, { schema_version: '1.0', policy_version: 1, status: 'draft', ...fields, content });
  }

  async mustPut(policyId: string, variant: string, content: Record<string, unknown>, fields: VariantFields = {}): Promise<Record<string, any>> {
    const res = await this.put(policyId, variant, content, fields);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  validate(policyId: string, variant: string, content: Record<string, unknown>, fields: VariantFields = {}): Promise<HttpResponse> {
    return this.call('POST', `/api/policies/${enc(policyId)}/validate?variant=${enc(variant)}`, { schema_version: '1.0', policy_version: 1, status: 'draft', ...fields, content });
  }

  get(policyId: string, variant?: string): Promise<HttpResponse> {
    return this.call('GET', `/api/policies/${enc(policyId)}${variant === undefined ? '' : `?variant=${enc(variant)}`}`);
  }

  list(filters: Record<string, string> = {}): Promise<HttpResponse> {
    const query = new URLSearchParams(filters).toString();
    return this.call('GET', `/api/policies${query ? `?${query}` : ''}`);
  }

  activate(body: Record<string, unknown>): Promise<HttpResponse> {
    return this.call('POST', '/api/policy-activations', body);
  }

  async mustActivate(worldId: string, policyId: string, variant: string, clientProfile: string | null = null): Promise<Record<string, any>> {
    const res = await this.activate({ world_id: worldId, client_profile: clientProfile, policy_id: policyId, variant });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  activations(scope: string, effective?: boolean | string): Promise<HttpResponse> {
    return this.call('GET', `/api/policy-activations?scope=${enc(scope)}${effective === undefined ? '' : `&effective=${effective}`}`);
  }

  publish(worldId: string, clientProfile: string | null = null): Promise<HttpResponse> {
    return this.call('POST', '/api/policy-publish', { world_id: worldId, client_profile: clientProfile });
  }

  async mustPublish(worldId: string, clientProfile: string | null = null): Promise<Record<string, any>> {
    const res = await this.publish(worldId, clientProfile);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  publishRun(id: number | string): Promise<HttpResponse> {
    return this.call('GET', `/api/policy-publish/${id}`);
  }

  /** `body` is sent as is when it is a string (raw JSON keeps `1.0`). */
  importArtifact(body: string | Record<string, unknown>): Promise<HttpResponse> {
    return this.call('POST', '/api/policy-import', body);
  }

  snapshot(worldId?: string): Promise<HttpResponse> {
    return this.call('GET', `/api/policy/hash-snapshot${worldId === undefined ? '' : `?world_id=${enc(worldId)}`}`);
  }
}

async function adminClient(server: TestServer, username: string, role: Role = 'admin'): Promise<PolicyClient> {
  return new PolicyClient(server, await sessionFor(server, username, role), username);
}

function expectPolicyError(res: HttpResponse, status: number, code: string, detail?: string | RegExp): void {
  expect(res.status, res.text).to.equal(status);
  expect(Object.keys(res.body).sort(), res.text).to.deep.equal(['code', 'detail', 'stage']);
  expect(res.body.code, res.text).to.equal(code);
  expect(res.body.stage).to.equal('policy');
  if (typeof detail === 'string') expect(res.body.detail).to.equal(detail);
  else if (detail) expect(res.body.detail).to.match(detail);
}

function expectBadRequest(res: HttpResponse): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body.detail).to.be.a('string');
  expect(res.body.errors).to.be.an('array').that.is.not.empty;
}

function contentHash(policyId: string, variant: string, content: unknown): string {
  return payloadHash({ policy_id: policyId, variant, content });
}

async function validationRuns(server: TestServer, policyId: string): Promise<Array<Record<string, any>>> {
  return server.db('policy_validation_runs').where({ policy_id: policyId }).orderBy('id');
}

/** Every row of every policy table, in a stable order: "nothing changed" compares two of these. */
async function policyState(server: TestServer): Promise<Record<string, unknown[]>> {
  const state: Record<string, unknown[]> = {};
  for (const table of POLICY_TABLES) {
    const order = table === 'policy_items' ? ['policy_id'] : table === 'policy_activations' ? ['world_id', 'client_profile', 'policy_id'] : ['id'];
    state[table] = await server.db(table).select('*').orderBy(order);
  }
  return state;
}

interface TreeEntry {
  relative_path: string;
  content_hash: string;
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The reference's `compute_policy_tree_hash`, written out independently of the server's. */
function treeHash(entries: TreeEntry[]): string {
  const sorted = [...entries].sort((a, b) => byText(a.relative_path, b.relative_path));
  return payloadHash({ hash_version: 'policy_tree_hash_v1', entries: sorted.map((e) => ({ relative_path: e.relative_path, content_hash: e.content_hash })) });
}

/** The reference's `compute_policy_directory_hashes`. */
function directoryHashes(entries: TreeEntry[]): Array<{ path: string; file_count: number; hash: string }> {
  const dirs = new Set<string>();
  for (const e of entries) {
    let dir = path.posix.dirname(e.relative_path);
    while (dir !== '.' && dir !== '') {
      dirs.add(dir);
      dir = path.posix.dirname(dir);
    }
  }
  return [...dirs].sort(byText).map((dir) => {
    const below = entries.filter((e) => e.relative_path.startsWith(`${dir}/`));
    return { path: dir, file_count: below.length, hash: treeHash(below) };
  });
}

/** The ManifestItem the reference derives from a stored variant. */
function manifestItem(v: Record<string, any>): Record<string, unknown> {
  return Object.fromEntries(MANIFEST_ITEM_KEYS.map((k) => [k, v[k]]));
}

// ---------------------------------------------------------------------------------------
// The shared server: roles, variants, Layer 2, activations
// ---------------------------------------------------------------------------------------

describe('policy control plane (HTTP)', function () {
  let server: TestServer;
  let admin: PolicyClient;
  let root: PolicyClient;
  const sessions: Partial<Record<Role, string>> = {};

  before(async () => {
    server = await startPolicyServer();
    admin = await adminClient(server, 'admin1', 'admin');
    root = await adminClient(server, 'root1', 'superuser');
    sessions.admin = admin.session;
    sessions.superuser = root.session;
    sessions.player = await sessionFor(server, 'player1', 'player');
    sessions.worldbuilder = await sessionFor(server, 'builder1', 'worldbuilder');
  });

  after(async () => {
    await server?.close();
  });

  // -------------------------------------------------------------------------------------
  // 1. Authentication and roles
  // -------------------------------------------------------------------------------------

  describe('authentication and roles', () => {
    interface RouteCase {
      name: string;
      method: 'GET' | 'POST' | 'PUT';
      /** Without the session. */
      path: string;
      body?: unknown;
      forbidden: string;
      /** What admin and superuser get: a harmless outcome of the handler itself. */
      pass: (res: HttpResponse) => void;
    }

    const ROUTES: RouteCase[] = [
      {
        name: 'GET /api/policy-capabilities',
        method: 'GET',
        path: '/api/policy-capabilities',
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expect(res.status, res.text).to.equal(200),
      },
      { name: 'GET /api/policies', method: 'GET', path: '/api/policies', forbidden: POLICY_FORBIDDEN, pass: (res) => expect(res.status, res.text).to.equal(200) },
      {
        name: 'GET /api/policies/{policy_id}',
        method: 'GET',
        path: `/api/policies/${enc('prompt:auth.probe:missing')}`,
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_NOT_FOUND'),
      },
      {
        name: 'POST /api/policies/{policy_id}/validate',
        method: 'POST',
        path: `/api/policies/${enc('prompt:auth.probe:missing')}/validate?variant=v1`,
        body: { schema_version: '1.0', policy_version: 1, status: 'draft', content: {} },
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => {
          expect(res.status, res.text).to.equal(200);
          expect(res.body.is_valid).to.equal(false);
        },
      },
      {
        name: 'PUT /api/policies/{policy_id}/variants/{variant}',
        method: 'PUT',
        path: `/api/policies/${enc('prompt:auth.probe:missing')}/variants/v1`,
        body: { schema_version: '1.0', policy_version: 1, status: 'draft', content: {} },
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 422, 'POLICY_VALIDATION_ERROR', 'prompt content.text must be a non-empty string'),
      },
      {
        name: 'POST /api/policy-activations',
        method: 'POST',
        path: '/api/policy-activations',
        body: { world_id: 'nowhere', policy_id: 'prompt:auth.probe:missing', variant: 'v1' },
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."),
      },
      {
        name: 'GET /api/policy-activations',
        method: 'GET',
        path: '/api/policy-activations?scope=nowhere',
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."),
      },
      {
        name: 'POST /api/policy-publish',
        method: 'POST',
        path: '/api/policy-publish',
        body: { world_id: 'nowhere', client_profile: null },
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."),
      },
      {
        name: 'GET /api/policy-publish/{publish_run_id}',
        method: 'GET',
        path: '/api/policy-publish/987654',
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_PUBLISH_RUN_NOT_FOUND', 'Publish run not found: 987654'),
      },
      {
        name: 'POST /api/policy-import',
        method: 'POST',
        path: '/api/policy-import',
        body: { artifact: { world_id: 'nowhere', variants: [] }, activate: true },
        forbidden: POLICY_FORBIDDEN,
        pass: (res) => expectPolicyError(res, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."),
      },
      {
        name: 'GET /api/policy/hash-snapshot',
        method: 'GET',
        path: '/api/policy/hash-snapshot?world_id=nowhere',
        forbidden: SNAPSHOT_FORBIDDEN,
        pass: (res) => {
          expect(res.status, res.text).to.equal(404);
          expect(res.body).to.deep.equal({ detail: "World 'nowhere' not found." });
        },
      },
    ];

    const send = (route: RouteCase, sessionQuery: string | null): Promise<HttpResponse> => {
      const urlPath = sessionQuery === null ? route.path : `${route.path}${route.path.includes('?') ? '&' : '?'}${sessionQuery}`;
      return server.request(route.method, urlPath, route.body);
    };

    for (const route of ROUTES) {
      it(`${route.name}: player and worldbuilder get 403, admin and superuser pass`, async () => {
        for (const role of ['player', 'worldbuilder'] as const) {
          const res = await send(route, `session_id=${enc(sessions[role]!)}`);
          expect(res.status, `${role}: ${res.text}`).to.equal(403);
          expect(res.body, role).to.deep.equal({ detail: route.forbidden });
        }
        for (const role of ['admin', 'superuser'] as const) {
          route.pass(await send(route, `session_id=${enc(sessions[role]!)}`));
        }
      });

      it(`${route.name}: a missing, empty or unknown session_id is 401`, async () => {
        for (const query of [null, 'session_id=', 'session_id=no-such-session']) {
          const res = await send(route, query);
          expect(res.status, `${query}: ${res.text}`).to.equal(401);
          expect(res.body).to.deep.equal({ detail: INVALID_SESSION });
        }
      });
    }

    it('the session is read from the query only, never from a POST/PUT body', async () => {
      const res = await server.request('POST', '/api/policy-publish', { session_id: sessions.admin, world_id: 'emberwick' });
      expect(res.status, res.text).to.equal(401);
      expect(res.body).to.deep.equal({ detail: INVALID_SESSION });
    });

    it('capabilities: the sorted type and status lists; admin and superuser differ only in role', async () => {
      const types = ['axis_bundle', 'clothing_block', 'descriptor_layer', 'image_block', 'location', 'manifest_bundle', 'prompt', 'registry', 'species_block', 'tone_profile'];
      const statuses = ['active', 'archived', 'candidate', 'draft'];
      for (const [client, role] of [
        [admin, 'admin'],
        [root, 'superuser'],
      ] as const) {
        const res = await client.call('GET', '/api/policy-capabilities');
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({ authorized: true, role, allowed_policy_types: types, allowed_statuses: statuses });
        expect(Object.keys(res.body)).to.deep.equal(['authorized', 'role', 'allowed_policy_types', 'allowed_statuses']);
      }
    });
  });

  // -------------------------------------------------------------------------------------
  // 2. Variants: upsert, validate, read, list
  // -------------------------------------------------------------------------------------

  describe('variants: upsert, validate, read, list', () => {
    it('PUT stores a variant and returns the PolicyObject with the reference content_hash', async () => {
      // An actor in the body is ignored: updated_by is always the session's username.
      const res = await admin.put(GOBLIN, 'v1', { text: 'goblin text' }, { updated_by: 'mallory' });
      expect(res.status, res.text).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(POLICY_OBJECT_KEYS);
      const { updated_at: updatedAt, ...rest } = res.body;
      expect(rest).to.deep.equal({
        policy_id: GOBLIN,
        policy_type: 'species_block',
        namespace: 'image.blocks.species',
        policy_key: 'goblin',
        variant: 'v1',
        schema_version: '1.0',
        policy_version: 1,
        status: 'draft',
        content: { text: 'goblin text' },
        content_hash: 'ef17ce13866baa56333f6887078807dc05f06e670f61901ad08a6a08deb6feb2',
        updated_by: 'admin1',
        slot_kinds: ['image.blocks.species'],
      });
      expect(updatedAt).to.match(ISO_UTC);

      const read = await admin.get(GOBLIN, 'v1');
      expect(read.status, read.text).to.equal(200);
      expect(read.body).to.deep.equal(res.body);
    });

    it('PUT returns content with keys sorted at every level, and authored slot_kinds cleaned', async () => {
      const content = { zeta: 1, text: 'sorted', alpha: { b: 1, a: [{ y: 1, x: 2 }] }, slot_kinds: ['atmosphere', ' atmosphere ', 'lighting'] };
      const body = await admin.mustPut('image_block:image.blocks.style:sorted', 'v1', content);
      expect(Object.keys(body.content)).to.deep.equal(['alpha', 'slot_kinds', 'text', 'zeta']);
      expect(Object.keys(body.content.alpha)).to.deep.equal(['a', 'b']);
      expect(Object.keys(body.content.alpha.a[0])).to.deep.equal(['x', 'y']);
      expect(body.content).to.deep.equal(content);
      expect(body.slot_kinds).to.deep.equal(['atmosphere', 'lighting']);
      expect(body.content_hash).to.equal(contentHash('image_block:image.blocks.style:sorted', 'v1', content));
    });

    it('PUT overwrites the variant; the superuser is recorded as updated_by', async () => {
      const id = 'prompt:test.overwrite:k';
      await admin.mustPut(id, 'v1', { text: 'first' }, { policy_version: 2, status: 'candidate' });
      server.clock.advance(1000);
      const body = await root.mustPut(id, 'v1', { text: 'second' }, { policy_version: 1, status: 'archived', schema_version: '2.0' });
      expect(body).to.deep.include({ policy_version: 1, status: 'archived', schema_version: '2.0', content: { text: 'second' }, updated_by: 'root1' });
      expect(body.content_hash).to.equal(contentHash(id, 'v1', { text: 'second' }));
      expect(await server.db('policy_variants').where({ policy_id: id })).to.have.length(1);
      expect(await server.db('policy_items').where({ policy_id: id })).to.have.length(1);
    });

    it('PUT of an invalid variant: 422 POLICY_VALIDATION_ERROR, errors joined by "; ", nothing stored', async () => {
      const cases: Array<[string, string, Record<string, unknown>, VariantFields, string]> = [
        [
          'species_block:wrong.ns:goblin',
          'v1',
          {},
          {},
          "species_block namespace must be exactly 'image.blocks.species'.; species_block content.text must be a non-empty string",
        ],
        ['prompt:test.invalid:a', 'v1', { text: 'x' }, { policy_version: 0, status: 'published' }, `policy_version must be >= 1; ${STATUS_ERROR}`],
        ['prompt:test.invalid:b', 'v1', { text: 'x' }, { schema_version: '   ' }, 'schema_version must not be empty'],
        ['prompt:test.invalid:c', ' ', { text: 'x' }, {}, 'variant must not be empty'],
        ['prompt:test.invalid:d', 'v1', { text: 'x', slot_kinds: ['ok', 7] }, {}, 'content.slot_kinds[1] must be a non-empty string'],
        ['tone_profile:image.tones:flat', 'v1', { text: 'no block' }, {}, 'tone_profile content.prompt_block must be a non-empty string'],
        [
          'axis_bundle:axis.bundles:empty',
          'v1',
          { axes: {} },
          {},
          'axis_bundle content.axes must be a non-empty object; axis_bundle content.thresholds must be a non-empty object; axis_bundle content.resolution must be a non-empty object',
        ],
        ['manifest_bundle:world.manifests:emberwick', 'v1', { manifest: [] }, {}, 'manifest_bundle content.manifest must be a non-empty object'],
      ];
      for (const [id, variant, content, fields, detail] of cases) {
        const res = await admin.put(id, variant, content, fields);
        expectPolicyError(res, 422, 'POLICY_VALIDATION_ERROR', detail);
        expect(await server.db('policy_variants').where({ policy_id: id })).to.have.length(0);
        expect(await server.db('policy_items').where({ policy_id: id })).to.have.length(0);
      }
    });

    it('every validate call and every upsert attempt records a validation run with the session username', async () => {
      const id = 'prompt:test.runs:k';
      const valid = await admin.validate(id, 'v1', { text: 'ok' }, { validated_by: 'mallory' });
      const invalid = await admin.validate(id, 'v1', { text: '' });
      await admin.mustPut(id, 'v1', { text: 'ok' });
      expectPolicyError(await root.put(id, 'v2', {}), 422, 'POLICY_VALIDATION_ERROR');
      const runs = await validationRuns(server, id);
      expect(runs.map((r) => [r.variant, Boolean(r.is_valid), JSON.parse(r.errors_json), r.validated_by])).to.deep.equal([
        ['v1', true, [], 'admin1'],
        ['v1', false, ['prompt content.text must be a non-empty string'], 'admin1'],
        ['v1', true, [], 'admin1'],
        ['v2', false, ['prompt content.text must be a non-empty string'], 'root1'],
      ]);
      expect(Number(runs[0]!.id)).to.equal(valid.body.validation_run_id);
      expect(Number(runs[1]!.id)).to.equal(invalid.body.validation_run_id);
      for (const run of runs) expect(run.validated_at).to.match(ISO_UTC);
    });

    it('POST validate always answers 200 with is_valid, errors, content_hash and the run id; it stores no variant', async () => {
      const id = 'species_block:image.blocks.species:troll';
      const bad = await admin.validate(id, 'v1', { text: '  ' });
      expect(bad.status, bad.text).to.equal(200);
      expect(Object.keys(bad.body)).to.deep.equal(['policy_id', 'variant', 'is_valid', 'errors', 'content_hash', 'validated_at', 'validated_by', 'validation_run_id']);
      expect(bad.body).to.deep.include({
        policy_id: id,
        variant: 'v1',
        is_valid: false,
        errors: ['species_block content.text must be a non-empty string'],
        content_hash: contentHash(id, 'v1', { text: '  ' }),
        validated_by: 'admin1',
      });
      expect(bad.body.validated_at).to.match(ISO_UTC);
      expect(bad.body.validation_run_id).to.be.a('number');

      const good = await root.validate(id, 'v2', { text: 'troll', extra: { b: 2, a: 1 } });
      expect(good.status, good.text).to.equal(200);
      expect(good.body).to.deep.include({ is_valid: true, errors: [], validated_by: 'root1', variant: 'v2' });
      expect(good.body.content_hash).to.equal(contentHash(id, 'v2', { text: 'troll', extra: { a: 1, b: 2 } }));
      expect(good.body.validation_run_id).to.be.greaterThan(bad.body.validation_run_id);

      expectPolicyError(await admin.get(id), 404, 'POLICY_NOT_FOUND');
    });

    it('a malformed policy_id is 422 POLICY_ID_INVALID / POLICY_TYPE_UNSUPPORTED on every variant route, before any validation run', async () => {
      const before = await server.db('policy_validation_runs').count({ n: '*' }).first();
      const idInvalid = "policy_id must be formatted as 'policy_type:namespace:policy_key'.";
      for (const [id, code, detail] of [
        ['goblin', 'POLICY_ID_INVALID', idInvalid],
        ['prompt:ns', 'POLICY_ID_INVALID', idInvalid],
        ['prompt: :key', 'POLICY_ID_INVALID', idInvalid],
        ['widget:ns:key', 'POLICY_TYPE_UNSUPPORTED', "Unsupported policy_type: 'widget'"],
      ] as const) {
        expectPolicyError(await admin.get(id), 422, code, detail);
        expectPolicyError(await admin.get(id, 'v1'), 422, code, detail);
        expectPolicyError(await admin.validate(id, 'v1', { text: 'x' }), 422, code, detail);
        expectPolicyError(await admin.put(id, 'v1', { text: 'x' }), 422, code, detail);
      }
      const afterwards = await server.db('policy_validation_runs').count({ n: '*' }).first();
      expect(Number(afterwards!.n)).to.equal(Number(before!.n));
    });

    it('the key may contain colons', async () => {
      const id = 'prompt:test.colons:key:with:colons';
      const body = await admin.mustPut(id, 'v1', { text: 'colons' });
      expect(body).to.deep.include({ policy_type: 'prompt', namespace: 'test.colons', policy_key: 'key:with:colons' });
      expect((await admin.get(id)).body.policy_key).to.equal('key:with:colons');
    });

    it('contract violations (missing field, wrong type, missing variant query) are 400 {detail, errors}', async () => {
      const id = enc('prompt:test.contract:k');
      expectBadRequest(await admin.call('PUT', `/api/policies/${id}/variants/v1`, { schema_version: '1.0', policy_version: 1, status: 'draft' }));
      expectBadRequest(await admin.call('PUT', `/api/policies/${id}/variants/v1`, { schema_version: '1.0', policy_version: 'one', status: 'draft', content: {} }));
      expectBadRequest(await admin.call('PUT', `/api/policies/${id}/variants/v1`, { schema_version: '1.0', policy_version: 1, status: 'draft', content: ['x'] }));
      expectBadRequest(await admin.call('PUT', `/api/policies/${id}/variants/v1`, { schema_version: '', policy_version: 1, status: 'draft', content: {} }));
      expectBadRequest(await admin.call('POST', `/api/policies/${id}/validate`, { schema_version: '1.0', policy_version: 1, status: 'draft', content: {} }));
      expectBadRequest(await admin.call('POST', `/api/policies/${id}/validate?variant=v1`, { schema_version: '1.0', status: 'draft', content: {} }));
      expectBadRequest(await admin.activate({ world_id: 'emberwick', policy_id: GOBLIN }));
      expectBadRequest(await admin.activate({ world_id: 'emberwick', policy_id: GOBLIN, variant: 'v1', rollback_of_activation_id: 0 }));
      expectBadRequest(await admin.call('POST', '/api/policy-publish', { client_profile: null }));
      expectBadRequest(await admin.call('POST', '/api/policy-import', { activate: true }));
      expectBadRequest(await admin.call('POST', '/api/policy-import', { artifact: [] }));
      expectBadRequest(await admin.call('GET', '/api/policy-activations'));
      expect(await server.db('policy_variants').where({ policy_id: 'prompt:test.contract:k' })).to.have.length(0);
    });

    it('GET without variant returns the highest policy_version, ties going to the latest update', async () => {
      const id = 'prompt:test.latest:k';
      await admin.mustPut(id, 'v1', { text: 'one' }, { policy_version: 1 });
      server.clock.advance(1000);
      await admin.mustPut(id, 'v2', { text: 'two' }, { policy_version: 3, status: 'active' });
      server.clock.advance(1000);
      await admin.mustPut(id, 'v3', { text: 'three' }, { policy_version: 2, status: 'active' });
      expect((await admin.get(id)).body.variant).to.equal('v2');
      const v3 = await admin.get(id, 'v3');
      expect(v3.status, v3.text).to.equal(200);
      expect(v3.body).to.deep.include({ variant: 'v3', policy_version: 2, content: { text: 'three' } });

      const tie = 'prompt:test.tie:k';
      await admin.mustPut(tie, 'a', { text: 'a' }, { policy_version: 2 });
      server.clock.advance(1000);
      await admin.mustPut(tie, 'b', { text: 'b' }, { policy_version: 2 });
      expect((await admin.get(tie)).body.variant).to.equal('b');
      server.clock.advance(1000);
      await admin.mustPut(tie, 'a', { text: 'a again' }, { policy_version: 2 });
      expect((await admin.get(tie)).body.variant).to.equal('a');
      // policy_version may go down: no monotonicity check.
      await admin.mustPut(tie, 'a', { text: 'a again' }, { policy_version: 1 });
      expect((await admin.get(tie)).body.variant).to.equal('b');
    });

    it("GET of a missing variant or policy: 404 POLICY_NOT_FOUND with Python-repr'd id and variant", async () => {
      expectPolicyError(await admin.get('prompt:test.latest:k', 'v9'), 404, 'POLICY_NOT_FOUND', "Policy not found for id='prompt:test.latest:k' variant='v9'.");
      expectPolicyError(await admin.get('prompt:test.latest:nope'), 404, 'POLICY_NOT_FOUND', "Policy not found for id='prompt:test.latest:nope' variant=None.");
      expectPolicyError(await admin.get(GOBLIN, 'V1'), 404, 'POLICY_NOT_FOUND', `Policy not found for id='${GOBLIN}' variant='V1'.`);
    });

    it('list: exact-match filters; ordered by type, namespace, key, then policy_version descending', async () => {
      const latest = await admin.list({ namespace: 'test.latest' });
      expect(latest.status, latest.text).to.equal(200);
      expect(latest.body.items.map((i: any) => i.variant)).to.deep.equal(['v2', 'v3', 'v1']);
      for (const item of latest.body.items) expect(Object.keys(item)).to.deep.equal(POLICY_OBJECT_KEYS);

      const active = await admin.list({ policy_type: 'prompt', namespace: 'test.latest', status: 'active' });
      expect(active.body.items.map((i: any) => i.variant)).to.deep.equal(['v2', 'v3']);
      expect((await admin.list({ status: 'archived' })).body.items.map((i: any) => i.policy_id)).to.deep.equal(['prompt:test.overwrite:k']);
      expect((await admin.list({ policy_type: 'widget' })).body).to.deep.equal({ items: [] });
      expect((await admin.list({ namespace: 'test' })).body).to.deep.equal({ items: [] });
      expect((await admin.list({ policy_type: 'species_block' })).body.items.map((i: any) => i.policy_id)).to.deep.equal([GOBLIN]);

      // Keys that sort differently under a locale collation than by code point.
      for (const key of ['b_x', 'b.x', 'B', 'a', 'bb']) await admin.mustPut(`location:test.order:${key}`, 'v1', { text: key });
      const order = await admin.list({ namespace: 'test.order' });
      expect(order.body.items.map((i: any) => i.policy_key)).to.deep.equal(['B', 'a', 'b.x', 'b_x', 'bb']);

      const all = (await admin.list()).body.items as Array<Record<string, any>>;
      for (let i = 1; i < all.length; i++) {
        const a = all[i - 1]!;
        const b = all[i]!;
        const cmp = byText(a.policy_type, b.policy_type) || byText(a.namespace, b.namespace) || byText(a.policy_key, b.policy_key) || b.policy_version - a.policy_version;
        expect(cmp, `${a.policy_id}:${a.variant} before ${b.policy_id}:${b.variant}`).to.be.at.most(0);
      }
    });

    it('an integral float (1.0) in content survives PUT and GET as 1.0 and hashes apart from 1', async () => {
      const id = 'prompt:test.floats:k';
      const raw = (weight: string): string => `{"schema_version": "1.0", "policy_version": 1, "status": "draft", "content": {"text": "t", "weight": ${weight}, "nested": [2.0, 0.5, 3]}}`;
      const asFloat = await server.request('PUT', withSession(`/api/policies/${enc(id)}/variants/v1`, admin.session), raw('1.0'));
      expect(asFloat.status, asFloat.text).to.equal(200);
      expect(asFloat.text).to.contain('"weight":1.0');
      expect(asFloat.text).to.contain('"nested":[2.0,0.5,3]');
      const floatHash = contentHash(id, 'v1', { text: 't', weight: new PyFloat(1), nested: [new PyFloat(2), 0.5, 3] });
      expect(asFloat.body.content_hash).to.equal(floatHash);
      const read = await admin.get(id, 'v1');
      expect(read.text).to.contain('"weight":1.0');
      expect(read.text).to.contain('"nested":[2.0,0.5,3]');
      expect(read.body.content_hash).to.equal(floatHash);
      // Validate sees the same document.
      const validated = await server.request('POST', withSession(`/api/policies/${enc(id)}/validate?variant=v1`, admin.session), raw('1.0'));
      expect(validated.body.content_hash).to.equal(floatHash);

      const asInt = await server.request('PUT', withSession(`/api/policies/${enc(id)}/variants/v1`, admin.session), raw('1'));
      expect(asInt.status, asInt.text).to.equal(200);
      expect(asInt.text).to.contain('"weight":1}');
      expect(asInt.body.content_hash).to.equal(contentHash(id, 'v1', { text: 't', weight: 1, nested: [new PyFloat(2), 0.5, 3] }));
      expect(asInt.body.content_hash).to.not.equal(floatHash);
      expect((await admin.get(id, 'v1')).text).to.contain('"weight":1}');
    });
  });

  // -------------------------------------------------------------------------------------
  // 3. Layer 2 references
  // -------------------------------------------------------------------------------------

  describe('Layer 2 references', () => {
    it('a registry referencing a missing block is refused until the block exists', async () => {
      const content = { references: [{ policy_id: ELF, variant: 'v1' }] };
      expectPolicyError(
        await admin.put(SPECIES_REGISTRY, 'v1', content),
        422,
        'POLICY_VALIDATION_ERROR',
        `content.references[0] references missing Layer 1 variant: ${ELF}:v1`,
      );
      const validated = await admin.validate(SPECIES_REGISTRY, 'v1', content);
      expect(validated.body.errors).to.deep.equal([`content.references[0] references missing Layer 1 variant: ${ELF}:v1`]);

      await admin.mustPut(ELF, 'v1', { text: 'elf text' });
      const stored = await admin.mustPut(SPECIES_REGISTRY, 'v1', content);
      expect(stored).to.deep.include({ policy_type: 'registry', namespace: 'image.registries', policy_key: 'species_registry', content });
      expect(stored.slot_kinds).to.deep.equal(['image.registries']);
    });

    it('every bad reference is listed, one error per element, joined by "; "', async () => {
      const content = {
        text: 'descriptor',
        references: [
          { policy_id: ELF, variant: 'v1' },
          { policy_id: SPECIES_REGISTRY, variant: 'v1' },
          'nope',
          { policy_id: ELF, variant: 'v7' },
          { policy_id: 'widget:a:b', variant: 'v1' },
        ],
      };
      expectPolicyError(
        await admin.put('descriptor_layer:image.descriptors:base', 'v1', content),
        422,
        'POLICY_VALIDATION_ERROR',
        [
          "content.references[1].policy_id must reference a Layer 1 policy type ['clothing_block', 'image_block', 'location', 'prompt', 'species_block', 'tone_profile']; got 'registry'.",
          'content.references[2] must be an object with policy_id and variant.',
          `content.references[3] references missing Layer 1 variant: ${ELF}:v7`,
          "content.references[4].policy_id is invalid: Unsupported policy_type: 'widget'",
        ].join('; '),
      );
      expectPolicyError(
        await admin.put('registry:image.registries:empty', 'v1', { references: [] }),
        422,
        'POLICY_VALIDATION_ERROR',
        'Layer 2 content.references must be a non-empty list.',
      );
      const ok = await admin.put('descriptor_layer:image.descriptors:base', 'v1', { text: 'descriptor', references: [{ policy_id: ELF, variant: 'v1' }] });
      expect(ok.status, ok.text).to.equal(200);
    });
  });

  // -------------------------------------------------------------------------------------
  // 4. Activations
  // -------------------------------------------------------------------------------------

  describe('activations: scopes, overlay, audit and rollback', () => {
    const ALPHA = 'prompt:act.ns:alpha';
    const BETA = 'prompt:act.ns:beta';
    const GAMMA = 'prompt:act.ns:gamma';
    const RB = 'prompt:act.ns:rollback';
    const ours = (items: Array<Record<string, any>>): Array<Record<string, any>> => items.filter((i) => i.policy_id.startsWith('prompt:act.ns:'));

    before(async () => {
      for (const id of [ALPHA, BETA, GAMMA, RB]) {
        await admin.mustPut(id, 'v1', { text: `${id} one` });
        await admin.mustPut(id, 'v2', { text: `${id} two` });
      }
    });

    it('activates in the world scope and in a world:client scope, each with its own audit event', async () => {
      const world = await admin.mustActivate('emberwick', ALPHA, 'v1');
      expect(Object.keys(world)).to.deep.equal(['world_id', 'client_profile', 'policy_id', 'variant', 'activated_at', 'activated_by', 'rollback_of_activation_id', 'audit_event_id']);
      expect(world).to.deep.include({ world_id: 'emberwick', client_profile: null, policy_id: ALPHA, variant: 'v1', activated_by: 'admin1', rollback_of_activation_id: null });
      expect(world.activated_at).to.match(ISO_UTC);
      expect(world.audit_event_id).to.be.a('number');

      const beta = await root.mustActivate('emberwick', BETA, 'v1');
      expect(beta.activated_by).to.equal('root1');
      const client = await admin.mustActivate('emberwick', ALPHA, 'v2', 'mobile');
      expect(client).to.deep.include({ world_id: 'emberwick', client_profile: 'mobile', policy_id: ALPHA, variant: 'v2' });
      const gamma = await admin.mustActivate('emberwick', GAMMA, 'v1', 'mobile');
      const ids = [world.audit_event_id, beta.audit_event_id, client.audit_event_id, gamma.audit_event_id];
      expect([...ids].sort((a, b) => a - b)).to.deep.equal(ids);
      expect(new Set(ids).size).to.equal(4);

      const events = await server.db('policy_audit_events').whereIn('id', ids).orderBy('id');
      expect(events.map((e) => [e.event_type, e.world_id, e.client_profile, e.policy_id, e.variant, e.actor])).to.deep.equal([
        ['activation', 'emberwick', '', ALPHA, 'v1', 'admin1'],
        ['activation', 'emberwick', '', BETA, 'v1', 'root1'],
        ['activation', 'emberwick', 'mobile', ALPHA, 'v2', 'admin1'],
        ['activation', 'emberwick', 'mobile', GAMMA, 'v1', 'admin1'],
      ]);
      expect(JSON.parse(events[0]!.event_payload_json)).to.deep.equal({ rollback_of_activation_id: null });
    });

    it('the effective overlay: client overrides world, world-only ids inherited (client_profile null), client-only ids added', async () => {
      const res = await admin.activations('emberwick:mobile');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.world_id).to.equal('emberwick');
      expect(res.body.client_profile).to.equal('mobile');
      expect(ours(res.body.items).map((i) => [i.policy_id, i.variant, i.client_profile, i.audit_event_id])).to.deep.equal([
        [ALPHA, 'v2', 'mobile', null],
        [BETA, 'v1', null, null],
        [GAMMA, 'v1', 'mobile', null],
      ]);
      const ids = res.body.items.map((i: any) => i.policy_id);
      expect(ids).to.deep.equal([...ids].sort(byText));

      // The scope text is trimmed around both parts; `effective=true` is the default.
      const spaced = await admin.activations(' emberwick : mobile ', true);
      expect(spaced.body).to.deep.equal(res.body);

      const exact = await admin.activations('emberwick:mobile', false);
      expect(exact.body.client_profile).to.equal('mobile');
      expect(exact.body.items.map((i: any) => [i.policy_id, i.variant, i.client_profile])).to.deep.equal([
        [ALPHA, 'v2', 'mobile'],
        [GAMMA, 'v1', 'mobile'],
      ]);

      const world = await admin.activations('emberwick');
      expect(world.body.client_profile).to.equal(null);
      expect(ours(world.body.items).map((i) => [i.policy_id, i.variant, i.client_profile])).to.deep.equal([
        [ALPHA, 'v1', null],
        [BETA, 'v1', null],
      ]);
      expect((await admin.activations('emberwick', false)).body).to.deep.equal(world.body);

      // Another client of the same world sees only the world's pointers.
      const desktop = await admin.activations('emberwick:desktop');
      expect(ours(desktop.body.items).map((i) => [i.policy_id, i.variant, i.client_profile])).to.deep.equal([
        [ALPHA, 'v1', null],
        [BETA, 'v1', null],
      ]);
      expect((await admin.activations('emberwick:desktop', false)).body.items).to.deep.equal([]);
      // Other worlds are separate.
      expect(ours((await admin.activations('hollow_spire')).body.items)).to.deep.equal([]);
    });

    it('a draft or archived variant can be activated (status is only a label)', async () => {
      await admin.mustPut(GAMMA, 'v3', { text: 'archived' }, { status: 'archived' });
      const res = await admin.mustActivate('hollow_spire', GAMMA, 'v3');
      expect(res.variant).to.equal('v3');
    });

    it('unknown world → 404 POLICY_WORLD_NOT_FOUND; missing variant → 422 POLICY_ACTIVATION_ERROR; bad id → 422', async () => {
      expectPolicyError(await admin.activate({ world_id: 'atlantis', policy_id: ALPHA, variant: 'v1' }), 404, 'POLICY_WORLD_NOT_FOUND', "World 'atlantis' not found.");
      expectPolicyError(
        await admin.activate({ world_id: 'atlantis', client_profile: 'mobile', policy_id: ALPHA, variant: 'v1' }),
        404,
        'POLICY_WORLD_NOT_FOUND',
        "World 'atlantis' not found.",
      );
      expectPolicyError(await admin.activations('atlantis'), 404, 'POLICY_WORLD_NOT_FOUND', "World 'atlantis' not found.");
      expectPolicyError(await admin.activations('atlantis:mobile'), 404, 'POLICY_WORLD_NOT_FOUND', "World 'atlantis' not found.");
      // A malformed policy id breaks the contract's pattern, so it is refused before the world is
      // looked up (the reference checks the world first); a well-formed one waits for the world.
      expectPolicyError(await admin.activate({ world_id: 'atlantis', policy_id: 'bad', variant: 'v1' }), 422, 'POLICY_ID_INVALID');
      expectPolicyError(await admin.activate({ world_id: 'atlantis', policy_id: 'prompt:no.such:policy', variant: 'v1' }), 404, 'POLICY_WORLD_NOT_FOUND');

      const before = await policyState(server);
      const missing = await admin.activate({ world_id: 'emberwick', policy_id: ALPHA, variant: 'v9' });
      expectPolicyError(missing, 422, 'POLICY_ACTIVATION_ERROR');
      expect(missing.body.detail).to.contain(ALPHA).and.to.contain("'v9'");
      expectPolicyError(await admin.activate({ world_id: 'emberwick', client_profile: 'mobile', policy_id: 'prompt:act.ns:never', variant: 'v1' }), 422, 'POLICY_ACTIVATION_ERROR');
      expectPolicyError(await admin.activate({ world_id: 'emberwick', policy_id: 'bad', variant: 'v1' }), 422, 'POLICY_ID_INVALID');
      expectPolicyError(await admin.activate({ world_id: 'emberwick', policy_id: 'widget:a:b', variant: 'v1' }), 422, 'POLICY_TYPE_UNSUPPORTED', "Unsupported policy_type: 'widget'");
      expect(await policyState(server)).to.deep.equal(before);
    });

    it('a blank scope is 422 POLICY_SCOPE_INVALID (GET scope and POST body)', async () => {
      expectPolicyError(await admin.activations('  '), 422, 'POLICY_SCOPE_INVALID', 'Activation scope must not be empty.');
      expectPolicyError(await admin.activations(':x'), 422, 'POLICY_SCOPE_INVALID', 'Scope world_id must not be empty.');
      expectPolicyError(await admin.activations(' : mobile'), 422, 'POLICY_SCOPE_INVALID', 'Scope world_id must not be empty.');
      expectPolicyError(await admin.activate({ world_id: '   ', policy_id: ALPHA, variant: 'v1' }), 422, 'POLICY_SCOPE_INVALID', 'Activation scope must not be empty.');
      expectPolicyError(
        await admin.activate({ world_id: ' ', client_profile: 'mobile', policy_id: ALPHA, variant: 'v1' }),
        422,
        'POLICY_SCOPE_INVALID',
        'Scope world_id must not be empty.',
      );
      // Scope comes first: a blank scope with an unknown policy still reports the scope.
      expectPolicyError(await admin.activate({ world_id: '  ', policy_id: 'bad', variant: 'v1' }), 422, 'POLICY_SCOPE_INVALID');
      // A blank client profile is the world scope.
      const worldScope = await admin.mustActivate('emberwick', BETA, 'v1', '  ');
      expect(worldScope.client_profile).to.equal(null);
    });

    it('rollback re-activates the variant of the named event, whatever variant the request names', async () => {
      const a = await admin.mustActivate('emberwick', RB, 'v1');
      const b = await admin.mustActivate('emberwick', RB, 'v2');
      expect(b.audit_event_id).to.be.greaterThan(a.audit_event_id);
      const res = await root.activate({ world_id: 'emberwick', policy_id: RB, variant: 'whatever', rollback_of_activation_id: a.audit_event_id });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ world_id: 'emberwick', client_profile: null, policy_id: RB, variant: 'v1', rollback_of_activation_id: a.audit_event_id, activated_by: 'root1' });
      expect(res.body.audit_event_id).to.be.greaterThan(b.audit_event_id);

      const pointers = ours((await admin.activations('emberwick', false)).body.items).filter((i) => i.policy_id === RB);
      expect(pointers).to.have.length(1);
      expect(pointers[0]).to.deep.include({ variant: 'v1', rollback_of_activation_id: a.audit_event_id, activated_by: 'root1' });
      const event = await server.db('policy_audit_events').where({ id: res.body.audit_event_id }).first();
      expect(JSON.parse(event.event_payload_json)).to.deep.equal({ rollback_of_activation_id: a.audit_event_id });
      expect(event.variant).to.equal('v1');

      // A rollback event can itself be rolled back to.
      await admin.mustActivate('emberwick', RB, 'v2');
      const again = await admin.activate({ world_id: 'emberwick', policy_id: RB, variant: 'v2', rollback_of_activation_id: res.body.audit_event_id });
      expect(again.body).to.deep.include({ variant: 'v1', rollback_of_activation_id: res.body.audit_event_id });
    });

    it('rollback errors: unknown event 404, other policy 409, other scope 409, a publish event 404', async () => {
      const alphaEvent = await admin.mustActivate('emberwick', ALPHA, 'v1');
      const mobileEvent = await admin.mustActivate('emberwick', RB, 'v2', 'mobile');
      const spireEvent = await admin.mustActivate('hollow_spire', RB, 'v2');
      const before = await policyState(server);
      const rollback = (id: number, clientProfile: string | null = null): Promise<HttpResponse> =>
        admin.activate({ world_id: 'emberwick', client_profile: clientProfile, policy_id: RB, variant: 'v1', rollback_of_activation_id: id });

      expectPolicyError(await rollback(987654), 404, 'POLICY_ROLLBACK_EVENT_NOT_FOUND', 'Rollback activation event not found: 987654');
      expectPolicyError(await rollback(alphaEvent.audit_event_id), 409, 'POLICY_ROLLBACK_POLICY_MISMATCH');
      expectPolicyError(await rollback(mobileEvent.audit_event_id), 409, 'POLICY_ROLLBACK_SCOPE_MISMATCH');
      expectPolicyError(await rollback(spireEvent.audit_event_id), 409, 'POLICY_ROLLBACK_SCOPE_MISMATCH');
      expectPolicyError(await rollback(spireEvent.audit_event_id, 'mobile'), 409, 'POLICY_ROLLBACK_SCOPE_MISMATCH');
      expect(await policyState(server)).to.deep.equal(before);

      await admin.mustPublish('emberwick');
      const publishEvent = await server.db('policy_audit_events').where({ event_type: 'publish' }).orderBy('id', 'desc').first();
      expect(publishEvent.policy_id).to.equal(null);
      expectPolicyError(await rollback(Number(publishEvent.id)), 404, 'POLICY_ROLLBACK_EVENT_NOT_FOUND', `Rollback activation event not found: ${publishEvent.id}`);

      // The same event in its own scope works.
      const ok = await rollback(mobileEvent.audit_event_id, 'mobile');
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.deep.include({ client_profile: 'mobile', variant: 'v2', rollback_of_activation_id: mobileEvent.audit_event_id });
    });

    it('pointers always equal the replay of their scope’s activation events', async () => {
      const rows = await server.db('policy_activations').select('*');
      const scopes = new Set(rows.map((r) => `${r.world_id}\u0000${r.client_profile}`));
      for (const scope of scopes) {
        const [worldId, clientProfile] = scope.split('\u0000') as [string, string];
        const events = await server.db('policy_audit_events').where({ world_id: worldId, client_profile: clientProfile, event_type: 'activation' }).orderBy('id');
        const replayed = new Map(events.map((e) => [e.policy_id, e.variant]));
        const pointers = rows.filter((r) => r.world_id === worldId && r.client_profile === clientProfile);
        expect(pointers.length).to.equal(replayed.size);
        for (const p of pointers) expect(replayed.get(p.policy_id), `${scope} ${p.policy_id}`).to.equal(p.variant);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------
// Publish and import: a fresh source server, and fresh servers to import into
// ---------------------------------------------------------------------------------------

describe('policy publish and import (HTTP)', function () {
  let source: TestServer;
  let pub: PolicyClient;
  /** Servers started by a test, closed at the end. */
  const extra: TestServer[] = [];

  const TEMPERATURE_PROMPT = '{"text": "Speak in character.", "temperature": 1.0}';

  async function freshServer(username = 'publisher1'): Promise<PolicyClient> {
    const server = await startPolicyServer();
    extra.push(server);
    return adminClient(server, username);
  }

  function exportsRoot(server: TestServer): string {
    return path.resolve(server.config.policy.exportsRoot);
  }

  /** A publish response's path (relative to the exports root) as a file of `server`. */
  function onDisk(relative: string, server = source): string {
    return path.join(exportsRoot(server), relative);
  }

  function readArtifact(relative: string, server = source): { text: string; artifact: Record<string, any> } {
    const text = readFileSync(onDisk(relative, server), 'utf8');
    return { text, artifact: parseJson(text) as Record<string, any> };
  }

  /** The import body built by string concatenation, so the artifact's bytes (and `1.0`) go as written. */
  function importBody(artifactText: string, activate = true): string {
    return `{"activate": ${activate}, "artifact": ${artifactText}}`;
  }

  before(async () => {
    source = await startPolicyServer();
    pub = await adminClient(source, 'publisher1');
  });

  after(async () => {
    for (const server of [source, ...extra]) await server?.close();
  });

  describe('publish', () => {
    /** Publish responses by name, for later comparisons. */
    const runs: Record<string, Record<string, any>> = {};

    it('an empty world-scope publish has the reference items_hash and manifest_hash formula', async () => {
      const body = await pub.mustPublish('emberwick');
      expect(Object.keys(body)).to.deep.equal(['publish_run_id', 'manifest', 'artifact']);
      const { generated_at: generatedAt, ...manifest } = body.manifest;
      expect(manifest).to.deep.equal({
        world_id: 'emberwick',
        client_profile: null,
        item_count: 0,
        items_hash: EMPTY_ITEMS_HASH,
        manifest_hash: payloadHash({ world_id: 'emberwick', client_profile: null, items_hash: EMPTY_ITEMS_HASH, item_count: 0 }),
        items: [],
      });
      expect(generatedAt).to.match(ISO_UTC);
      expect(existsSync(onDisk(body.artifact.artifact_path))).to.equal(true);
      const { artifact } = readArtifact(body.artifact.artifact_path);
      expect(artifact.variants).to.deep.equal([]);
      expect(artifact.variants_hash).to.equal(payloadHash({ variants: [] }));
      runs.empty = body;
    });

    it('seed: blocks, a prompt with a 1.0, a registry and a tone, activated for the world and a client', async () => {
      await pub.mustPut(GOBLIN, 'v1', { text: 'goblin text' });
      await pub.mustPut(GOBLIN, 'v2', { text: 'goblin, second take' }, { policy_version: 2 });
      const raw = `{"schema_version": "1.0", "policy_version": 1, "status": "active", "content": ${TEMPERATURE_PROMPT}}`;
      const prompt = await source.request('PUT', withSession(`/api/policies/${enc(PROMPT_IC)}/variants/v1`, pub.session), raw);
      expect(prompt.status, prompt.text).to.equal(200);
      await pub.mustPut(SPECIES_REGISTRY, 'v1', { references: [{ policy_id: GOBLIN, variant: 'v1' }] });
      await pub.mustPut(TONE, 'v1', { prompt_block: 'grim and grey' }, { status: 'candidate' });
      await pub.mustPut(CLOAK, 'v1', { text: 'a patched cloak' });
      for (const id of [GOBLIN, PROMPT_IC, SPECIES_REGISTRY, TONE]) await pub.mustActivate('emberwick', id, 'v1');
      await pub.mustActivate('emberwick', GOBLIN, 'v2', 'mobile');
      await pub.mustActivate('emberwick', CLOAK, 'v1', 'mobile');
    });

    it('publishing twice gives identical items_hash, manifest_hash and artifact_hash (generated_at is not hashed)', async () => {
      const first = await pub.mustPublish('emberwick');
      source.clock.advance(5_000);
      const second = await pub.mustPublish('emberwick');
      expect(second.publish_run_id).to.not.equal(first.publish_run_id);
      expect(second.manifest.generated_at).to.not.equal(first.manifest.generated_at);
      for (const key of ['items_hash', 'manifest_hash', 'items', 'item_count']) expect(second.manifest[key], key).to.deep.equal(first.manifest[key]);
      expect(second.artifact).to.deep.equal(first.artifact);

      // Items: every effective variant, sorted by type, namespace, key, without content.
      const expected = [];
      for (const id of [PROMPT_IC, SPECIES_REGISTRY, GOBLIN, TONE]) expected.push(manifestItem((await pub.get(id, 'v1')).body));
      expect(first.manifest.items).to.deep.equal(expected);
      for (const item of first.manifest.items) expect(Object.keys(item)).to.deep.equal(MANIFEST_ITEM_KEYS);
      expect(first.manifest.item_count).to.equal(4);
      expect(first.manifest.items_hash).to.equal(payloadHash({ items: expected }));
      expect(first.manifest.manifest_hash).to.equal(payloadHash({ world_id: 'emberwick', client_profile: null, items_hash: first.manifest.items_hash, item_count: 4 }));
      expect(first.manifest.items_hash).to.not.equal(EMPTY_ITEMS_HASH);

      // Each run is stored with its actor and a publish audit event carrying the manifest.
      const row = await source.db('policy_publish_runs').where({ id: second.publish_run_id }).first();
      expect(row).to.deep.include({ world_id: 'emberwick', client_profile: '', actor: 'publisher1', created_at: second.manifest.generated_at });
      const events = await source.db('policy_audit_events').where({ event_type: 'publish' }).orderBy('id');
      expect(events).to.have.length(3);
      expect(events.map((e) => e.actor)).to.deep.equal(['publisher1', 'publisher1', 'publisher1']);
      expect(JSON.parse(events[2]!.event_payload_json).manifest_hash).to.equal(second.manifest.manifest_hash);
      runs.first = first;
      runs.second = second;
    });

    it('the artifact file: under worlds/<world>/world/, sorted keys, 2-space indent, trailing newline, verifiable hashes', async () => {
      const body = runs.second!;
      // Paths relative to the exports root: the server's own directory layout is not shown.
      const dir = 'worlds/emberwick/world';
      expect(body.artifact.artifact_path).to.equal(`${dir}/publish_${body.manifest.manifest_hash}.json`);
      expect(body.artifact.latest_path).to.equal(`${dir}/latest.json`);

      const { text, artifact } = readArtifact(body.artifact.artifact_path);
      expect(text.endsWith('}\n')).to.equal(true);
      expect(text.endsWith('\n\n')).to.equal(false);
      expect(text).to.equal(`${canonicalJsonIndented(artifact)}\n`);
      expect(text.split('\n')[1]).to.match(/^ {2}"artifact_hash": "[0-9a-f]{64}",$/);
      expect(text).to.contain('"temperature": 1.0');
      expect(Object.keys(artifact)).to.deep.equal(ARTIFACT_KEYS);

      const { artifact_hash: artifactHash, ...rest } = artifact;
      expect(artifactHash).to.equal(payloadHash(rest));
      expect(artifactHash).to.equal(body.artifact.artifact_hash);
      expect(artifact.variants_hash).to.equal(payloadHash({ variants: artifact.variants }));
      expect(artifact).to.deep.include({
        export_schema_version: '1.0',
        policy_authority: 'mud_server',
        mirror_mode: 'non_authoritative',
        world_id: 'emberwick',
        client_profile: null,
        manifest_hash: body.manifest.manifest_hash,
        items_hash: body.manifest.items_hash,
        item_count: 4,
      });
      expect(JSON.parse(JSON.stringify(artifact.items))).to.deep.equal(body.manifest.items);

      // Full variant rows, sorted like the items, each materialized.
      const expected = [];
      for (const id of [PROMPT_IC, SPECIES_REGISTRY, GOBLIN, TONE]) {
        const { slot_kinds: _kinds, ...variant } = (await pub.get(id, 'v1')).body;
        expected.push({ ...variant, materialized: true });
      }
      expect(JSON.parse(JSON.stringify(artifact.variants))).to.deep.equal(expected);
      expect(artifact.variants.map((v: any) => v.updated_by)).to.deep.equal(['publisher1', 'publisher1', 'publisher1', 'publisher1']);
      expect(artifact.variants[0].content.temperature).to.be.instanceOf(PyFloat);

      const latestText = readFileSync(onDisk(body.artifact.latest_path), 'utf8');
      const latest = JSON.parse(latestText);
      expect(latestText).to.equal(`${canonicalJsonIndented(latest)}\n`);
      expect(latest).to.deep.equal({
        policy_authority: 'mud_server',
        mirror_mode: 'non_authoritative',
        world_id: 'emberwick',
        scope: 'world',
        client_profile: null,
        manifest_hash: body.manifest.manifest_hash,
        items_hash: body.manifest.items_hash,
        variants_hash: artifact.variants_hash,
        item_count: 4,
        artifact_hash: artifactHash,
        artifact_file: `publish_${body.manifest.manifest_hash}.json`,
        artifact_path: path.join('worlds', 'emberwick', 'world', `publish_${body.manifest.manifest_hash}.json`),
      });
      // The empty publish wrote its own file beside it.
      expect(existsSync(onDisk(runs.empty!.artifact.artifact_path))).to.equal(true);
      expect(path.posix.dirname(runs.empty!.artifact.artifact_path)).to.equal(dir);
    });

    it('changing one active variant changes items_hash, manifest_hash and artifact_hash', async () => {
      source.clock.advance(1_000);
      await pub.mustPut(TONE, 'v1', { prompt_block: 'grim, grey and wet' }, { status: 'candidate' });
      const changed = await pub.mustPublish('emberwick');
      const before = runs.second!;
      expect(changed.manifest.items_hash).to.not.equal(before.manifest.items_hash);
      expect(changed.manifest.manifest_hash).to.not.equal(before.manifest.manifest_hash);
      expect(changed.artifact.artifact_hash).to.not.equal(before.artifact.artifact_hash);
      expect(changed.artifact.artifact_path).to.not.equal(before.artifact.artifact_path);
      expect(existsSync(onDisk(changed.artifact.artifact_path))).to.equal(true);
      expect(existsSync(onDisk(before.artifact.artifact_path))).to.equal(true);
      expect(JSON.parse(readFileSync(onDisk(changed.artifact.latest_path), 'utf8')).artifact_file).to.equal(`publish_${changed.manifest.manifest_hash}.json`);
      // Re-activating a different variant changes them too.
      await pub.mustActivate('emberwick', GOBLIN, 'v2');
      const repointed = await pub.mustPublish('emberwick');
      expect(repointed.manifest.items_hash).to.not.equal(changed.manifest.items_hash);
      await pub.mustActivate('emberwick', GOBLIN, 'v1');
      const back = await pub.mustPublish('emberwick');
      expect(back.manifest.manifest_hash).to.equal(changed.manifest.manifest_hash);
      expect(back.artifact.artifact_hash).to.equal(changed.artifact.artifact_hash);
      runs.changed = back;
    });

    it('a client scope publishes the overlay and writes under client_<profile>', async () => {
      const body = await pub.mustPublish('emberwick', 'mobile');
      expect(body.manifest.client_profile).to.equal('mobile');
      expect(body.manifest.items.map((i: any) => [i.policy_id, i.variant])).to.deep.equal([
        [CLOAK, 'v1'],
        [PROMPT_IC, 'v1'],
        [SPECIES_REGISTRY, 'v1'],
        [GOBLIN, 'v2'],
        [TONE, 'v1'],
      ]);
      expect(body.manifest.manifest_hash).to.equal(
        payloadHash({ world_id: 'emberwick', client_profile: 'mobile', items_hash: payloadHash({ items: body.manifest.items }), item_count: 5 }),
      );
      expect(body.artifact.artifact_path).to.equal(`worlds/emberwick/client_mobile/publish_${body.manifest.manifest_hash}.json`);
      const { artifact } = readArtifact(body.artifact.artifact_path);
      expect(artifact.client_profile).to.equal('mobile');
      expect(artifact.variants.map((v: any) => v.policy_id)).to.deep.equal([CLOAK, PROMPT_IC, SPECIES_REGISTRY, GOBLIN, TONE]);
      const latest = JSON.parse(readFileSync(onDisk(body.artifact.latest_path), 'utf8'));
      expect(latest).to.deep.include({ scope: 'client_mobile', client_profile: 'mobile' });
      expect(latest.artifact_path).to.equal(body.artifact.artifact_path);
      runs.mobile = body;

      // Unsafe characters of a profile are folded into the folder name.
      const odd = await pub.mustPublish('emberwick', ' ios app! ');
      expect(odd.manifest.client_profile).to.equal('ios app!');
      expect(path.posix.basename(path.posix.dirname(odd.artifact.artifact_path))).to.equal('client_ios_app');
      // With no pointers of its own a client publishes the world's effective set.
      expect(odd.manifest.items).to.deep.equal(runs.changed!.manifest.items);
      expect(odd.manifest.manifest_hash).to.not.equal(runs.changed!.manifest.manifest_hash);
    });

    it('publish errors: unknown world 404, blank scope 422', async () => {
      expectPolicyError(await pub.publish('atlantis'), 404, 'POLICY_WORLD_NOT_FOUND', "World 'atlantis' not found.");
      expectPolicyError(await pub.publish('atlantis', 'mobile'), 404, 'POLICY_WORLD_NOT_FOUND', "World 'atlantis' not found.");
      expectPolicyError(await pub.publish('  '), 422, 'POLICY_SCOPE_INVALID', 'Activation scope must not be empty.');
    });

    it('GET /api/policy-publish/{id} returns the stored run', async () => {
      const latest = runs.changed!;
      const res = await pub.publishRun(latest.publish_run_id);
      expect(res.status, res.text).to.equal(200);
      expect(Object.keys(res.body)).to.deep.equal(['publish_run_id', 'world_id', 'client_profile', 'actor', 'created_at', 'manifest', 'artifact']);
      expect(res.body).to.deep.equal({
        publish_run_id: latest.publish_run_id,
        world_id: 'emberwick',
        client_profile: null,
        actor: 'publisher1',
        created_at: latest.manifest.generated_at,
        manifest: latest.manifest,
        artifact: latest.artifact,
      });
      const mobile = await pub.publishRun(runs.mobile!.publish_run_id);
      expect(mobile.body).to.deep.include({ client_profile: 'mobile', manifest: runs.mobile!.manifest });
      expect(mobile.body.artifact).to.deep.equal(runs.mobile!.artifact);
      // An old run keeps its manifest.
      const old = await pub.publishRun(runs.first!.publish_run_id);
      expect(old.body.manifest).to.deep.equal(runs.first!.manifest);
      expect(old.body.artifact.artifact_path).to.equal(runs.first!.artifact.artifact_path);
    });

    it('GET /api/policy-publish/{id} has no side effects on the export files', async () => {
      const old = runs.first!;
      const artifactFile = onDisk(old.artifact.artifact_path);
      const latestFile = onDisk(old.artifact.latest_path);
      const dir = path.dirname(artifactFile);
      const latestBefore = readFileSync(latestFile, 'utf8');
      const listing = readdirSync(dir).sort();
      const oldStat = statSync(artifactFile);
      expect(await pub.publishRun(old.publish_run_id)).to.have.property('status', 200);
      expect(readFileSync(latestFile, 'utf8')).to.equal(latestBefore);
      expect(readdirSync(dir).sort()).to.deep.equal(listing);
      expect(statSync(artifactFile).mtimeMs).to.equal(oldStat.mtimeMs);
      // A removed artifact file is not written back by reading its run.
      rmSync(artifactFile);
      expect(await pub.publishRun(old.publish_run_id)).to.have.property('status', 200);
      expect(existsSync(artifactFile)).to.equal(false);
      expect(readFileSync(latestFile, 'utf8')).to.equal(latestBefore);
    });

    it('GET /api/policy-publish/{id}: unknown id 404 POLICY_PUBLISH_RUN_NOT_FOUND, non-integer id 400', async () => {
      expectPolicyError(await pub.publishRun(987654), 404, 'POLICY_PUBLISH_RUN_NOT_FOUND', 'Publish run not found: 987654');
      expectPolicyError(await pub.publishRun(0), 404, 'POLICY_PUBLISH_RUN_NOT_FOUND', 'Publish run not found: 0');
      for (const id of ['abc', '1.5', '1e3x']) expectBadRequest(await pub.publishRun(id));
    });
  });

  describe('import', () => {
    let published: Record<string, any>;
    let artifactText: string;
    let artifact: Record<string, any>;
    let target: PolicyClient;

    before(async () => {
      published = await pub.mustPublish('emberwick');
      ({ text: artifactText, artifact } = readArtifact(published.artifact.artifact_path));
      target = await freshServer('publisher1');
    });

    it('imports every row in dependency order, activates them, and a publish there reproduces the hashes', async () => {
      const res = await target.importArtifact(importBody(artifactText));
      expect(res.status, res.text).to.equal(200);
      const n = artifact.variants.length;
      expect(n).to.equal(4);
      const { entries, ...counts } = res.body;
      expect(counts).to.deep.equal({
        world_id: 'emberwick',
        client_profile: null,
        activate: true,
        item_count: n,
        imported_count: n,
        updated_count: 0,
        skipped_count: 0,
        error_count: 0,
        activated_count: n,
        activation_skipped_count: 0,
        manifest_hash: artifact.manifest_hash,
        items_hash: artifact.items_hash,
        artifact_hash: artifact.artifact_hash,
        variants_hash: artifact.variants_hash,
      });
      // Blocks first (species 20, prompt 40, tone 50), the registry (90) last.
      expect(entries).to.deep.equal(
        [GOBLIN, PROMPT_IC, TONE, SPECIES_REGISTRY].map((id) => ({ policy_id: id, variant: 'v1', action: 'imported', detail: `imported ${id}:v1` })),
      );

      const republished = await target.mustPublish('emberwick');
      expect(republished.manifest.manifest_hash).to.equal(published.manifest.manifest_hash);
      expect(republished.manifest.items_hash).to.equal(published.manifest.items_hash);
      expect(republished.manifest.items).to.deep.equal(published.manifest.items);
      // Same username on both servers: even updated_by matches, so the file is byte-identical.
      expect(republished.artifact.artifact_hash).to.equal(published.artifact.artifact_hash);
      expect(readArtifact(republished.artifact.artifact_path, target.server).text).to.equal(artifactText);
      expect((await target.get(PROMPT_IC, 'v1')).text).to.contain('"temperature":1.0');

      // Actors are the importing session's username.
      const rows = await target.server.db('policy_activations').where({ world_id: 'emberwick' });
      expect(rows.map((r) => r.activated_by)).to.deep.equal(['publisher1', 'publisher1', 'publisher1', 'publisher1']);
    });

    it('importing the same artifact again skips every row and every activation', async () => {
      const res = await target.importArtifact(importBody(artifactText));
      expect(res.status, res.text).to.equal(200);
      const n = artifact.variants.length;
      expect(res.body).to.deep.include({ imported_count: 0, updated_count: 0, skipped_count: n, error_count: 0, activated_count: 0, activation_skipped_count: n });
      expect(res.body.entries).to.deep.equal(
        [GOBLIN, PROMPT_IC, TONE, SPECIES_REGISTRY].map((id) => ({ policy_id: id, variant: 'v1', action: 'skipped', detail: `unchanged ${id}:v1` })),
      );
    });

    it('activate: false imports without activating; a later import activates the unchanged rows', async () => {
      const other = await freshServer('importer2');
      const res = await other.importArtifact(importBody(artifactText, false));
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ activate: false, imported_count: 4, activated_count: 0, activation_skipped_count: 0, error_count: 0 });
      expect((await other.activations('emberwick', false)).body.items).to.deep.equal([]);
      const stored = await other.get(GOBLIN, 'v1');
      expect(stored.body).to.deep.include({ content: { text: 'goblin text' }, updated_by: 'importer2' });
      // The artifact's updated_at is kept.
      expect(stored.body.updated_at).to.equal(artifact.variants.find((v: any) => v.policy_id === GOBLIN).updated_at);

      const again = await other.importArtifact(importBody(artifactText, true));
      expect(again.body).to.deep.include({ skipped_count: 4, activated_count: 4, activation_skipped_count: 0 });
      expect((await other.activations('emberwick', false)).body.items.map((i: any) => [i.policy_id, i.variant, i.activated_by])).to.deep.equal(
        [PROMPT_IC, SPECIES_REGISTRY, GOBLIN, TONE].sort(byText).map((id) => [id, 'v1', 'importer2']),
      );
      expect((await other.mustPublish('emberwick')).manifest.manifest_hash).to.equal(published.manifest.manifest_hash);
    });

    it('a tampered artifact (one content text changed, artifact_hash kept) is 409 and changes nothing', async () => {
      const tampered = parseJson(artifactText) as Record<string, any>;
      tampered.variants.find((v: any) => v.policy_id === GOBLIN).content.text = 'a hobgoblin';
      const before = await policyState(target.server);
      const res = await target.importArtifact(canonicalJson({ activate: true, artifact: tampered }));
      const calculated = payloadHash(Object.fromEntries(Object.entries(tampered).filter(([k]) => k !== 'artifact_hash')));
      expectPolicyError(
        res,
        409,
        'POLICY_IMPORT_ARTIFACT_HASH_MISMATCH',
        `Artifact integrity check failed: artifact_hash mismatch (provided='${artifact.artifact_hash}', calculated='${calculated}').`,
      );
      expect(await policyState(target.server)).to.deep.equal(before);

      // Without artifact_hash, the kept variants_hash still catches it.
      delete tampered.artifact_hash;
      const noArtifactHash = await target.importArtifact(canonicalJson({ activate: true, artifact: tampered }));
      expectPolicyError(noArtifactHash, 409, 'POLICY_IMPORT_ARTIFACT_HASH_MISMATCH', new RegExp(`^Artifact integrity check failed: variants_hash mismatch \\(provided='${artifact.variants_hash}', calculated='[0-9a-f]{64}'\\)\\.$`));
      expect(await policyState(target.server)).to.deep.equal(before);

      // A changed envelope field is caught by artifact_hash too.
      const renamed = parseJson(artifactText) as Record<string, any>;
      renamed.manifest_hash = '0'.repeat(64);
      expectPolicyError(await target.importArtifact(canonicalJson({ artifact: renamed })), 409, 'POLICY_IMPORT_ARTIFACT_HASH_MISMATCH');
      // The hash is checked before the envelope.
      expectPolicyError(await target.importArtifact({ artifact: { world_id: '', artifact_hash: '0'.repeat(64) } }), 409, 'POLICY_IMPORT_ARTIFACT_HASH_MISMATCH');
      expect(await policyState(target.server)).to.deep.equal(before);
    });

    it("a world package's shipped artifact, imported at start-up, republishes to its own hashes", async function () {
      const shipped = path.resolve('worlds', 'emberwick', POLICY_ARTIFACT_FILE);
      const packaged = parseJson(readFileSync(shipped, 'utf8')) as Record<string, any>;
      const server = await startTestServer();
      extra.push(server);
      const client = await adminClient(server, 'packager1');
      const body = await client.mustPublish('emberwick');
      expect(body.manifest.item_count).to.equal(packaged.item_count);
      expect(body.manifest.items_hash).to.equal(packaged.items_hash);
      expect(body.manifest.manifest_hash).to.equal(packaged.manifest_hash);
    });

    it('bad envelopes are 422 POLICY_IMPORT_ARTIFACT_INVALID; an unknown world is 404', async () => {
      const before = await policyState(target.server);
      const worldInvalid = 'Artifact field world_id must be a non-empty string.';
      const notList = 'Artifact field variants must be a list.';
      const notObjects = 'Artifact field variants must contain only object entries.';
      const cases: Array<[Record<string, unknown>, number, string, string]> = [
        [{ variants: [] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', worldInvalid],
        [{ world_id: '  ', variants: [] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', worldInvalid],
        [{ world_id: 5, variants: [] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', worldInvalid],
        [{ world_id: null, variants: [] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', worldInvalid],
        [{ world_id: 'emberwick' }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notList],
        [{ world_id: 'emberwick', variants: {} }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notList],
        [{ world_id: 'emberwick', variants: 'x' }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notList],
        [{ world_id: 'emberwick', variants: null }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notList],
        [{ world_id: 'emberwick', variants: [1] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notObjects],
        [{ world_id: 'emberwick', variants: [{}, null] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notObjects],
        [{ world_id: 'emberwick', variants: [[]] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notObjects],
        [{ world_id: 'emberwick', variants: ['x'] }, 422, 'POLICY_IMPORT_ARTIFACT_INVALID', notObjects],
        [{ world_id: 'nowhere', variants: [] }, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."],
        // The world is checked before the variants.
        [{ world_id: 'nowhere', variants: 'x' }, 404, 'POLICY_WORLD_NOT_FOUND', "World 'nowhere' not found."],
      ];
      for (const [envelope, status, code, detail] of cases) {
        expectPolicyError(await target.importArtifact({ artifact: envelope, activate: true }), status, code, detail);
      }
      expect(await policyState(target.server)).to.deep.equal(before);
    });

    it('collects per-row errors without aborting, imports the valid rows in dependency order', async () => {
      const row = (policyId: unknown, content: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
        policy_id: policyId,
        variant: 'v1',
        schema_version: '1.0',
        policy_version: 1,
        status: 'draft',
        content,
        ...extra,
      });
      const variants = [
        // A registry listed before the block it references.
        row(ORC_REGISTRY, { references: [{ policy_id: ORC, variant: 'v1' }] }),
        row('prompt:imp.rows:a', { text: 'a' }, { policy_type: 'species_block' }),
        row('species_block:wrong.ns:x', {}),
        row(ORC, { text: 'orc text' }),
        row('prompt:imp.rows:c', { text: 'c' }, { policy_type: 'prompt', namespace: 'imp.rows', policy_key: 'c' }),
        row(undefined, { text: 'no id' }),
        row('prompt:imp.rows:d', { text: 'd' }, { namespace: 'imp.other' }),
        row('prompt:imp.rows:e', { text: '' }),
      ];
      const res = await target.importArtifact({ activate: true, artifact: { world_id: 'hollow_spire', client_profile: null, variants } });
      expect(res.status, res.text).to.equal(200);
      const { entries, ...counts } = res.body;
      expect(counts).to.deep.include({
        world_id: 'hollow_spire',
        client_profile: null,
        item_count: 8,
        imported_count: 3,
        updated_count: 0,
        skipped_count: 0,
        error_count: 5,
        activated_count: 3,
        activation_skipped_count: 0,
        manifest_hash: '',
        items_hash: '',
        variants_hash: payloadHash({ variants }),
        artifact_hash: payloadHash({ world_id: 'hollow_spire', client_profile: null, variants }),
      });
      expect(entries).to.deep.equal([
        {
          policy_id: 'species_block:wrong.ns:x',
          variant: 'v1',
          action: 'error',
          detail: "species_block namespace must be exactly 'image.blocks.species'.; species_block content.text must be a non-empty string",
        },
        { policy_id: ORC, variant: 'v1', action: 'imported', detail: `imported ${ORC}:v1` },
        { policy_id: 'prompt:imp.rows:a', variant: 'v1', action: 'error', detail: "variants[1].policy_type must match policy_id-derived value 'prompt'." },
        { policy_id: 'prompt:imp.rows:c', variant: 'v1', action: 'imported', detail: 'imported prompt:imp.rows:c:v1' },
        { policy_id: 'prompt:imp.rows:d', variant: 'v1', action: 'error', detail: "variants[6].namespace must match policy_id-derived value 'imp.rows'." },
        { policy_id: 'prompt:imp.rows:e', variant: 'v1', action: 'error', detail: 'prompt content.text must be a non-empty string' },
        { policy_id: ORC_REGISTRY, variant: 'v1', action: 'imported', detail: `imported ${ORC_REGISTRY}:v1` },
        { policy_id: null, variant: 'v1', action: 'error', detail: 'variants[5].policy_id must be a non-empty string.' },
      ]);
      const pointers = (await target.activations('hollow_spire', false)).body.items.map((i: any) => [i.policy_id, i.variant]);
      expect(pointers).to.deep.equal([
        ['prompt:imp.rows:c', 'v1'],
        [ORC_REGISTRY, 'v1'],
        [ORC, 'v1'],
      ]);
      for (const id of ['prompt:imp.rows:a', 'species_block:wrong.ns:x', 'prompt:imp.rows:d', 'prompt:imp.rows:e']) {
        expect(await target.server.db('policy_variants').where({ policy_id: id }), id).to.have.length(0);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------
// Hash snapshot: a fresh server with a known set of activations
// ---------------------------------------------------------------------------------------

describe('policy hash snapshot (HTTP)', function () {
  let server: TestServer;
  let admin: PolicyClient;

  before(async () => {
    server = await startPolicyServer();
    admin = await adminClient(server, 'snapper1');
    await admin.mustPut(GOBLIN, 'v1', { text: 'goblin text' });
    await admin.mustPut(GOBLIN, 'v2', { text: 'goblin two' });
    await admin.mustPut(PROMPT_IC, 'v1', { text: 'in character' });
    await admin.mustPut(PROMPT_OOC, 'v1', { text: 'out of character' });
    await admin.mustPut(CLOAK, 'v1', { text: 'cloak' });
    for (const id of [GOBLIN, PROMPT_IC, PROMPT_OOC]) await admin.mustActivate('emberwick', id, 'v1');
    // Client pointers are not part of the world snapshot.
    await admin.mustActivate('emberwick', CLOAK, 'v1', 'mobile');
    await admin.mustActivate('emberwick', GOBLIN, 'v2', 'mobile');
  });

  after(async () => {
    await server?.close();
  });

  async function entries(): Promise<TreeEntry[]> {
    const out: TreeEntry[] = [];
    for (const item of (await admin.activations('emberwick', false)).body.items) {
      const variant = (await admin.get(item.policy_id, item.variant)).body;
      out.push({
        relative_path: `${variant.policy_type}/${variant.namespace.replaceAll('.', '/')}/${variant.policy_key}/${variant.variant}.json`,
        content_hash: variant.content_hash,
      });
    }
    return out;
  }

  it('the test tree hash reproduces the reference vector', () => {
    expect(treeHash([{ relative_path: 'species_block/image/blocks/species/goblin/v1.json', content_hash: 'h1' }])).to.equal(
      'cf701c0cc23b1d0c58a9dab245aac0d67b8f0eecdeeb06c4cbb2fc667ad7feea',
    );
  });

  it("defaults to the server's default world and hashes the effective world-scope tree", async () => {
    const res = await admin.snapshot();
    expect(res.status, res.text).to.equal(200);
    expect(Object.keys(res.body)).to.deep.equal(['hash_version', 'canonical_root', 'generated_at', 'file_count', 'root_hash', 'directories']);
    const tree = await entries();
    expect(tree.map((e) => e.relative_path).sort(byText)).to.deep.equal([
      'prompt/translation/prompts/ic/default/v1.json',
      'prompt/translation/prompts/ooc/default/v1.json',
      'species_block/image/blocks/species/goblin/v1.json',
    ]);
    const { generated_at: generatedAt, ...rest } = res.body;
    expect(generatedAt).to.match(ISO_UTC);
    expect(rest).to.deep.equal({
      hash_version: 'policy_db_snapshot_hash_v2',
      canonical_root: 'canonical_db://emberwick/effective-activations',
      file_count: 3,
      root_hash: treeHash(tree),
      directories: directoryHashes(tree),
    });
    const dirs = new Map(res.body.directories.map((d: any) => [d.path, d]));
    expect(dirs.get('species_block')).to.deep.include({ file_count: 1 });
    expect(dirs.get('prompt')).to.deep.include({ file_count: 2 });
    expect(dirs.get('prompt/translation/prompts/ic')).to.deep.include({ file_count: 1 });
    expect(dirs.get('species_block/image/blocks/species/goblin')).to.deep.equal({
      path: 'species_block/image/blocks/species/goblin',
      file_count: 1,
      hash: treeHash([{ relative_path: 'species_block/image/blocks/species/goblin/v1.json', content_hash: 'ef17ce13866baa56333f6887078807dc05f06e670f61901ad08a6a08deb6feb2' }]),
    });
    expect(res.body.root_hash).to.match(HEX64);

    const explicit = await admin.snapshot('emberwick');
    expect(explicit.body.root_hash).to.equal(res.body.root_hash);
    expect(explicit.body.directories).to.deep.equal(res.body.directories);
  });

  it("changing an active variant's content (or the active variant) changes root_hash", async () => {
    const before = (await admin.snapshot()).body;
    server.clock.advance(1_000);
    await admin.mustPut(GOBLIN, 'v1', { text: 'goblin text, revised' });
    const after = (await admin.snapshot()).body;
    expect(after.root_hash).to.not.equal(before.root_hash);
    const tree = await entries();
    expect(after.root_hash).to.equal(treeHash(tree));
    expect(after.directories).to.deep.equal(directoryHashes(tree));
    const prompt = (s: any): unknown => s.directories.find((d: any) => d.path === 'prompt');
    expect(prompt(after)).to.deep.equal(prompt(before));

    // Changing an inactive variant changes nothing.
    await admin.mustPut(GOBLIN, 'v2', { text: 'goblin two, revised' });
    expect((await admin.snapshot()).body.root_hash).to.equal(after.root_hash);

    await admin.mustActivate('emberwick', GOBLIN, 'v2');
    const repointed = (await admin.snapshot()).body;
    expect(repointed.root_hash).to.not.equal(after.root_hash);
    expect(repointed.directories.map((d: any) => d.path)).to.include('species_block/image/blocks/species/goblin');
    expect(repointed.root_hash).to.equal(treeHash(await entries()));
  });

  it('a world without pointers has an empty tree; an unknown world is a plain 404', async () => {
    const empty = await admin.snapshot('hollow_spire');
    expect(empty.status, empty.text).to.equal(200);
    expect(empty.body).to.deep.include({
      canonical_root: 'canonical_db://hollow_spire/effective-activations',
      file_count: 0,
      root_hash: treeHash([]),
      directories: [],
    });
    const missing = await admin.snapshot('nowhere');
    expect(missing.status, missing.text).to.equal(404);
    expect(missing.body).to.deep.equal({ detail: "World 'nowhere' not found." });
  });
});
