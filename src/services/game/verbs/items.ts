/**
 * Items: `get` (`take`) and `drop` move a real item row between the room and the inventory, so
 * of two players racing for one item exactly one gets it; `inventory` lists what the actor holds.
 */
import type { ItemInstance } from '../../../db/repositories/game-repository.ts';
import type { World } from '../../worlds/world-loader.ts';
import { itemName } from '../../worlds/world-overlay.ts';
import { fail, ok, type AnywhereCommand, type RoomCommand } from '../command-table.ts';
import type { GameCore } from '../game-core.ts';

/** The item's name when it is the one wanted (any letter case). */
function named(world: World, item: ItemInstance, wanted: string): string | null {
  const name = itemName(world, item);
  return name.toLowerCase() === wanted.toLowerCase() ? name : null;
}

export function itemVerbs(core: GameCore) {
  const get: RoomCommand = {
    verbs: ['get', 'take'],
    needsRoom: true,
    usage: 'get <item>',
    summary: 'Pick up an item',
    argument: { kind: 'item_here', missing: 'Get what?' },
    help: { section: 'Actions', lines: ['/get <item>, /take <item> - Pick up an item'] },
    run: async ({ actor, world, room, args }) => {
      for (const item of await core.repo.roomItems(world.id, room.id)) {
        const name = named(world, item, args);
        // A conditional move: of two players racing for one item, exactly one gets it.
        if (name && (await core.repo.take(item.id, room.id, actor.characterId))) {
          await core.bus.publish({ type: 'item', worldId: world.id, roomId: room.id, characterId: actor.characterId, name: actor.name, item: name, action: 'take' });
          return ok(`You picked up the ${name}.`);
        }
      }
      return fail(`There is no '${args}' here.`);
    },
  };

  const drop: RoomCommand = {
    verbs: ['drop'],
    needsRoom: true,
    usage: 'drop <item>',
    summary: 'Drop an item',
    argument: { kind: 'item_carried', missing: 'Drop what?' },
    help: { section: 'Actions', lines: ['/drop <item> - Drop an item'] },
    run: async ({ actor, world, room, args }) => {
      // What lies in one room is bounded, as builders' items are: `get` and the room's lists read it all.
      if ((await core.itemsLyingIn(world.id, room.id)).length >= core.maxItemsPerRoom) return fail('There is no room to drop anything more here.');
      for (const item of await core.repo.inventory(actor.characterId)) {
        const name = named(world, item, args);
        if (name && (await core.repo.drop(item.id, actor.characterId, room.id))) {
          await core.bus.publish({ type: 'item', worldId: world.id, roomId: room.id, characterId: actor.characterId, name: actor.name, item: name, action: 'drop' });
          return ok(`You dropped the ${name}.`);
        }
      }
      return fail(`You don't have a '${args}'.`);
    },
  };

  const inventory: AnywhereCommand = {
    verbs: ['inventory', 'inv', 'i'],
    needsRoom: false,
    usage: 'inventory',
    summary: 'View your inventory',
    help: { section: 'Actions', lines: ['/inventory, /inv, /i - View your inventory'] },
    run: async ({ actor }) => ok(await core.inventoryText(actor)),
  };

  return { get, drop, inventory };
}
