/**
 * The builders' verbs in the game (`@dig`, `@name`, `@desc`, `@exit`, `@unexit`, `@create`,
 * `@idesc`, `@destroy`, `@rooms`), for roles with EDIT_WORLD: others get the unknown-command
 * answer and never see them in `help`. Each calls BuildService, so the rules and their words are
 * the API's; a refusal is the command's failure message. They act on the room or item as it is
 * now (no version to send: each is one small change made on the spot).
 */
import { DomainError, InvalidInput } from '../errors.ts';
import { fail, ok, type Command, type CommandResult, type Player } from '../game/command-table.ts';
import type { BuildItem, BuildService, Builder } from './build-service.ts';

const NOT_IN_ROOM = 'You are not in a valid room.';

/** The item a builder names: by its whole name, else by the start of it, in any letter case. */
function pick(items: readonly BuildItem[], wanted: string): BuildItem | undefined {
  const lower = wanted.toLowerCase();
  return items.find((i) => i.name.toLowerCase() === lower) ?? items.find((i) => i.name.toLowerCase().startsWith(lower));
}

/** Words in the longest of the items' names: no longer run of words can name one. */
function longestName(items: readonly BuildItem[]): number {
  return Math.max(0, ...items.map((i) => i.name.split(/\s+/).length));
}

export function buildCommands(build: BuildService): Command[] {
  /** Runs a builder's command for a player standing in a room; a refusal becomes its message. */
  const inRoom = (usage: string, run: (builder: Builder, player: Player & { roomId: string }, args: string) => Promise<string>) => {
    return async (player: Player, args: string): Promise<CommandResult> => {
      if (!player.roomId) return fail(NOT_IN_ROOM);
      if (usage && !args) return fail(`Usage: ${usage}`);
      try {
        const account = await build.accountOf(player.characterId);
        const builder: Builder = { role: player.role, userId: account.userId, username: account.username, worldId: player.worldId, via: 'game' };
        return ok(await run(builder, { ...player, roomId: player.roomId }, args));
      } catch (err) {
        if (err instanceof DomainError) return fail(err.message);
        throw err;
      }
    };
  };

  /** `<first word> <rest>`, or null when there is no rest. */
  const split = (args: string): [string, string] | null => {
    const m = /^(\S+)\s+(.+)$/s.exec(args);
    return m ? [m[1]!, m[2]!] : null;
  };

  /**
   * An item lying here named by the longest leading run of words, and the text after it. The
   * room's items are read once and matched in memory, however long the text.
   */
  const itemAndText = async (player: Player & { roomId: string }, args: string) => {
    const items = await build.itemsLyingIn(player.worldId, player.roomId);
    const words = args.split(/\s+/);
    for (let count = Math.min(words.length - 1, longestName(items)); count >= 1; count--) {
      const item = pick(items, words.slice(0, count).join(' '));
      if (item) return { item, text: words.slice(count).join(' ') };
    }
    return null;
  };

  const section = 'Building' as const;
  return [
    {
      verbs: ['@dig'],
      permission: 'edit_world',
      help: { section, lines: ['@dig <direction> <room name> - Dig a new room that way, joined both ways'] },
      run: inRoom('@dig <direction> <room name>', async (builder, player, args) => {
        const parts = split(args);
        if (!parts) throw new InvalidInput('Usage: @dig <direction> <room name>');
        const room = await build.dig(builder, player.worldId, player.roomId, parts[0].toLowerCase(), parts[1]);
        return `You dig ${parts[0].toLowerCase()} and make ${room.name} (${room.id}).`;
      }),
    },
    {
      verbs: ['@name'],
      permission: 'edit_world',
      help: { section, lines: ['@name <text> - Rename this room'] },
      run: inRoom('@name <text>', async (builder, player, args) => {
        const room = await build.updateRoom(builder, player.worldId, player.roomId, 'current', { name: args });
        return `This room is now called ${room.name}.`;
      }),
    },
    {
      verbs: ['@desc'],
      permission: 'edit_world',
      help: { section, lines: ['@desc <text> - Describe this room'] },
      run: inRoom('@desc <text>', async (builder, player, args) => {
        await build.updateRoom(builder, player.worldId, player.roomId, 'current', { description: args });
        return 'You describe this room anew.';
      }),
    },
    {
      verbs: ['@exit'],
      permission: 'edit_world',
      help: { section, lines: ['@exit <direction> <room id> - Open a one-way exit from here'] },
      run: inRoom('@exit <direction> <room id>', async (builder, player, args) => {
        const parts = split(args);
        if (!parts) throw new InvalidInput('Usage: @exit <direction> <room id>');
        const direction = parts[0].toLowerCase();
        await build.addExit(builder, player.worldId, player.roomId, 'current', { direction, to: parts[1].trim(), twoWay: false });
        return `You open an exit ${direction} to ${parts[1].trim()}.`;
      }),
    },
    {
      verbs: ['@unexit'],
      permission: 'edit_world',
      help: { section, lines: ['@unexit <direction> - Close the exit that way (one-way)'] },
      run: inRoom('@unexit <direction>', async (builder, player, args) => {
        const direction = args.trim().toLowerCase();
        await build.removeExit(builder, player.worldId, player.roomId, 'current', direction, false);
        return `You close the exit ${direction}.`;
      }),
    },
    {
      verbs: ['@create'],
      permission: 'edit_world',
      help: { section, lines: ['@create <item name> - Make an item here'] },
      run: inRoom('@create <item name>', async (builder, player, args) => {
        const item = await build.createItem(builder, player.worldId, player.roomId, { name: args, description: `${args.trim()}, nothing more.` });
        return `You create ${item.name} (item ${item.id}).`;
      }),
    },
    {
      verbs: ['@idesc'],
      permission: 'edit_world',
      help: { section, lines: ['@idesc <item> <text> - Describe an item lying here'] },
      run: inRoom('@idesc <item> <text>', async (builder, player, args) => {
        const found = await itemAndText(player, args);
        if (!found) throw new InvalidInput(`There is no item here named at the start of '${args}'. Usage: @idesc <item> <text>`);
        const item = await build.updateItem(builder, player.worldId, found.item.id, 'current', { description: found.text });
        return `You describe ${item.name} anew.`;
      }),
    },
    {
      verbs: ['@destroy'],
      permission: 'edit_world',
      help: { section, lines: ['@destroy <item> - Destroy an item lying here'] },
      run: inRoom('@destroy <item>', async (builder, player, args) => {
        const item = pick(await build.itemsLyingIn(player.worldId, player.roomId), args.trim());
        if (!item) throw new InvalidInput(`There is no '${args.trim()}' here.`);
        await build.deleteItem(builder, player.worldId, item.id, 'current');
        return `You destroy ${item.name}.`;
      }),
    },
    {
      verbs: ['@rooms'],
      permission: 'edit_world',
      help: { section, lines: ['@rooms - List the rooms of this world'] },
      run: inRoom('', async (builder, player) => {
        const { rooms } = await build.listRooms(builder, player.worldId);
        return `Rooms of this world:\n${rooms.map((r) => `  - ${r.id}: ${r.name} (${r.zone})${r.id === player.roomId ? ' [here]' : ''}`).join('\n')}`;
      }),
    },
  ];
}
