/**
 * The client flow through the SDK that @hey-api/openapi-ts generates from openapi.yaml.
 *
 * `npm run clients` generates the SDK into <tmp>/ts-client, copies this file to <tmp>/, type-checks
 * both with tsc and runs `node <tmp>/flow-hey-api.ts <base_url>`. The `./ts-client` import
 * therefore resolves only there, not beside this file. Only the generated functions and types
 * are used (no casts, no hand-written request shapes), so a contract change that breaks
 * TypeScript clients fails the type check or the run.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { client } from './ts-client/client.gen.ts';
import {
  createCharacter,
  getRoomChat,
  getStatus,
  listCharacters,
  login,
  logout,
  register,
  runCommand,
  selectCharacter,
} from './ts-client/index.ts';

const PASSWORD = 'Quiet-Lantern-42';
const WORLD = 'emberwick';

/** A generated SDK call's result: `data` on success, `error` otherwise. */
interface SdkResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Asserts a 200 and narrows to the typed body. */
async function ok<T>(what: string, call: Promise<SdkResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  assert.equal(response.status, 200, `${what}: ${response.status} ${JSON.stringify(error)}`);
  assert.ok(data !== undefined, `${what}: 200 without a body`);
  console.log(`  hey-api: ${what} -> ${response.status}`);
  return data;
}

const baseUrl = process.argv[2];
if (!baseUrl) throw new Error('usage: flow-hey-api.ts <base_url>');
client.setConfig({ baseUrl });

// Letters and digits, 14 characters: inside the 2..20 the contract allows.
const username = `ts${randomBytes(6).toString('hex')}`;
const registered = await ok('register', register({ body: { username, password: PASSWORD, password_confirm: PASSWORD } }));
assert.equal(registered.success, true);

const session = await ok('login', login({ body: { username, password: PASSWORD } }));
assert.equal(session.role, 'player');
assert.ok(session.available_worlds.some((w) => w.id === WORLD), 'login: emberwick is not offered');
const sessionId = session.session_id;

// Set once: the SDK sends it as `Authorization: Bearer` on every operation that declares
// sessionBearer, so no call below sends session_id itself (except the /chat and /status paths).
client.setConfig({ auth: () => sessionId });

const empty = await ok('list characters', listCharacters({ query: { world_id: WORLD } }));
assert.deepEqual(empty.characters, []);

const created = await ok('create character', createCharacter({ body: { world_id: WORLD } }));
assert.equal(created.world_id, WORLD);
assert.notEqual(created.character_name, '');

const listed = await ok('list characters', listCharacters({ query: { world_id: WORLD } }));
assert.deepEqual(
  listed.characters.map((c) => [c.id, c.name]),
  [[created.character_id, created.character_name]],
);

const selected = await ok('select character', selectCharacter({ body: { character_id: created.character_id } }));
assert.equal(selected.character_name, created.character_name);

const look = await ok('look', runCommand({ body: { command: 'look' } }));
assert.equal(look.success, true);
assert.match(look.message, /\[Exits\]/);
assert.equal(look.room?.id, 'lockkeepers_square');

const said = await ok('say hello', runCommand({ body: { command: 'say hello' } }));
assert.equal(said.success, true);

const chat = await ok('chat', getRoomChat({ path: { session_id: sessionId } }));
assert.ok(
  chat.messages.some((m) => m.sender === created.character_name && m.channel === 'say' && m.text === 'hello'),
  `chat: 'hello' missing from ${JSON.stringify(chat.messages)}`,
);

const status = await ok('status', getStatus({ path: { session_id: sessionId } }));
assert.ok(status.active_players.includes(created.character_name), `status: ${JSON.stringify(status.active_players)}`);
assert.equal(typeof status.current_room, 'string');

const bye = await ok('logout', logout());
assert.equal(bye.success, true);

// The session is closed: the same client now gets the documented 401.
const after = await listCharacters();
assert.equal(after.response.status, 401);
assert.deepEqual(after.error, { detail: 'Invalid or expired session' });
console.log('  hey-api: flow passed');
