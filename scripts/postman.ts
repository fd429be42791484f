/**
 * `npm run postman`: writes postman/mud-server.postman_collection.json, the collection QA
 * imports into Postman or runs with newman, from openapi.yaml. `npm run postman:check` (the
 * `--check` flag) writes nothing and exits 1 when the committed file is stale.
 *
 * openapi-to-postmanv2 does the conversion (one folder per tag, requests named after their
 * summaries, values from the contract's examples); this script then makes the result usable
 * and reproducible:
 * - a `baseUrl` variable (http://127.0.0.1:8000) instead of the converter's host/port pair;
 * - collection-level bearer auth with `{{session_id}}`, `noauth` on public operations, and
 *   every `session_id` field or parameter set to `{{session_id}}`;
 * - "Stop the server gracefully" skipped unless `allow_server_stop` is "true";
 * - a first folder "play" whose requests, with Postman tests, play a whole game on a fresh
 *   server: register, login, list, create and select a character, look, say, read the chat,
 *   status, logout;
 * - ids derived from names instead of random ones, and faked values from a seeded generator,
 *   so the same openapi.yaml always gives the same bytes.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { convertV2, type CollectionResult } from 'openapi-to-postmanv2';
import { parse } from 'yaml';
import { seededRandom } from '../src/integrations/seeded-random.ts';

const ROOT = path.join(import.meta.dirname, '..');
export const OPENAPI_FILE = path.join(ROOT, 'openapi.yaml');
export const COLLECTION_FILE = path.join(ROOT, 'postman', 'mud-server.postman_collection.json');
export const PLAY_FOLDER = 'play';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8000';

// The parts of the Postman collection format (v2.1) this script reads or writes.
interface Variable {
  key: string;
  value: string;
  type?: string;
  description?: string;
  disabled?: boolean;
}
interface Url {
  path: string[];
  host: string[];
  query: Variable[];
  variable: Variable[];
}
interface Body {
  mode: string;
  raw?: string;
  options?: unknown;
}
interface Auth {
  type: string;
  bearer?: Variable[];
}
interface Request {
  name?: string;
  description?: unknown;
  url: Url;
  header: Variable[];
  method: string;
  body?: Body;
  auth?: Auth | null;
}
interface Event {
  listen: 'prerequest' | 'test';
  script: { type: 'text/javascript'; exec: string[] };
}
interface Response {
  id?: string;
  name: string;
  code: number;
  originalRequest?: Request;
}
interface RequestItem {
  id?: string;
  name: string;
  description?: string;
  event?: Event[];
  request: Request;
  response: Response[];
}
interface Folder {
  id?: string;
  name: string;
  description?: string;
  item: Item[];
}
type Item = RequestItem | Folder;
interface Collection {
  info: { _postman_id?: string; name: string; description?: unknown; schema: string };
  item: Item[];
  auth?: Auth;
  event?: Event[];
  variable: Variable[];
}

interface Operation {
  operationId: string;
  /** No security requirement at all (`security: []`): sent without credentials. */
  isPublic: boolean;
}

interface OpenApiDocument {
  security?: unknown[];
  paths: Record<string, Record<string, { operationId?: string; security?: unknown[] }>>;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

function isFolder(item: Item): item is Folder {
  return 'item' in item;
}

/** Every operation of the contract, keyed by `METHOD /path/{param}`. */
function operationsOf(document: OpenApiDocument): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [pathName, pathItem] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!HTTP_METHODS.has(method) || !operation.operationId) continue;
      const security = operation.security ?? document.security ?? [];
      const key = `${method.toUpperCase()} ${pathName}`;
      operations.set(key, { operationId: operation.operationId, isPublic: security.length === 0 });
    }
  }
  return operations;
}

/** The contract's path of a converted request: `["ping", ":session_id"]` is `/ping/{session_id}`. */
function contractPath(url: Url): string {
  return '/' + url.path.map((segment) => (segment.startsWith(':') ? `{${segment.slice(1)}}` : segment)).join('/');
}

/** The json-schema-faker copy the converter fakes values with (it ships no types). */
interface SchemaFaker {
  option(name: 'random'): () => number;
  option(options: { random: () => number }): void;
}
const schemaFaker = createRequire(import.meta.url)('openapi-to-postmanv2/assets/json-schema-faker.js') as SchemaFaker;

/**
 * Runs the converter. Values the contract gives no example for (the `Retry-After` header, the
 * `session_id` pattern) are faked at random: by json-schema-faker's `random` option (a
 * Math.random it captured when loaded) and by its pattern generator (Math.random itself). Both
 * draw from one seeded generator during the conversion and are restored afterwards (the
 * converter calls back synchronously, so no other code draws from it meanwhile).
 */
