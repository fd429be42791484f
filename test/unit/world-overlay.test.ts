/**
 * The world as it now is (src/services/worlds/world-overlay.ts): the package with builders'
 * rooms over it, what would make it unloadable, and rooms no walk reaches.
 */
import { describe, it, before } from 'mocha';
import { expect } from 'chai';
import path from 'node:path';
import { loadWorld, type World } from '../../src/services/worlds/world-loader.ts';
import { composeWorld, itemName, unreachableRooms, worldProblems } from '../../src/services/worlds/world-overlay.ts';
import type { StoredRoom } from '../../src/db/repositories/build-repository.ts';

const room = (roomId: string, zoneId: string, exits: Record<string, string> = {}, extra: Partial<StoredRoom> = {}): StoredRoom => ({
  roomId,
  zoneId,
  name: roomId,
  description: `${roomId}.`,
  exits,
  deleted: false,
  version: 2,
  ...extra,
});

describe('world overlay', () => {
  let pkg: World;
  before(async () => {
    pkg = await loadWorld(path.resolve('worlds/emberwick'));
  });

  it('is the package itself without stored rooms, and sound', () => {
    expect(composeWorld(pkg, [])).to.equal(pkg);
    expect(worldProblems(pkg)).to.deep.equal([]);
    expect(unreachableRooms(pkg)).to.deep.equal([]);
  });

  it('lays stored rooms over the package: new rooms join their zone, changed ones win, deleted ones go with the exits into them', () => {
    const world = composeWorld(pkg, [
      room('cellar', 'canal_quarter', { up: 'sooty_heron_taproom' }),
      room('sooty_heron_taproom', 'canal_quarter', { west: 'chandlers_row', down: 'cellar' }, { name: 'The Heron' }),
      room('pattern_loft', 'old_foundry', {}, { deleted: true }),
    ]);
    expect(world.rooms.get('sooty_heron_taproom')).to.deep.include({ name: 'The Heron', version: 2, exits: { west: 'chandlers_row', down: 'cellar' } });
    expect(world.zones.get('canal_quarter')!.roomIds.at(-1)).to.equal('cellar');
    expect(world.rooms.has('pattern_loft')).to.equal(false);
    expect(world.rooms.get('casting_floor')!.exits).to.deep.equal({ south: 'foundry_gate', west: 'slag_chute' });
    expect(world.zones.get('old_foundry')!.roomIds).to.deep.equal(['foundry_gate', 'casting_floor', 'slag_chute']);
    expect(pkg.rooms.has('pattern_loft'), 'the package stays as it was').to.equal(true);
    expect(worldProblems(world)).to.deep.equal([]);
  });

  it('leaves out rooms of zones the package no longer has', () => {
    expect(composeWorld(pkg, [room('lost', 'atlantis')]).rooms.has('lost')).to.equal(false);
  });

  it('names what would make a world unloadable, and rooms no walk reaches', () => {
    const world = composeWorld(pkg, [room('lockkeepers_square', 'canal_quarter', {}, { deleted: true }), room('island', 'bellwatch', {}, { name: 'x'.repeat(101) })]);
    expect(worldProblems(world)).to.deep.equal([
      "zone 'canal_quarter' lost its spawn room 'lockkeepers_square'",
      "the default spawn room 'lockkeepers_square' is missing",
      "room 'island' has a name or description out of bounds",
    ]);
    expect(unreachableRooms(composeWorld(pkg, [room('island', 'bellwatch')]))).to.deep.equal(['island']);
  });

  it('names an item by its row first, then its package item, then its id', () => {
    expect(itemName(pkg, { itemId: 'canal_penny', name: 'Bent Penny' })).to.equal('Bent Penny');
    expect(itemName(pkg, { itemId: 'canal_penny', name: null })).to.equal('Canal Penny');
    expect(itemName(pkg, { itemId: 'item-7', name: null })).to.equal('item-7');
  });
});
