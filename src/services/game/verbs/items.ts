/**
 * Items: `get` (`take`) and `drop` move a real item row between the room and the inventory, so
 * of two players racing for one item exactly one gets it; `inventory` lists what the actor holds.
 * An item is named as players type names (a word of it, or its start, will do).
 */
import type { ItemInstance } from '../../../db/repositories/game-repository.ts';
import type { World } from '../../worlds/world-loader.ts';
import { itemName } from '../../worlds/world-overlay.ts';
import { fail, ok, type AnywhereCommand, type RoomCommand } from '../command-table.ts';
import type { GameCore } from '../game-core.ts';
import { ambiguousAnswer } from '../../../shared/name-match.ts';

/**
 * Those of `items` that bear the name `typed` means (GameCore.itemNamed: a word or the start of
 * it will do), to try in turn; or the answer when it means several names or none.
 */
function wanted(core: GameCore, world: World, items: readonly ItemInstance[], typed: string, none: string): { name: string; items: ItemInstance[] } | { answer: string } {
  const named = core.itemNamed(world, items, typed);
  if (!named) return { answer: none };
  if (!('found' in named)) return { answer: ambiguousAnswer(typed, named.ambiguous) };
  const { name } = named.found;
  return { name, items: items.filter((item) => itemName(world, item) === name) };
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
      const here = wanted(core, world, await core.repo.roomItems(world.id, room.id), args, `There is no '${args}' here.`);
      if ('answer' in here) return fail(here.answer);
      for (const item of here.items) {
        // A conditional move: of two players racing for one item, exactly one gets it.
        if (await core.repo.take(item.id, room.id, actor.characterId)) {
          await core.bus.publish({ type: 'item', worldId: world.id, roomId: room.id, characterId: actor.characterId, name: actor.name, item: here.name, action: 'take', itemRowId: item.id });
          return ok(`You picked up the ${here.name}.`);
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
      const held = wanted(core, world, await core.repo.inventory(actor.characterId), args, `You don't have a '${args}'.`);
      if ('answer' in held) return fail(held.answer);
      for (const item of held.items) {
        if (await core.repo.drop(item.id, actor.characterId, room.id)) {
          await core.bus.publish({ type: 'item', worldId: world.id, roomId: room.id, characterId: actor.characterId, name: actor.name, item: held.name, action: 'drop', itemRowId: item.id });
          return ok(`You dropped the ${held.name}.`);
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