async function convert(yamlText: string): Promise<Collection> {
  const originalRandom = Math.random;
  const originalFakerRandom = schemaFaker.option('random');
  const seeded = seededRandom(0x6d7564);
  Math.random = seeded;
  schemaFaker.option({ random: seeded });
  try {
    const result = await new Promise<CollectionResult>((resolve, reject) => {
      convertV2(
        { type: 'string', data: yamlText },
        {
          folderStrategy: 'Tags',
          requestNameSource: 'Fallback',
          parametersResolution: 'Example',
          indentCharacter: 'Space',
        },
        (err, res) => (err || !res ? reject(new Error(`openapi-to-postmanv2: ${err?.message ?? 'no result'}`)) : resolve(res)),
      );
    });
    const output = result.output?.[0];
    if (!result.result || output?.type !== 'collection') throw new Error(`openapi-to-postmanv2: ${result.reason ?? 'no collection'}`);
    return output.data as Collection;
  } finally {
    Math.random = originalRandom;
    schemaFaker.option({ random: originalFakerRandom });
  }
}

/** Every request the collection sends or shows: the request itself and each example's original. */
function* requestsOf(item: RequestItem): Generator<Request> {
  yield item.request;
  for (const response of item.response) if (response.originalRequest) yield response.originalRequest;
}

/** `session_id` is a credential, not an example: every place that takes it gets the variable. */
function useSessionVariable(request: Request): void {
  for (const parameter of [...request.url.query, ...request.url.variable]) {
    if (parameter.key === 'session_id') parameter.value = '{{session_id}}';
  }
  if (request.body?.mode === 'raw' && request.body.raw) {
    let body: unknown;
    try {
      body = JSON.parse(request.body.raw);
    } catch {
      return;
    }
    if (body && typeof body === 'object' && 'session_id' in body) {
      request.body.raw = JSON.stringify({ ...body, session_id: '{{session_id}}' }, null, 2);
    }
  }
}

const NOAUTH: Auth = { type: 'noauth' };

/**
 * Auth per request: public operations send none; every other one inherits the collection's
 * bearer token (the converter gives some a `{{bearerToken}}` of their own; that variable is
 * never set).
 */
function setAuth(request: Request, operation: Operation): void {
  if (operation.isPublic) request.auth = NOAUTH;
  else delete request.auth;
}

function script(listen: Event['listen'], lines: string[]): Event {
  return { listen, script: { type: 'text/javascript', exec: lines } };
}

/** A login answer's session becomes the collection's bearer token, so QA can go on from there. */
const SAVE_SESSION: Event = script('test', [
  '// The session of a successful login is the bearer token of every later request.',
  'if (pm.response.code === 200) pm.collectionVariables.set("session_id", pm.response.json().session_id);',
]);

/**
 * `POST /admin/server/stop` ends the server: run with an admin session, a folder or collection
 * run would lose every request after it. It is skipped unless `allow_server_stop` is "true".
 */
const GUARD_SERVER_STOP: Event = script('prerequest', [
  '// Stops the server: skipped unless allow_server_stop is "true", so that running the Admin folder or the',
  '// whole collection with an admin session does not end the server half-way.',
  'if (pm.variables.get("allow_server_stop") !== "true") pm.execution.skipRequest();',
]);
const SERVER_STOP_NOTE = 'Skipped unless the variable `allow_server_stop` is `true` (it ends the server).\n\n';

interface PlayStep {
  operationId: string;
  name: string;
  description: string;
  /** Raw JSON body (a string, so that `{{character_id}}` can stand for a number). */
  body?: string;
  /** Query values to set, by key. */
  query?: Record<string, string>;
  headers?: Record<string, string>;
  prerequest?: string[];
  tests: string[];
}

/**
 * The game a QA run plays on a fresh server with nothing but `baseUrl` set. Each step reuses the
 * converted request of its operation (path, parameters, headers), so it follows the contract.
 */
