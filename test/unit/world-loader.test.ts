import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { afterEach, beforeEach, describe, it } from 'mocha';
import { WorldLoadError, loadWorld, loadWorlds } from '../../src/services/worlds/world-loader.ts';
import type { World } from '../../src/services/worlds/world-loader.ts';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const WORLDS_ROOT = path.join(REPO, 'worlds');

// ---------------------------------------------------------------------------------------------
// Fixture builder: a minimal valid world as plain objects; each test mutates one thing.
// ---------------------------------------------------------------------------------------------

interface ItemSpec {
  id?: string;
  name?: string;
  description?: string;
}

interface RoomSpec {
  id?: string;
  name?: string;
  description?: string;
  exits?: Record<string, string>;
  items?: string[];
}

interface ZoneSpec {
  id?: string;
  name?: string;
  description?: string;
  spawn_room?: string;
  rooms: Record<string, RoomSpec>;
  items?: Record<string, ItemSpec>;
}

interface Fixture {
  /** Contents of world.json (anything goes, so tests can write invalid values). */
  world: Record<string, unknown>;
  /** File name (without .json) → zone object, or raw text written verbatim (for bad JSON). */
  zones: Record<string, ZoneSpec | string>;
}

/**
 * Two zones (town, forest), four rooms, one item in town and one global item, a cross-zone
 * exit pair (town:square ⇄ forest:edge) and a one-way exit (glade → square).
 */
function validFixture(): Fixture {
  return {
    world: {
      name: 'Test World',
      description: 'A world for tests.',
      version: '1.2.3',
      active: true,
      default_spawn: { zone: 'town', room: 'square' },
      zones: ['town', 'forest'],
      global_items: {
        coin: { id: 'coin', name: 'Coin', description: 'A small coin.' },
      },
    },
    zones: {
      town: {
        id: 'town',
        name: 'Town',
        description: 'A little town.',
        spawn_room: 'square',
        rooms: {
          square: {
            id: 'square',
            name: 'Town Square',
            description: 'The middle of town.',
            exits: { north: 'gate', east: 'forest:edge' },
            items: ['lamp', 'coin'],
          },
          gate: {
            id: 'gate',
            name: 'Town Gate',
            description: 'A wooden gate.',
            exits: { south: 'square' },
            items: [],
          },
        },
        items: {
          lamp: { id: 'lamp', name: 'Lamp', description: 'A brass lamp.' },
        },
      },
      forest: {
        id: 'forest',
        name: 'Forest',
        description: 'Dark trees.',
        spawn_room: 'edge',
        rooms: {
          edge: {
            id: 'edge',
            name: 'Forest Edge',
            description: 'Where the trees begin.',
            exits: { west: 'town:square', east: 'glade' },
          },
          glade: {
            id: 'glade',
            name: 'Glade',
            description: 'A sunny clearing.',
            exits: { west: 'edge', up: 'town:square' },
          },
        },
      },
    },
  };
}

function zone(fx: Fixture, id: string): ZoneSpec {
  const z = fx.zones[id];
  if (z === undefined || typeof z === 'string') throw new Error(`fixture has no zone object '${id}'`);
  return z;
}

function room(fx: Fixture, zoneId: string, roomId: string): RoomSpec {
  const r = zone(fx, zoneId).rooms[roomId];
  if (r === undefined) throw new Error(`fixture has no room '${zoneId}:${roomId}'`);
  return r;
}

/** Writes `<root>/<worldId>/world.json` and `zones/*.json`; returns the world folder. */
function writeWorld(root: string, worldId: string, fx: Fixture, worldText?: string): string {
  const dir = path.join(root, worldId);
  fs.mkdirSync(path.join(dir, 'zones'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'world.json'), worldText ?? JSON.stringify(fx.world, null, 2));
  for (const [file, z] of Object.entries(fx.zones)) {
    const text = typeof z === 'string' ? z : JSON.stringify(z, null, 2);
    fs.writeFileSync(path.join(dir, 'zones', `${file}.json`), text);
  }
  return dir;
}

async function refusal(promise: Promise<unknown>): Promise<WorldLoadError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(WorldLoadError);
    return err as WorldLoadError;
  }
  expect.fail('expected a WorldLoadError, but the world loaded');
}

/**
 * Loads the world in `dir` and asserts the refusal names `file` (relative to `dir`) and
 * every given fragment (the key path and the problem).
 */
