/**
 * Looking around: `look` (`l`) at the room or, with a target, `examine` (`exa`) an item here or
 * carried or a character here; `who` lists the world's other characters; `help` (`?`) the
 * commands the actor's role may use.
 */
import type { ActiveCharacter } from '../../../db/repositories/game-repository.ts';
import type { Room, World } from '../../worlds/world-loader.ts';
import { itemDescription, itemName } from '../../worlds/world-overlay.ts';
import { fail, NOT_IN_ROOM, ok, type Actor, type AnywhereCommand, type CommandResult, type CommandTable, type RoomCommand } from '../command-table.ts';
import { LINKDEAD, listed, type GameCore } from '../game-core.ts';
import { ambiguousAnswer, resolveName } from '../../../shared/name-match.ts';

export function informationVerbs(core: GameCore, table: CommandTable) {
  /**
   * An item here or carried, a character or an NPC here, named as players type names (a word of
   * the name or its start will do: src/shared/name-match.ts).
   */
  const examine = async (actor: Actor, world: World, room: Room, wanted: string): Promise<CommandResult> => {
    // Items as the world shows them now: a builder may have renamed, described or made them.
    const items = [...(await core.itemsLyingIn(world.id, room.id)), ...(await core.carried(actor.characterId))];
    const people = (await core.present(actor.worldId)).filter((c) => c.roomId === room.id);
    const npcs = await core.npcs.inRoom(world.id, room.id);
    const named = resolveName(
      [...items.map((item) => ({ item, name: itemName(world, item) })), ...people.map((c) => ({ person: c, name: c.name })), ...npcs.map((npc) => ({ npc, name: npc.name }))],
      (t) => t.name,
      wanted,
    );
    if (named && !('found' in named)) return fail(ambiguousAnswer(wanted, named.ambiguous));
    const target = named?.found;
    if (target && 'item' in target) return ok(`[${target.name}]\n${itemDescription(world, target.item) || 'You see nothing special about it.'}`);
    if (target && 'npc' in target) return ok(`[${target.name}]\n${target.npc.description || 'You see nothing special about them.'}`);
    const here = target?.person;
    if (!here) return fail(`There is no '${wanted}' here.`);
    const carried = (await core.carried(here.id)).map((item) => itemName(world, item));
    const lines = [here.id === actor.characterId ? `You are ${here.name}.` : `${here.name} is here.`];
    if (here.linkdead) lines.push(`${here.name} is ${LINKDEAD}: their player is away.`);
    lines.push(carried.length === 0 ? 'They carry nothing.' : `They carry: ${carried.join(', ')}.`);
    return ok(lines.join('\n'));
  };

  const look: AnywhereCommand = {
    verbs: ['look', 'l'],
    needsRoom: false,
    usage: 'look [<item|player>]',
    argument: { kind: 'target' },
    summary: 'Examine the current room, or an item or player',
    help: { section: 'Actions', lines: ['/look, /l - Examine the current room'] },
    run: async ({ actor, world, room, args }) => {
      if (args) return room ? examine(actor, world, room, args) : fail(NOT_IN_ROOM);
      // Looking is never a failure, even from nowhere.
      const shown = room ? await core.showRoom(actor, room.id) : null;
      return shown ? ok(shown.look, shown.room) : ok(NOT_IN_ROOM);
    },
  };

  const examineCommand: RoomCommand = {
    verbs: ['examine', 'exa'],
    needsRoom: true,
    usage: 'examine <item|player>',
    summary: 'Look closely at an item here or carried, or at a player here',
    argument: { kind: 'target', missing: 'Examine what?' },
    help: { section: 'Actions', lines: ['/examine <item|player>, /exa, /look <item|player> - Look closely at an item here or carried, or at a player here'] },
    run: ({ actor, world, room, args }) => examine(actor, world, room, args),
  };

  /** `who`'s lines per list of active characters (see who). */
  const whoLines = new WeakMap<readonly ActiveCharacter[], { text: string; ends: number[] }>();

  /**
   * Every active character of the world but the actor, one line each. The lines of a list are
   * joined once (with where each ends), and each answer leaves its own line out: in a world of
   * thousands, joining them per `who` was most of its cost.
   */
  const who: AnywhereCommand = {
    verbs: ['who'],
    needsRoom: false,
    usage: 'who',
    summary: 'List active players',
    help: { section: 'Other', lines: ['/who - List active players'] },
    run: async ({ actor }) => {
      const list = await core.present(actor.worldId);
      let lines = whoLines.get(list);
      if (!lines) {
        const ends: number[] = [];
        let text = '';
        for (const c of list) ends.push((text += `\n - ${listed(c)}`).length);
        whoLines.set(list, (lines = { text, ends }));
      }
      const me = list.findIndex((c) => c.id === actor.characterId);
      const others = me < 0 ? lines.text : lines.text.slice(0, me === 0 ? 0 : lines.ends[me - 1]) + lines.text.slice(lines.ends[me]);
      return ok(others === '' ? 'No other players online.' : `Active players:${others}`);
    },
  };

  const help: AnywhereCommand = {
    verbs: ['help', '?'],
    needsRoom: false,
    usage: 'help',
    summary: 'Show this help message',
    help: { section: 'Other', lines: ['/help, /? - Show this help message'] },
    run: async ({ actor }) => ok(table.help(actor.role)),
  };

  return { look, examine: examineCommand, who, help };
}