const PLAY: PlayStep[] = [
  {
    operationId: 'register',
    name: 'Register an account',
    description: 'A new temporary account with a username unique to this run.',
    prerequest: [
      '// Usernames are 2..20 characters: "qa_" and the time in base 36 keep each run apart.',
      'const suffix = Math.floor(Math.random() * 1296).toString(36).padStart(2, "0");',
      'pm.collectionVariables.set("username", "qa_" + Date.now().toString(36) + suffix);',
    ],
    body: JSON.stringify({ username: '{{username}}', password: '{{password}}', password_confirm: '{{password}}' }, null, 2),
    tests: [
      'pm.test("account created", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.success).to.equal(true);',
      '  pm.expect(body.message).to.include(pm.collectionVariables.get("username"));',
      '});',
    ],
  },
  {
    operationId: 'login',
    name: 'Log in',
    description: 'Opens a session; its `session_id` becomes the bearer token of the following requests.',
    headers: { 'X-Client-Type': 'postman' },
    body: JSON.stringify({ username: '{{username}}', password: '{{password}}' }, null, 2),
    tests: [
      'pm.test("session opened", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.success).to.equal(true);',
      '  pm.expect(body.role).to.equal("player");',
      '  pm.expect(body.session_id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);',
      '  pm.collectionVariables.set("session_id", body.session_id);',
      '});',
      'pm.test("emberwick is open to the new account", () => {',
      '  const world = pm.response.json().available_worlds.find((w) => w.id === "emberwick");',
      '  pm.expect(world, "emberwick in available_worlds").to.be.an("object");',
      '  pm.expect(world.can_create).to.equal(true);',
      '});',
    ],
  },
  {
    operationId: 'listCharacters',
    name: 'List characters',
    description: 'A new account has no characters in emberwick yet.',
    query: { world_id: 'emberwick' },
    tests: [
      'pm.test("no characters yet", () => {',
      '  pm.response.to.have.status(200);',
      '  pm.expect(pm.response.json().characters).to.be.an("array").that.is.empty;',
      '});',
    ],
  },
  {
    operationId: 'createCharacter',
    name: 'Create a character in emberwick',
    description: 'The server generates the name; `character_id` and `character_name` are kept for the next steps.',
    body: JSON.stringify({ world_id: 'emberwick' }, null, 2),
    tests: [
      'pm.test("character created", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.success).to.equal(true);',
      '  pm.expect(body.world_id).to.equal("emberwick");',
      '  pm.expect(body.character_id).to.be.a("number");',
      '  pm.collectionVariables.set("character_id", body.character_id);',
      '  pm.collectionVariables.set("character_name", body.character_name);',
      '});',
    ],
  },
  {
    operationId: 'selectCharacter',
    name: 'Select the character',
    description: 'Binds the session to the new character, so that commands can be run.',
    body: '{\n  "character_id": {{character_id}}\n}',
    tests: [
      'pm.test("character selected", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.success).to.equal(true);',
      '  pm.expect(body.character_name).to.equal(pm.collectionVariables.get("character_name"));',
      '});',
    ],
  },
  {
    operationId: 'runCommand',
    name: 'Look around',
    description: 'The `look` command describes the current room.',
    body: JSON.stringify({ command: 'look' }, null, 2),
    tests: [
      'pm.test("the room is described", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.success).to.equal(true);',
      '  pm.expect(body.message).to.include("[Exits]");',
      '});',
    ],
  },
  {
    operationId: 'runCommand',
    name: 'Say something',
    description: 'The `say` command speaks to the room; the next step reads it back from the chat.',
    prerequest: [
      '// A text unique to this run, so that the chat check cannot match an older message.',
      'pm.collectionVariables.set("chat_text", "Lanterns at dusk " + Date.now().toString(36));',
    ],
    body: JSON.stringify({ command: 'say {{chat_text}}' }, null, 2),
    tests: [
      'pm.test("said", () => {',
      '  pm.response.to.have.status(200);',
      '  pm.expect(pm.response.json().success).to.equal(true);',
      '});',
    ],
  },
  {
    operationId: 'getRoomChat',
    name: 'Read the room chat',
    description: 'The room\'s recent chat holds what the character just said.',
    tests: [
      'pm.test("the chat holds what was said", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  const text = pm.collectionVariables.get("chat_text");',
      '  const said = body.messages.find((m) => m.text === text);',
      '  pm.expect(said, "message " + JSON.stringify(text)).to.be.an("object");',
      '  pm.expect(said.channel).to.equal("say");',
      '  pm.expect(said.sender).to.equal(pm.collectionVariables.get("character_name"));',
      '  pm.expect(body.chat).to.include(text);',
      '});',
    ],
  },
  {
    operationId: 'getStatus',
    name: 'Status',
    description: 'Active players, the current room and the inventory.',
    tests: [
      'pm.test("the character is in the game", () => {',
      '  pm.response.to.have.status(200);',
      '  const body = pm.response.json();',
      '  pm.expect(body.active_players).to.include(pm.collectionVariables.get("character_name"));',
      '  pm.expect(body.current_room).to.be.a("string").that.is.not.empty;',
      '  pm.expect(body.inventory).to.be.a("string");',
      '});',
    ],
  },
  {
    operationId: 'logout',
    name: 'Log out',
    description: 'Closes the session.',
    tests: [
      'pm.test("session closed", () => {',
      '  pm.response.to.have.status(200);',
      '  pm.expect(pm.response.json().success).to.equal(true);',
      '});',
    ],
  },
];

