/**
 * Worlds back to files: a world changed by its builders, exported in the package format, serves
 * the same rooms, exits and items from a fresh server (the round trip), and `mud-server
 * world-check` names the file and key of what is wrong in a package. The round trip runs on
 * both databases; the command line runs as a child process on SQLite (cli.test.ts does the same).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { ON_SQLITE, skipBecause } from '../helpers/needs.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { exportWorld } from '../../src/services/building/world-export.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';
const run = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `mud-server <args>` as a child process with only the given MUD_* variables. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MUD_') && name !== 'DATABASE_URL'));
  try {
    const { stdout, stderr } = await run(process.execPath, [path.resolve('src/cli.ts'), ...args], { env: { ...clean, MUD_LOG_LEVEL: 'warn', ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Every room with its exits and the names of the items lying in it, as the building API reads them. */
async function worldShape(server: TestServer, session: string): Promise<unknown[]> {
  const list = await server.get(`${W}/rooms`, bearer(session));
  expect(list.status, list.text).to.equal(200);
  const rooms = [];
  for (const room of list.body.rooms as Array<{ id: string }>) {
    const full = (await server.get(`${W}/rooms/${room.id}`, bearer(session))).body;
    rooms.push({ id: full.id, zone: full.zone, name: full.name, description: full.description, exits: full.exits, items: full.items.map((i: { name: string; description: string }) => `${i.name}: ${i.description}`) });
  }
  return rooms;
}

/** Changes a builder makes: a dug cellar with an item, a renamed package item moved, a deleted room, a description. */
async function build(server: TestServer, session: string): Promise<void> {
  const send = async (method: string, url: string, body?: unknown): Promise<void> => {
    const res = await server.request(method, url, body, bearer(session));
    expect(res.status, `${method} ${url}: ${res.text}`).to.be.within(200, 299);
  };
  await send('POST', `${W}/rooms`, { id: 'lamplit_cellar', name: 'Lamplit Cellar', description: 'A low brick cellar.' });
  await send('POST', `${W}/rooms/sooty_heron_taproom/exits`, { direction: 'down', to: 'lamplit_cellar', two_way: true, version: 1 });
  await send('POST', `${W}/rooms/lamplit_cellar/exits`, { direction: 'east', to: 'bell_chamber', version: 2 });
  await send('POST', `${W}/rooms/lamplit_cellar/items`, { name: 'Dusty Lantern', description: 'A tin lantern.' });
  const penny = (await server.get(`${W}/rooms/lockkeepers_square`, bearer(session))).body.items[0];
  await send('PATCH', `${W}/items/${penny.id}`, { version: 1, name: 'Bent Penny', room_id: 'lamplit_cellar' });
  await send('PATCH', `${W}/rooms/chandlers_row`, { version: 1, description: 'Candles everywhere.' });
  await send('DELETE', `${W}/rooms/weathercock_ledge?version=1`);
}

describe(`world export round trip (${DB_NAME})`, function () {
  let server: TestServer;
  let fresh: TestServer | undefined;
  let session: string;
  const root = mkdtempSync(path.join(tmpdir(), 'mud-export-'));
  before(async () => {
    server = await startTestServer();
    session = await sessionFor(server, 'mason', 'superuser');
    await build(server, session);
  });
  after(async () => {
    await fresh?.close();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves the same world from the exported package', async () => {
    const world = server.services.worlds.get('emberwick')!;
    const written = await exportWorld(world, path.resolve('worlds/emberwick'), await server.services.build.exportItems('emberwick'), path.join(root, 'emberwick'));
    expect(written.rooms).to.equal(18);
    cpSync(path.resolve('worlds/hollow_spire'), path.join(root, 'hollow_spire'), { recursive: true });
    const before = await worldShape(server, session);
    expect(JSON.stringify(before)).to.contain('Bent Penny').and.contain('Dusty Lantern').and.not.contain('weathercock_ledge');
    fresh = await startTestServer({ env: { MUD_WORLDS_ROOT: root } });
    const freshSession = await sessionFor(fresh, 'mason', 'superuser');
    expect(await worldShape(fresh, freshSession)).to.deep.equal(before);
    expect((await cli(['world-check', path.join(root, 'emberwick')])).code).to.equal(0);
  });

  it('refuses to write into a folder that is not empty', async () => {
    const world = server.services.worlds.get('emberwick')!;
    const items = await server.services.build.exportItems('emberwick');
    let error: Error | undefined;
    await exportWorld(world, path.resolve('worlds/emberwick'), items, path.join(root, 'emberwick')).catch((err: Error) => (error = err));
    expect(error?.message).to.equal(`${path.join(root, 'emberwick')}: the export folder must be empty`);
  });
});

