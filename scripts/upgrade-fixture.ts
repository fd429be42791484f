/**
 * Writes this release's upgrade fixture (test/fixtures/upgrade/<name>/): a database the real
 * server wrote through its API and command line, with a row in every table, for
 * test/integration/upgrade.test.ts to start every later release on (README, "Upgrades").
 *
 *   node scripts/upgrade-fixture.ts [name]     (default: <version>-<latest migration's date>)
 *
 * The server runs on a throw-away PostgreSQL database next to MUD_FIXTURE_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test): only there do the shared rate-limit windows live in
 * a table. While it serves, with event streams open, `copy-db` copies it into the fixture's
 * SQLite file (`mud.db`). `facts.json` says what was written (accounts with their passwords,
 * characters, live session tokens, chat, building, policy) and each table's row count; `worlds/`
 * holds the packages it was served with: the shipped ones, emberwick with its axis engine on
 * (so that chat moves axes and writes the ledger).
 *
 * A later release keeps this folder as it is and adds its own with the same script.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { MIGRATION_NAMES } from '../src/db/migrations/index.ts';
import { VERSION } from '../src/version.ts';
import { repoRoot, startFreshServer } from './serve-fresh.ts';

const PASSWORD = 'Quiet-Lantern-42';
const ROOT_PASSWORD = 'Copper-Heron-Tide-9';
const CLI = path.join(repoRoot, 'src', 'cli.ts');

interface Account {
  username: string;
  password: string;
  role: string;
  /** How the account came to be, and what became of it. */
  kind: 'superuser' | 'admin' | 'worldbuilder' | 'player' | 'temporary' | 'made_permanent' | 'guest' | 'banned';
}

interface Character {
  id: number;
  name: string;
  world_id: string;
  owner: string;
}

const args = process.argv.slice(2);
const name = args[0] ?? `${VERSION}-${MIGRATION_NAMES.at(-1)!.slice(0, 8)}`;
const out = path.join(repoRoot, 'test', 'fixtures', 'upgrade', name);
if (existsSync(out)) {
  console.error(`${path.relative(repoRoot, out)} exists: a release's fixture is never rewritten; name a new one.`);
  process.exit(1);
}

const base = process.env.MUD_FIXTURE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const database = `mud_fixture_${randomBytes(6).toString('hex')}`;
const url = Object.assign(new URL(base), { pathname: `/${database}` }).href;
const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
await admin.raw('CREATE DATABASE ??', [database]);

const work = mkdtempSync(path.join(tmpdir(), 'mud-fixture-'));
const worldsRoot = path.join(work, 'worlds');
cpSync(path.join(repoRoot, 'worlds'), worldsRoot, { recursive: true });
const emberwick = path.join(worldsRoot, 'emberwick', 'world.json');
writeFileSync(emberwick, JSON.stringify({ ...JSON.parse(readFileSync(emberwick, 'utf8')), axis_engine: { enabled: true } }, null, 2));

const env: NodeJS.ProcessEnv = {
  DATABASE_URL: url,
  MUD_WORLDS_ROOT: worldsRoot,
  MUD_BCRYPT_ROUNDS: '10',
  // On, so that the shared limit windows are written; roomy, so that the script stays under them.
  MUD_RATE_LIMIT_ENABLED: 'true',
  MUD_RATE_LIMIT_REGISTER_PER_ADDRESS: '100',
  MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '100',
};