function playItem(step: PlayStep, converted: Map<string, RequestItem>): RequestItem {
  const source = converted.get(step.operationId);
  if (!source) throw new Error(`play step "${step.name}": no converted request for operation ${step.operationId}`);
  const request = structuredClone(source.request);
  request.name = step.name;
  request.description = step.description;
  if (step.body !== undefined) {
    if (!request.body) throw new Error(`play step "${step.name}": ${step.operationId} takes no body`);
    request.body.raw = step.body;
  }
  for (const [key, value] of Object.entries(step.query ?? {})) {
    const parameter = request.url.query.find((q) => q.key === key);
    if (!parameter) throw new Error(`play step "${step.name}": ${step.operationId} has no query parameter ${key}`);
    parameter.value = value;
  }
  for (const [key, value] of Object.entries(step.headers ?? {})) {
    const header = request.header.find((h) => h.key.toLowerCase() === key.toLowerCase());
    if (header) header.value = value;
    else request.header.push({ key, value });
  }
  const event = [...(step.prerequest ? [script('prerequest', step.prerequest)] : []), script('test', step.tests)];
  return { name: step.name, event, request, response: [] };
}

const PLAY_DESCRIPTION = [
  'A whole game on a fresh server, with tests: register a new account (a unique username per run), log in,',
  'list characters, create one in emberwick, select it, `look`, `say`, read the room chat back, status, log out.',
  '',
  'Only `baseUrl` is needed: `npx newman run postman/mud-server.postman_collection.json --folder play',
  '--env-var baseUrl=http://127.0.0.1:8000`. Each run registers an account, and registrations are rate-limited',
  'per client address (`[rate_limit] register_per_address`, 10 a minute by default).',
].join('\n');

const USAGE = [
  'Generated from openapi.yaml by `npm run postman`; do not edit by hand.',
  '',
  'Set `baseUrl` (default http://127.0.0.1:8000). Run the "play" folder for a whole game with tests, or send',
  '"Log in and open a session": its `session_id` becomes the bearer token (`{{session_id}}`) of every other',
  'request. Protected requests also carry it as their `session_id` field or parameter. A `session_id` set in an',
  'environment hides the one logins save. "Stop the server gracefully" is skipped unless `allow_server_stop` is `true`.',
  '',
  '---',
  '',
].join('\n');