describe('mud-server world-export and world-check (SQLite, child processes)', function () {
  const root = mkdtempSync(path.join(tmpdir(), 'mud-world-cli-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('world-export writes the world as it now is from the database', async function () {
    if (usePostgres) skipBecause(this, ON_SQLITE);
    const server = await startTestServer();
    try {
      const session = await sessionFor(server, 'mason', 'superuser');
      await build(server, session);
      const out = path.join(root, 'exported', 'emberwick');
      const res = await cli(['world-export', 'emberwick', out], { MUD_DB_PATH: server.config.database.path, MUD_WORLDS_ROOT: path.resolve('worlds') });
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.equal(`Exported world 'emberwick' to ${out}: 18 rooms, 11 items in rooms.\n`);
      const zone = JSON.parse(readFileSync(path.join(out, 'zones', 'canal_quarter.json'), 'utf8'));
      expect(zone.rooms.lamplit_cellar).to.deep.include({ name: 'Lamplit Cellar', exits: { up: 'sooty_heron_taproom', east: 'bellwatch:bell_chamber' } });
      expect(zone.rooms.chandlers_row.description).to.equal('Candles everywhere.');
      const unknown = await cli(['world-export', 'atlantis', path.join(root, 'nowhere')], { MUD_DB_PATH: server.config.database.path });
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.contain("mud-server: World 'atlantis' not found");
    } finally {
      await server.close();
    }
  });

  /** A copy of emberwick with one zone file edited. */
  function brokenCopy(name: string, edit: (zone: any, world: any) => void): string {
    const dir = path.join(root, name, 'emberwick');
    cpSync(path.resolve('worlds/emberwick'), dir, { recursive: true });
    const zoneFile = path.join(dir, 'zones', 'canal_quarter.json');
    const worldFile = path.join(dir, 'world.json');
    const zone = JSON.parse(readFileSync(zoneFile, 'utf8'));
    const world = JSON.parse(readFileSync(worldFile, 'utf8'));
    edit(zone, world);
    writeFileSync(zoneFile, JSON.stringify(zone));
    writeFileSync(worldFile, JSON.stringify(world));
    return dir;
  }

  it('world-check passes a sound package and names file and key of each problem', async () => {
    const sound = await cli(['world-check', path.resolve('worlds/emberwick')]);
    expect(sound).to.deep.include({ code: 0, stdout: "World 'emberwick' is sound: 18 rooms in 5 zones, 12 items.\n" });

    const cases: Array<[string, (zone: any, world: any) => void, string]> = [
      ['broken-exit', (zone) => (zone.rooms.chandlers_row.exits.north = 'nowhere'), "zones/canal_quarter.json: rooms.chandlers_row.exits.north: unknown room 'nowhere'"],
      ['duplicate', (zone) => (zone.rooms.bell_stair = { ...zone.rooms.chandlers_row, id: 'bell_stair' }), "zones/bellwatch.json: rooms.bell_stair: duplicate room id 'bell_stair'"],
      ['no-spawn', (_zone, world) => (world.default_spawn.room = 'nowhere'), "world.json: default_spawn.room: unknown room 'nowhere' in zone 'canal_quarter'"],
    ];
    for (const [name, edit, message] of cases) {
      const dir = brokenCopy(name, edit);
      const res = await cli(['world-check', dir]);
      expect(res.code, name).to.equal(1);
      expect(res.stderr, name).to.contain(`error: ${path.join(dir, message.split(':')[0]!)}`).and.contain(message.slice(message.indexOf(':')));
    }
  });

  it('world-check warns of rooms no walk from the spawn reaches, as the server accepts them (issue 35): exit 0', async () => {
    const dir = brokenCopy('unreachable', (zone) => (zone.rooms.chandlers_row.exits = { west: 'lockkeepers_square', up: 'bellwatch:bell_stair' }));
    const res = await cli(['world-check', dir]);
    expect(res.code).to.equal(0);
    expect(res.stderr).to.contain(`warning: ${path.join(dir, 'zones/canal_quarter.json')}: rooms.sooty_heron_taproom: unreachable from the default spawn room 'lockkeepers_square'`);
    expect(res.stdout).to.match(/^World 'emberwick' is sound \(\d+ warnings?\): /);
  });

  it('world-check compiles every script and names the file and line of a syntax error', async () => {
    const dir = brokenCopy('bad-script', () => {});
    writeFileSync(path.join(dir, 'scripts', 'maud.js'), 'function onEnter(actor) {\n  self.say("hello";\n}\n');
    const res = await cli(['world-check', dir]);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(new RegExp(`^error: ${path.join(dir, 'scripts', 'maud.js').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: npcs\\.maud\\.script: SyntaxError: `, 'm'));
  });
});