async function cli(command: string[], extra: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...command], {
    cwd: repoRoot,
    env: { ...process.env, MUD_CONFIG: path.join(work, 'server.ini'), MUD_POLICY_EXPORTS_ROOT: path.join(work, 'policy-exports'), ...env, ...extra },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

const accounts: Account[] = [];
const characters: Character[] = [];
const sessions: Array<{ username: string; token: string; character: string | null }> = [];
const chat: Array<{ world_id: string; sender: string; command: string }> = [];

writeFileSync(path.join(work, 'server.ini'), '');
await cli(['create-superuser'], { MUD_ADMIN_USER: 'root', MUD_ADMIN_PASSWORD: ROOT_PASSWORD });
const server = await startFreshServer({ workDir: work, env });
const streams: AbortController[] = [];
try {
  async function call(method: string, route: string, body?: unknown, session?: string): Promise<any> {
    const res = await fetch(server.url + route, {
      method,
      headers: { 'content-type': 'application/json', ...(session && { authorization: `Bearer ${session}` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
  const login = async (username: string, password = PASSWORD): Promise<string> => (await call('POST', '/login', { username, password })).session_id;
  const play = async (session: string, command: string): Promise<string> => {
    const answer = await call('POST', '/command', { command }, session);
    if (!answer.success) throw new Error(`${command}: ${answer.message}`);
    return answer.message;
  };

  accounts.push({ username: 'root', password: ROOT_PASSWORD, role: 'superuser', kind: 'superuser' });
  const root = await login('root', ROOT_PASSWORD);
  for (const [username, role, kind] of [['warden', 'admin', 'admin'], ['mason', 'worldbuilder', 'worldbuilder'], ['tamsin', 'player', 'player']] as const) {
    await call('POST', '/admin/user/create', { username, role, password: PASSWORD, password_confirm: PASSWORD }, root);
    accounts.push({ username, password: PASSWORD, role, kind });
  }
  for (const username of ['corin', 'odile', 'vex']) await call('POST', '/register', { username, password: PASSWORD, password_confirm: PASSWORD });
  accounts.push({ username: 'corin', password: PASSWORD, role: 'player', kind: 'temporary' });
  const warden = await login('warden');
  await call('POST', '/admin/user/manage', { action: 'make_permanent', target_username: 'odile' }, warden);
  accounts.push({ username: 'odile', password: PASSWORD, role: 'player', kind: 'made_permanent' });
  const guest = await call('POST', '/register-guest', { password: PASSWORD, password_confirm: PASSWORD, character_name: 'Wren Ashdown' });
  accounts.push({ username: guest.username, password: PASSWORD, role: 'player', kind: 'guest' });
  characters.push({ id: guest.character_id, name: 'Wren Ashdown', world_id: 'emberwick', owner: guest.username });

  // Invite-only hollow_spire: one grant through the command line, one through the API.
  await cli(['grant-world', 'tamsin', 'hollow_spire']);
  await call('POST', '/admin/user/world-access', { target_username: 'mason', world_id: 'hollow_spire', can_access: true }, warden);

  const create = async (username: string, session: string, worldId: string): Promise<Character> => {
    const made = await call('POST', '/characters/create', { world_id: worldId }, session);
    const character = { id: made.character_id, name: made.character_name, world_id: worldId, owner: username };
    characters.push(character);
    return character;
  };
  const select = (session: string, character: Character) => call('POST', '/characters/select', { character_id: character.id, world_id: character.world_id }, session);

  const tamsin = await login('tamsin');
  const tamsinEmber = await create('tamsin', tamsin, 'emberwick');
  const tamsinSpire = await create('tamsin', tamsin, 'hollow_spire');
  const corin = await login('corin');
  const corinEmber = await create('corin', corin, 'emberwick');
  const odile = await login('odile');
  const odileEmber = await create('odile', odile, 'emberwick');
  const mason = await login('mason');
  const masonEmber = await create('mason', mason, 'emberwick');
  const masonSpire = await create('mason', mason, 'hollow_spire');
  const vex = await login('vex');
  await create('vex', vex, 'emberwick');
  const wren = await login(guest.username);
  await select(wren, characters[0]!);

  // Chat between characters standing together: the axis engine moves their axes and writes the ledger.
  for (const [session, character] of [[tamsin, tamsinEmber], [corin, corinEmber], [odile, odileEmber], [mason, masonEmber]] as const) await select(session, character);
  const say = async (session: string, sender: string, worldId: string, command: string): Promise<void> => {
    await play(session, command);
    chat.push({ world_id: worldId, sender, command });
  };
  await say(tamsin, tamsinEmber.name, 'emberwick', 'say The locks are turning again.');
  await say(corin, corinEmber.name, 'emberwick', 'yell Who rang the bell?');
  await say(odile, odileEmber.name, 'emberwick', `whisper ${corinEmber.name} Meet me at the wharf.`);
  await say(mason, masonEmber.name, 'emberwick', 'emote dusts off a trowel.');
  await say(tamsin, tamsinEmber.name, 'emberwick', `tell ${odileEmber.name} The ledger balances.`);
  await say(corin, corinEmber.name, 'emberwick', 'ooc brb, tea');
  await say(wren, 'Wren Ashdown', 'emberwick', 'say Hello, square.');

  // Items moved: taken, carried elsewhere, dropped; one kept in hand.
  await play(corin, 'get Canal Penny');
  await play(corin, 'east');
  await play(corin, 'get Tallow Candle');
  await play(corin, 'drop Canal Penny');
  await play(tamsin, 'west');
  await play(tamsin, 'get Tin Whistle');

  // A second world.
  await select(mason, masonSpire);
  await say(mason, masonSpire.name, 'hollow_spire', 'say Anyone up the stairs?');
  const tamsinSpireSession = await login('tamsin');
  await select(tamsinSpireSession, tamsinSpire);
  await say(tamsinSpireSession, tamsinSpire.name, 'hollow_spire', 'say Only the wind.');
  await select(mason, masonEmber);

  // Building: a room, its two-way exit, an item created and moved, a room renamed, an @ command.
  const room = await call('POST', '/api/worlds/emberwick/rooms', { id: 'fixture_cellar', zone: 'canal_quarter', name: 'Fixture Cellar', description: 'A cellar the upgrade fixture dug.' }, mason);
  const square = await call('GET', '/api/worlds/emberwick/rooms/lockkeepers_square', undefined, mason);
  await call('POST', '/api/worlds/emberwick/rooms/lockkeepers_square/exits', { direction: 'down', to: 'fixture_cellar', two_way: true, version: square.version }, mason);
  const item = await call('POST', '/api/worlds/emberwick/rooms/fixture_cellar/items', { name: 'Fixture Lantern', description: 'A lantern that lights old rows.' }, mason);
  await call('PATCH', `/api/worlds/emberwick/items/${item.id}`, { version: item.version, room_id: 'lockkeepers_square' }, mason);
  const cellar = await call('GET', '/api/worlds/emberwick/rooms/fixture_cellar', undefined, mason);
  await call('PATCH', '/api/worlds/emberwick/rooms/fixture_cellar', { version: cellar.version, name: 'Old Fixture Cellar' }, mason);
  await play(mason, '@create Brass Plumb Bob');
  const shed = await call('POST', '/api/worlds/emberwick/rooms', { id: 'fixture_shed', zone: 'canal_quarter', name: 'Fixture Shed', description: 'Dug and filled in again.' }, mason);
  await call('DELETE', `/api/worlds/emberwick/rooms/fixture_shed?version=${shed.version}`, undefined, mason);

  // Policies: a variant written, validated, activated; a publish run.
  const policyId = 'prompt:fixture.notes:greeting';
  const variant = { schema_version: '1.0', policy_version: 1, status: 'draft', content: { text: 'Welcome back to Emberwick.' } };
  await call('PUT', `/api/policies/${encodeURIComponent(policyId)}/variants/v1`, variant, root);
  await call('POST', `/api/policies/${encodeURIComponent(policyId)}/validate?variant=v1`, variant, root);
  await call('POST', '/api/policy-activations', { world_id: 'emberwick', client_profile: 'mobile', policy_id: policyId, variant: 'v1' }, root);
  const publish = await call('POST', '/api/policy-publish', { world_id: 'emberwick', client_profile: null }, root);

  // A failed login (its limit window), a ban, a logout.
  await fetch(`${server.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'tamsin', password: 'not-her-password' }) });
  await call('POST', '/admin/user/manage', { action: 'ban', target_username: 'vex' }, warden);
  accounts.push({ username: 'vex', password: PASSWORD, role: 'player', kind: 'banned' });
  await call('POST', '/logout', {}, tamsinSpireSession);

  // Presence: two streams open while the copy is taken (their leases), one opened and closed (disconnected).
  const openStream = async (session: string): Promise<AbortController> => {
    const controller = new AbortController();
    const res = await fetch(`${server.url}/events/${session}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    void (async () => {
      while (!(await reader.read().catch(() => ({ done: true }))).done);
    })();
    return controller;
  };
  streams.push(await openStream(tamsin), await openStream(corin));
  (await openStream(odile)).abort();

  for (const [username, token, character] of [
    ['root', root, null],
    ['warden', warden, null],
    ['tamsin', tamsin, tamsinEmber.name],
    ['corin', corin, corinEmber.name],
    ['odile', odile, odileEmber.name],
    ['mason', mason, masonEmber.name],
    [guest.username, wren, 'Wren Ashdown'],
  ] as const) sessions.push({ username, token, character });

  // The write path of every later release must keep all of it: the copy, taken while it serves.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const writtenAt = new Date();
  mkdirSync(out, { recursive: true });
  const report = await cli(['copy-db', '--to', path.join(out, 'mud.db')]);
  rmSync(path.join(out, 'mud.db-serving'), { force: true });
  const tables: Record<string, number> = {};
  for (const line of report.split('\n')) {
    const match = /^(\w+)\s+(\d+)\s+(\d+)\s+[0-9a-f]{16}\s+same$/.exec(line);
    if (match) tables[match[1]!] = Number(match[2]);
  }
  const empty = Object.entries(tables).filter(([, rows]) => rows === 0).map(([table]) => table);
  if (empty.length > 0) throw new Error(`Tables left empty: ${empty.join(', ')}`);
  cpSync(worldsRoot, path.join(out, 'worlds'), { recursive: true });
  const facts = {
    release: VERSION,
    migrations: MIGRATION_NAMES,
    written_at: writtenAt.toISOString(),
    accounts,
    characters,
    sessions,
    chat,
    building: { world_id: 'emberwick', room_id: room.id, deleted_room_id: shed.id, room_name: 'Old Fixture Cellar', item_name: 'Fixture Lantern', item_room: 'lockkeepers_square' },
    policy: { policy_id: policyId, variant: 'v1', world_id: 'emberwick', client_profile: 'mobile', publish_run_id: publish.publish_run_id ?? publish.id },
    tables,
  };
  writeFileSync(path.join(out, 'facts.json'), `${JSON.stringify(facts, null, 2)}\n`);
  process.stdout.write(report);
  console.log(`Wrote ${path.relative(repoRoot, out)}.`);
} finally {
  for (const stream of streams) stream.abort();
  await server.stop();
  await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [database]);
  await admin.destroy();
  rmSync(work, { recursive: true, force: true });
}