async function expectRefused(dir: string, file: string, ...fragments: string[]): Promise<WorldLoadError> {
  const err = await refusal(loadWorld(dir));
  expect(err.message.startsWith(`${path.join(dir, file)}: `), `message names ${file}: ${err.message}`).to.equal(true);
  for (const fragment of fragments) expect(err.message).to.include(fragment);
  return err;
}

function reachableFrom(world: World, start: string): Set<string> {
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const current = world.rooms.get(queue.shift() as string);
    for (const next of Object.values(current?.exits ?? {})) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

// ---------------------------------------------------------------------------------------------

describe('world loader', () => {
  describe('shipped demo worlds', () => {
    it('loads emberwick with zones, rooms, items and exits', async () => {
      const world = await loadWorld(path.join(WORLDS_ROOT, 'emberwick'));
      expect(world.id).to.equal('emberwick');
      expect(world.name).to.equal('Emberwick');
      expect(world.active).to.equal(true);
      expect(world.zones.size).to.be.at.least(3);
      expect(world.rooms.size).to.be.at.least(12);

      const placed = [...world.rooms.values()].flatMap((r) => r.items);
      expect(placed.length).to.be.at.least(8);
      for (const itemId of placed) expect(world.items.has(itemId), itemId).to.equal(true);

      expect(world.translationLayer).to.not.equal(null);
      expect(world.translationLayer?.enabled).to.equal(false);
    });

    it('emberwick has a one-way exit, a cross-zone exit and every room reachable from the spawn', async () => {
      const world = await loadWorld(path.join(WORLDS_ROOT, 'emberwick'));
      const rooms = [...world.rooms.values()];
      const dest = (id: string) => {
        const r = world.rooms.get(id);
        expect(r, `exit target ${id}`).to.not.equal(undefined);
        return r as NonNullable<typeof r>;
      };

      const oneWay = rooms.filter((r) =>
        Object.values(r.exits).some((to) => !Object.values(dest(to).exits).includes(r.id)),
      );
      expect(oneWay.length, 'rooms with a one-way exit').to.be.at.least(1);

      const crossZone = rooms.filter((r) => Object.values(r.exits).some((to) => dest(to).zoneId !== r.zoneId));
      expect(crossZone.length, 'rooms with a cross-zone exit').to.be.at.least(1);

      const spawnZone = world.zones.get(world.defaultSpawn.zone);
      expect(spawnZone?.roomIds).to.include(world.defaultSpawn.room);
      const reached = reachableFrom(world, world.defaultSpawn.room);
      expect([...world.rooms.keys()].filter((id) => !reached.has(id)), 'unreachable rooms').to.deep.equal([]);
    });

    it('emberwick accepts both rooms shapes (old_foundry uses arrays) with resolved zone ids', async () => {
      const world = await loadWorld(path.join(WORLDS_ROOT, 'emberwick'));
      expect(world.rooms.get('foundry_gate')?.zoneId).to.equal('old_foundry');
      expect(world.rooms.get('foundry_gate')?.exits.south).to.equal('ropewalk_bridge');
      expect(world.rooms.get('lockkeepers_square')?.zoneId).to.equal('canal_quarter');
      expect(world.items.has('crucible_tongs')).to.equal(true);
    });

    it('loads hollow_spire as an invite-only world', async () => {
      const world = await loadWorld(path.join(WORLDS_ROOT, 'hollow_spire'));
      expect(world.id).to.equal('hollow_spire');
      expect(world.characterPolicy.accessMode).to.equal('invite');
    });

    it('loadWorlds returns both shipped worlds sorted by id', async () => {
      const worlds = await loadWorlds(WORLDS_ROOT);
      const ids = worlds.map((w) => w.id);
      expect(ids).to.include.members(['emberwick', 'hollow_spire']);
      expect(ids).to.deep.equal([...ids].sort());
    });
  });

  describe('fixtures', () => {
    let tmp: string;
    let dir: string;
    let fx: Fixture;
    /** Writes the (mutated) fixture as world 'testworld' and returns its folder. */
    const write = (): string => {
      dir = writeWorld(tmp, 'testworld', fx);
      return dir;
    };

    beforeEach(() => {
      tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mud-world-'));
      fx = validFixture();
    });

    afterEach(() => {
      fs.rmSync(tmp, { recursive: true, force: true });
    });

    describe('valid packages', () => {
      it('loads the minimal valid fixture', async () => {
        const world = await loadWorld(write());
        expect(world.id).to.equal('testworld');
        expect(world.name).to.equal('Test World');
        expect(world.version).to.equal('1.2.3');
        expect(world.active).to.equal(true);
        expect(world.defaultSpawn).to.deep.equal({ zone: 'town', room: 'square' });
        expect([...world.zones.keys()]).to.deep.equal(['town', 'forest']);
        expect(world.zones.get('forest')?.roomIds).to.deep.equal(['edge', 'glade']);
        expect(world.zones.get('forest')?.spawnRoom).to.equal('edge');
        expect(world.rooms.get('square')?.exits).to.deep.equal({ north: 'gate', east: 'edge' });
        expect(world.rooms.get('edge')?.zoneId).to.equal('forest');
        expect(world.rooms.get('square')?.items).to.deep.equal(['lamp', 'coin']);
        expect(world.rooms.get('edge')?.items).to.deep.equal([]);
        expect([...world.items.keys()].sort()).to.deep.equal(['coin', 'lamp']);
        expect(world.characterPolicy).to.deep.equal({});
        expect(world.translationLayer).to.equal(null);
        expect(world.axisEngine).to.equal(null);
      });

      it('applies defaults for optional keys', async () => {
        delete fx.world.description;
        delete fx.world.version;
        delete fx.world.active;
        delete fx.world.global_items;
        room(fx, 'town', 'square').items = ['lamp'];
        const forest = zone(fx, 'forest');
        delete forest.spawn_room;
        delete forest.name;
        delete room(fx, 'forest', 'glade').exits;
        const world = await loadWorld(write());
        expect(world.description).to.equal('');
        expect(world.version).to.equal('0.0.0');
        expect(world.active).to.equal(true);
        expect(world.zones.get('forest')?.spawnRoom).to.equal('edge');
        expect(world.zones.get('forest')?.name).to.equal('forest');
        expect(world.rooms.get('glade')?.exits).to.deep.equal({});
      });

      it('reads active: false, character_policy and feature blocks', async () => {
        fx.world.active = false;
        fx.world.character_policy = { access_mode: 'invite', naming_mode: 'manual', slot_limit_per_account: 0 };
        fx.world.translation_layer = { enabled: false, model: 'x' };
        fx.world.axis_engine = { enabled: true };
        const world = await loadWorld(write());
        expect(world.active).to.equal(false);
        expect(world.characterPolicy).to.deep.equal({ accessMode: 'invite', namingMode: 'manual', slotLimitPerAccount: 0 });
        expect(world.translationLayer).to.deep.equal({ enabled: false, model: 'x' });
        expect(world.axisEngine).to.deep.equal({ enabled: true });
      });

      it('accepts rooms and items as arrays as well as objects', async () => {
        const town = zone(fx, 'town');
        const asArrays = { ...town, rooms: Object.values(town.rooms), items: Object.values(town.items ?? {}) };
        const objectWorld = await loadWorld(write());
        fs.rmSync(dir, { recursive: true });
        fx.zones.town = JSON.stringify(asArrays);
        fx.world.global_items = [{ id: 'coin', name: 'Coin', description: 'A small coin.' }];
        const arrayWorld = await loadWorld(write());
        expect([...arrayWorld.rooms.entries()]).to.deep.equal([...objectWorld.rooms.entries()]);
        expect([...arrayWorld.items.entries()]).to.deep.equal([...objectWorld.items.entries()]);
        expect([...arrayWorld.zones.entries()]).to.deep.equal([...objectWorld.zones.entries()]);
      });

      it('loadWorlds sorts by id and skips hidden folders and plain files', async () => {
        writeWorld(tmp, 'zeta', fx);
        writeWorld(tmp, 'alpha', fx);
        writeWorld(tmp, 'mid-world_2', fx);
        fs.mkdirSync(path.join(tmp, '.hidden'));
        fs.writeFileSync(path.join(tmp, 'README.txt'), 'not a world');
        const worlds = await loadWorlds(tmp);
        expect(worlds.map((w) => w.id)).to.deep.equal(['alpha', 'mid-world_2', 'zeta']);
      });
    });

    describe('refusals in world.json', () => {
      it('bad JSON', async () => {
        dir = writeWorld(tmp, 'testworld', fx, '{ "name": "Broken", ');
        await expectRefused(dir, 'world.json', 'invalid JSON');
      });

      it('world.json that is not an object', async () => {
        dir = writeWorld(tmp, 'testworld', fx, '[1, 2]');
        await expectRefused(dir, 'world.json', 'must be an object');
      });

      it('missing world.json', async () => {
        write();
        fs.rmSync(path.join(dir, 'world.json'));
        await expectRefused(dir, 'world.json', 'missing');
      });

      it('missing name', async () => {
        delete fx.world.name;
        await expectRefused(write(), 'world.json', 'name: is required');
      });

      it('blank name', async () => {
        fx.world.name = '   ';
        await expectRefused(write(), 'world.json', 'name: must be a non-empty string');
      });

      it('missing zones', async () => {
        delete fx.world.zones;
        await expectRefused(write(), 'world.json', 'zones: must be a non-empty list');
      });

      it('empty zones', async () => {
        fx.world.zones = [];
        await expectRefused(write(), 'world.json', 'zones: must be a non-empty list');
      });

      it('invalid zone id in zones', async () => {
        fx.world.zones = ['town', 'Forest Zone'];
        await expectRefused(write(), 'world.json', 'zones[1]', 'zone id');
      });

      it('zone listed twice', async () => {
        fx.world.zones = ['town', 'forest', 'town'];
        await expectRefused(write(), 'world.json', 'zones[2]', "'town' is listed twice");
      });

      it('missing default_spawn', async () => {
        delete fx.world.default_spawn;
        await expectRefused(write(), 'world.json', 'default_spawn: must be an object');
      });

      it('default_spawn without a room', async () => {
        fx.world.default_spawn = { zone: 'town' };
        await expectRefused(write(), 'world.json', 'default_spawn.room: is required');
      });

      it('default_spawn room that does not exist', async () => {
        fx.world.default_spawn = { zone: 'town', room: 'castle' };
        await expectRefused(write(), 'world.json', 'default_spawn.room', "unknown room 'castle'");
      });

      it('default_spawn room that exists only in another zone', async () => {
        fx.world.default_spawn = { zone: 'town', room: 'glade' };
        await expectRefused(write(), 'world.json', 'default_spawn.room', "unknown room 'glade'");
      });

      it('default_spawn zone that does not exist', async () => {
        fx.world.default_spawn = { zone: 'swamp', room: 'square' };
        await expectRefused(write(), 'world.json', 'default_spawn.zone', "unknown zone 'swamp'");
      });

      it('active that is not a boolean', async () => {
        fx.world.active = 'yes';
        await expectRefused(write(), 'world.json', 'active: must be true or false');
      });

      it("character_policy.access_mode 'secret'", async () => {
        fx.world.character_policy = { access_mode: 'secret' };
        await expectRefused(write(), 'world.json', 'character_policy.access_mode', "'open' or 'invite'");
      });

      it('character_policy.naming_mode that is unknown', async () => {
        fx.world.character_policy = { naming_mode: 'random' };
        await expectRefused(write(), 'world.json', 'character_policy.naming_mode', "'generated' or 'manual'");
      });

      it('character_policy.slot_limit_per_account -1', async () => {
        fx.world.character_policy = { slot_limit_per_account: -1 };
        await expectRefused(write(), 'world.json', 'character_policy.slot_limit_per_account', 'whole number');
      });

      it('character_policy.slot_limit_per_account 1.5', async () => {
        fx.world.character_policy = { slot_limit_per_account: 1.5 };
        await expectRefused(write(), 'world.json', 'character_policy.slot_limit_per_account', 'whole number');
      });

      it('character_policy that is not an object', async () => {
        fx.world.character_policy = 'open';
        await expectRefused(write(), 'world.json', 'character_policy: must be an object');
      });

      it('translation_layer that is not an object', async () => {
        fx.world.translation_layer = true;
        await expectRefused(write(), 'world.json', 'translation_layer: must be an object');
      });

      it('global item missing name', async () => {
        fx.world.global_items = { coin: { id: 'coin', description: 'A small coin.' } };
        await expectRefused(write(), 'world.json', 'global_items.coin.name: is required');
      });

      it('item names and room ids too long for an event payload', async () => {
        fx.world.global_items = { coin: { id: 'coin', name: 'C'.repeat(101), description: 'A small coin.' } };
        await expectRefused(write(), 'world.json', 'global_items.coin.name: must be at most 100 characters');
        fx = validFixture();
        const long = 'r'.repeat(65);
        zone(fx, 'town').rooms = { [long]: { ...room(fx, 'town', 'gate'), id: long, exits: {} } };
        await expectRefused(write(), 'zones/town.json', `rooms.${long}.id: must be at most 64 characters`);
      });

      it('global item id differing from its key', async () => {
        fx.world.global_items = { coin: { id: 'penny', name: 'Coin', description: 'A small coin.' } };
        await expectRefused(write(), 'world.json', 'global_items.coin.id', "'penny' differs from its key 'coin'");
      });

      it('duplicate global item id (array shape)', async () => {
        const coin = { id: 'coin', name: 'Coin', description: 'A small coin.' };
        fx.world.global_items = [coin, { ...coin, name: 'Other Coin' }];
        await expectRefused(write(), 'world.json', 'global_items.coin', "duplicate item id 'coin'");
      });
    });

    describe('refusals in zone files', () => {
      it('bad JSON', async () => {
        fx.zones.forest = '{ "id": "forest", rooms: }';
        await expectRefused(write(), 'zones/forest.json', 'invalid JSON');
      });

      it('missing zone file', async () => {
        delete fx.zones.forest;
        await expectRefused(write(), 'zones/forest.json', 'file is missing or unreadable');
      });

      it('zone id differing from its file name', async () => {
        zone(fx, 'forest').id = 'woods';
        await expectRefused(write(), 'zones/forest.json', 'id:', "'woods' differs from the file name 'forest'");
      });

      it('zone without rooms', async () => {
        zone(fx, 'forest').rooms = {};
        await expectRefused(write(), 'zones/forest.json', 'rooms:', 'at least one room');
      });

      it('room missing description', async () => {
        delete room(fx, 'town', 'gate').description;
        await expectRefused(write(), 'zones/town.json', 'rooms.gate.description: is required');
      });

      it('room missing name', async () => {
        delete room(fx, 'forest', 'glade').name;
        await expectRefused(write(), 'zones/forest.json', 'rooms.glade.name: is required');
      });

      it('room id differing from its key', async () => {
        room(fx, 'town', 'gate').id = 'portal';
        await expectRefused(write(), 'zones/town.json', 'rooms.gate.id', "'portal' differs from its key 'gate'");
      });

      it('room in array shape without an id', async () => {
        const forest = zone(fx, 'forest');
        const rooms = Object.values(forest.rooms).map((r) => ({ ...r }));
        delete rooms[1]?.id;
        fx.zones.forest = JSON.stringify({ ...forest, rooms });
        await expectRefused(write(), 'zones/forest.json', 'rooms[1].id: is required');
      });

      it('item missing name', async () => {
        const items = zone(fx, 'town').items ?? {};
        delete items.lamp?.name;
        await expectRefused(write(), 'zones/town.json', 'items.lamp.name: is required');
      });

      it('item missing description', async () => {
        const items = zone(fx, 'town').items ?? {};
        delete items.lamp?.description;
        await expectRefused(write(), 'zones/town.json', 'items.lamp.description: is required');
      });

      it('duplicate room id across two zones', async () => {
        zone(fx, 'forest').rooms.gate = { id: 'gate', name: 'Forest Gate', description: 'Another gate.' };
        const err = await expectRefused(write(), 'zones/forest.json', 'rooms.gate', "duplicate room id 'gate'");
        expect(err.message).to.include(path.join(dir, 'zones', 'town.json'));
      });

      it('duplicate room id within one zone (array shape)', async () => {
        const town = zone(fx, 'town');
        const rooms = [...Object.values(town.rooms), { id: 'gate', name: 'Again', description: 'Again.' }];
        fx.zones.town = JSON.stringify({ ...town, rooms });
        await expectRefused(write(), 'zones/town.json', 'rooms.gate', "duplicate room id 'gate'");
      });

      it('duplicate item id across two zones', async () => {
        zone(fx, 'forest').items = { lamp: { id: 'lamp', name: 'Other Lamp', description: 'Another lamp.' } };
        const err = await expectRefused(write(), 'zones/forest.json', 'items.lamp', "duplicate item id 'lamp'");
        expect(err.message).to.include(path.join(dir, 'zones', 'town.json'));
      });

      it('zone item duplicating a global item id', async () => {
        zone(fx, 'forest').items = { coin: { id: 'coin', name: 'Coin', description: 'Another coin.' } };
        const err = await expectRefused(write(), 'zones/forest.json', 'items.coin', "duplicate item id 'coin'");
        expect(err.message).to.include(path.join(dir, 'world.json'));
      });

      it('exit to an unknown room', async () => {
        room(fx, 'town', 'gate').exits = { south: 'square', north: 'castle' };
        await expectRefused(write(), 'zones/town.json', 'rooms.gate.exits.north', "unknown room 'castle'");
      });

      it('local exit to a room that exists only in another zone', async () => {
        room(fx, 'town', 'gate').exits = { south: 'square', east: 'glade' };
        await expectRefused(write(), 'zones/town.json', 'rooms.gate.exits.east', "unknown room 'glade'");
      });

      it("exit 'zone:room' to an unknown zone", async () => {
        room(fx, 'forest', 'glade').exits = { west: 'edge', down: 'swamp:bog' };
        await expectRefused(write(), 'zones/forest.json', 'rooms.glade.exits.down', "unknown zone 'swamp'");
      });

      it("exit 'zone:room' where the room exists but in another zone", async () => {
        room(fx, 'town', 'square').exits = { north: 'gate', east: 'forest:gate' };
        await expectRefused(write(), 'zones/town.json', 'rooms.square.exits.east', "unknown room 'forest:gate'");
      });

      it("unknown exit direction 'northeast'", async () => {
        room(fx, 'forest', 'edge').exits = { west: 'town:square', northeast: 'glade' };
        await expectRefused(write(), 'zones/forest.json', 'rooms.edge.exits.northeast', 'unknown direction');
      });

      it('exit target that is not a string', async () => {
        fx.zones.forest = JSON.stringify({
          ...zone(fx, 'forest'),
          rooms: { edge: { id: 'edge', name: 'Edge', description: 'Edge.', exits: { west: 42 } } },
        });
        await expectRefused(write(), 'zones/forest.json', 'rooms.edge.exits.west', "'zone:room'");
      });

      it('zone spawn_room that does not exist', async () => {
        zone(fx, 'forest').spawn_room = 'cave';
        await expectRefused(write(), 'zones/forest.json', 'spawn_room:', "unknown room 'cave'");
      });

      it('zone spawn_room that is a room of another zone', async () => {
        zone(fx, 'forest').spawn_room = 'square';
        await expectRefused(write(), 'zones/forest.json', 'spawn_room:', "unknown room 'square'");
      });

      it('room listing an unknown item', async () => {
        room(fx, 'town', 'gate').items = ['sword'];
        await expectRefused(write(), 'zones/town.json', 'rooms.gate.items[0]', "unknown item 'sword'");
      });

      it('room items that are not a list', async () => {
        fx.zones.town = JSON.stringify({
          ...zone(fx, 'town'),
          rooms: { square: { id: 'square', name: 'Square', description: 'Square.', items: 'lamp' } },
        });
        await expectRefused(write(), 'zones/town.json', 'rooms.square.items', 'must be a list');
      });
    });

    describe('refusals of the worlds root', () => {
      it('empty worlds root', async () => {
        const err = await refusal(loadWorlds(tmp));
        expect(err.message).to.include(tmp).and.to.include('no world packages found');
      });

      it('worlds root holding only hidden folders', async () => {
        writeWorld(tmp, '.draft', fx);
        const err = await refusal(loadWorlds(tmp));
        expect(err.message).to.include('no world packages found');
      });

      it('missing worlds root', async () => {
        const missing = path.join(tmp, 'nope');
        const err = await refusal(loadWorlds(missing));
        expect(err.message).to.include(missing).and.to.include('missing or unreadable');
      });

      it("a world folder with an invalid id ('Bad World')", async () => {
        writeWorld(tmp, 'good', fx);
        writeWorld(tmp, 'Bad World', fx);
        const err = await refusal(loadWorlds(tmp));
        expect(err.message.startsWith(`${path.join(tmp, 'Bad World', 'world.json')}: `), err.message).to.equal(true);
        expect(err.message).to.include("'Bad World' is not a valid world id");
      });

      it('a broken world refuses the whole root', async () => {
        writeWorld(tmp, 'alpha', fx);
        delete fx.world.name;
        writeWorld(tmp, 'beta', fx);
        const err = await refusal(loadWorlds(tmp));
        expect(err.message.startsWith(`${path.join(tmp, 'beta', 'world.json')}: name`), err.message).to.equal(true);
      });
    });
  });
});
