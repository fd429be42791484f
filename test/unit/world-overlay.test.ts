/**
 * The world as it now is (src/services/worlds/world-overlay.ts): the package with builders'
 * rooms over it, patched by the rows of each change, what a change would break, and rooms no
 * walk reaches.
 */
import { describe, it, before } from 'mocha';
import { expect } from 'chai';
import path from 'node:path';
import { loadWorld, type World } from '../../src/services/worlds/world-loader.ts';
import { itemName, LiveWorld, unreachableRooms, WorldDraft } from '../../src/services/worlds/world-overlay.ts';
import type { StoredRoom } from '../../src/db/repositories/build-repository.ts';

const room = (roomId: string, zoneId: string, exits: Record<string, string> = {}, extra: Partial<StoredRoom> = {}): StoredRoom => ({
  roomId,
  zoneId,
  name: roomId,
  description: `${roomId}.`,
  exits,
  script: null,
  deleted: false,
  version: 2,
  revision: 1,
  ...extra,
});
const rooms = (...list: StoredRoom[]) => ({ rooms: list, npcs: [] });

describe('world overlay', () => {
  let pkg: World;
  before(async () => {
    pkg = await loadWorld(path.resolve('worlds/emberwick'));
  });

  it('is the package without stored rows, sound, and keeps the package untouched', () => {
    const live = new LiveWorld(pkg);
    expect([...live.world.rooms.keys()]).to.deep.equal([...pkg.rooms.keys()]);
    expect(live.world.zones.get('old_foundry')!.roomIds).to.deep.equal(pkg.zones.get('old_foundry')!.roomIds);
    expect(live.revision).to.equal(0);
    expect(new WorldDraft(live).problems()).to.deep.equal([]);
    expect(unreachableRooms(live.world)).to.deep.equal([]);
  });

  it('lays stored rooms over the package: new rooms join their zone, changed ones win, deleted ones go with the exits into them', () => {
    const live = new LiveWorld(pkg, rooms(
      room('cellar', 'canal_quarter', { up: 'sooty_heron_taproom' }),
      room('sooty_heron_taproom', 'canal_quarter', { west: 'chandlers_row', down: 'cellar' }, { name: 'The Heron' }),
      room('pattern_loft', 'old_foundry', {}, { deleted: true }),
    ));
    const world = live.world;
    expect(world.rooms.get('sooty_heron_taproom')).to.deep.include({ name: 'The Heron', version: 2, exits: { west: 'chandlers_row', down: 'cellar' } });
    expect(world.zones.get('canal_quarter')!.roomIds.at(-1)).to.equal('cellar');
    expect(world.rooms.has('pattern_loft')).to.equal(false);
    expect(world.rooms.get('casting_floor')!.exits).to.deep.equal({ south: 'foundry_gate', west: 'slag_chute' });
    expect(world.zones.get('old_foundry')!.roomIds).to.deep.equal(['foundry_gate', 'casting_floor', 'slag_chute']);
    expect(pkg.rooms.has('pattern_loft'), 'the package stays as it was').to.equal(true);
    expect(live.revision).to.equal(1);
    expect(new WorldDraft(live).problems()).to.deep.equal([]);
  });

  it('leaves out rooms of zones the package no longer has', () => {
    expect(new LiveWorld(pkg, rooms(room('lost', 'atlantis'))).world.rooms.has('lost')).to.equal(false);
  });

  it('applies only rows newer than what it has, in any order they land', () => {
    const live = new LiveWorld(pkg);
    const newer = [room('cellar', 'canal_quarter', {}, { name: 'Wine Cellar', version: 2, revision: 3 }), room('attic', 'canal_quarter', {}, { revision: 2 })];
    live.apply(rooms(...newer));
    expect(live.revision).to.equal(3);
    // A read that began before the one above landed after it: nothing in it is newer.
    live.apply(rooms(room('cellar', 'canal_quarter', {}, { name: 'Cellar', version: 1, revision: 1 })));
    expect(live.world.rooms.get('cellar')!.name).to.equal('Wine Cellar');
    expect(live.world.zones.get('canal_quarter')!.roomIds.slice(-2)).to.deep.equal(['attic', 'cellar']);
    live.apply(rooms(room('attic', 'canal_quarter', {}, { deleted: true, revision: 4 })));
    expect(live.world.rooms.has('attic')).to.equal(false);
    expect(live.world.zones.get('canal_quarter')!.roomIds).to.not.include('attic');
  });

  it('knows the rooms leading into a room as changes come', () => {
    const live = new LiveWorld(pkg);
    const into = [...live.roomsInto('chandlers_row')];
    expect(into.length).to.be.greaterThan(0);
    for (const id of into) expect(Object.values(live.world.rooms.get(id)!.exits)).to.include('chandlers_row');
    live.apply(rooms(room('cellar', 'canal_quarter', { up: 'chandlers_row' }, { revision: 1 })));
    expect([...live.roomsInto('chandlers_row')]).to.include('cellar');
    live.apply(rooms(room('cellar', 'canal_quarter', {}, { revision: 2 })));
    expect([...live.roomsInto('chandlers_row')]).to.not.include('cellar');
  });

  it('names what a draft would break, looking only at what it wrote and the spawn rooms', () => {
    const live = new LiveWorld(pkg);
    const square = live.world.rooms.get('lockkeepers_square')!;
    const draft = new WorldDraft(live);
    draft.put({ roomId: 'lockkeepers_square', zoneId: 'canal_quarter', name: square.name, description: square.description, exits: {}, deleted: true });
    draft.put({ roomId: 'island', zoneId: 'bellwatch', name: 'x'.repeat(101), description: 'An island.', exits: { north: 'nowhere' }, deleted: false });
    const problems = draft.problems();
    expect(problems).to.include("room 'island' exit north leads to unknown room 'nowhere'");
    expect(problems).to.include("room 'island' has a name or description out of bounds");
    expect(problems).to.include("zone 'canal_quarter' lost its spawn room 'lockkeepers_square'");
    expect(problems).to.include("the default spawn room 'lockkeepers_square' is missing");
    expect(problems.some((p) => p.endsWith("has an exit to 'lockkeepers_square', which is gone"))).to.equal(true);
    expect(draft.rows().rooms.map((r) => [r.roomId, r.version, r.revision])).to.deep.equal([['lockkeepers_square', 2, 1], ['island', 1, 1]]);
    expect(live.world.rooms.has('lockkeepers_square'), 'a draft changes nothing until it is applied').to.equal(true);
    expect(draft.roomCount()).to.equal(live.world.rooms.size);
  });

  it('finds rooms no walk reaches', () => {
    expect(unreachableRooms(new LiveWorld(pkg, rooms(room('island', 'bellwatch'))).world)).to.deep.equal(['island']);
  });

  it('names an item by its row first, then its package item, then its id', () => {
    expect(itemName(pkg, { itemId: 'canal_penny', name: 'Bent Penny' })).to.equal('Bent Penny');
    expect(itemName(pkg, { itemId: 'canal_penny', name: null })).to.equal('Canal Penny');
    expect(itemName(pkg, { itemId: 'item-7', name: null })).to.equal('item-7');
  });
});