/** A UUID-shaped id derived from a name, stable from run to run. */
function stableId(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Replaces the converter's random ids with ids derived from each item's place and name. */
function assignIds(items: Item[], parentKey: string, used: Set<string>): void {
  const unique = (key: string): string => {
    let candidate = key;
    for (let n = 2; used.has(candidate); n++) candidate = `${key}#${n}`;
    used.add(candidate);
    return candidate;
  };
  for (const item of items) {
    const key = unique(`${parentKey}/${item.name}`);
    item.id = stableId(key);
    if (isFolder(item)) {
      assignIds(item.item, key, used);
    } else {
      for (const response of item.response) response.id = stableId(unique(`${key}/${response.code} ${response.name}`));
    }
  }
}

/** Objects with their keys in a fixed order (the converter's order, `id` first). */
function withIdFirst<T extends { id?: string }>(value: T): T {
  const { id, ...rest } = value;
  return { id, ...rest } as T;
}

export async function buildCollection(yamlText: string): Promise<Collection> {
  const operations = operationsOf(parse(yamlText) as OpenApiDocument);
  const converted = await convert(yamlText);

  // Post-process the converted requests and index them by operationId for the play folder.
  const byOperation = new Map<string, RequestItem>();
  const visit = (items: Item[]): void => {
    for (const item of items) {
      if (isFolder(item)) {
        visit(item.item);
        continue;
      }
      const key = `${item.request.method} ${contractPath(item.request.url)}`;
      const operation = operations.get(key);
      if (!operation) throw new Error(`converted request "${item.name}" (${key}) matches no operation of openapi.yaml`);
      for (const request of requestsOf(item)) useSessionVariable(request);
      setAuth(item.request, operation);
      if (operation.operationId === 'login' || operation.operationId === 'loginDirect') item.event = [SAVE_SESSION];
      if (operation.operationId === 'adminStopServer') {
        item.event = [GUARD_SERVER_STOP];
        const description = item.request.description as { content?: string } | undefined;
        item.request.description = { content: SERVER_STOP_NOTE + (description?.content ?? ''), type: 'text/plain' };
      }
      byOperation.set(operation.operationId, item);
    }
  };
  visit(converted.item);
  const missing = [...operations.values()].filter((op) => !byOperation.has(op.operationId)).map((op) => op.operationId);
  if (missing.length > 0) throw new Error(`openapi-to-postmanv2 left out operations: ${missing.join(', ')}`);

  const play: Folder = { name: PLAY_FOLDER, description: PLAY_DESCRIPTION, item: PLAY.map((step) => playItem(step, byOperation)) };
  const items: Item[] = [play, ...converted.item];
  assignIds(items, '', new Set());
  const ordered = (list: Item[]): Item[] =>
    list.map((item) => (isFolder(item) ? withIdFirst({ ...item, item: ordered(item.item) }) : withIdFirst(item)));

  const description = converted.info.description as { content?: string; type?: string } | undefined;
  return {
    info: {
      _postman_id: stableId('mud-server postman collection'),
      name: converted.info.name,
      description: { content: USAGE + (description?.content ?? ''), type: 'text/markdown' },
      schema: converted.info.schema,
    },
    item: ordered(items),
    auth: { type: 'bearer', bearer: [{ key: 'token', value: '{{session_id}}', type: 'string' }] },
    variable: [
      { key: 'baseUrl', value: DEFAULT_BASE_URL, type: 'string', description: 'The server; override it with an environment (newman: --env-var baseUrl=...).' },
      { key: 'session_id', value: '', type: 'string', description: 'Set by a successful login; the bearer token of protected requests.' },
      { key: 'allow_server_stop', value: 'false', type: 'string', description: 'Set to "true" to let "Stop the server gracefully" run.' },
      { key: 'password', value: 'Quiet-Lantern-42', type: 'string', description: 'Password of the accounts the play folder registers (passes the STANDARD policy).' },
      { key: 'username', value: '', type: 'string', description: 'Set by the play folder: the account it registered.' },
      { key: 'character_id', value: '', type: 'string', description: 'Set by the play folder: the character it created.' },
      { key: 'character_name', value: '', type: 'string', description: 'Set by the play folder: the created character\'s name.' },
      { key: 'chat_text', value: '', type: 'string', description: 'Set by the play folder: what its character says.' },
    ],
  };
}

/** The collection file's exact text: pretty-printed JSON with a trailing newline. */
export async function renderCollection(yamlText = readFileSync(OPENAPI_FILE, 'utf8')): Promise<string> {
  return JSON.stringify(await buildCollection(yamlText), null, 2) + '\n';
}

function firstDifference(a: string, b: string): string {
  const linesA = a.split('\n');
  const linesB = b.split('\n');
  const index = linesA.findIndex((line, i) => line !== linesB[i]);
  const at = index === -1 ? linesA.length : index;
  return `line ${at + 1}: ${JSON.stringify(linesA[at] ?? '<end>')} vs ${JSON.stringify(linesB[at] ?? '<end>')}`;
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const relative = path.relative(process.cwd(), COLLECTION_FILE);
  const text = await renderCollection();
  // A second conversion guards the promise of byte-stable output (a new random value would show here).
  const again = await renderCollection();
  if (text !== again) {
    console.error(`postman: two conversions of openapi.yaml differ (${firstDifference(text, again)}); fix the non-determinism first.`);
    return 1;
  }
  let committed: string | undefined;
  try {
    committed = readFileSync(COLLECTION_FILE, 'utf8');
  } catch {
    committed = undefined;
  }
  if (check) {
    if (committed === text) {
      console.log(`${relative} is fresh.`);
      return 0;
    }
    const why = committed === undefined ? 'is missing' : `is stale (${firstDifference(committed, text)})`;
    console.error(`${relative} ${why}; run \`npm run postman\` and commit it.`);
    return 1;
  }
  mkdirSync(path.dirname(COLLECTION_FILE), { recursive: true });
  writeFileSync(COLLECTION_FILE, text);
  console.log(committed === text ? `${relative} unchanged.` : `Wrote ${relative}.`);
  return 0;
}

if (import.meta.main) process.exitCode = await main();
