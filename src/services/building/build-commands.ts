/**
 * The builders' verbs in the game (`@dig`, `@name`, `@desc`, `@exit`, `@unexit`, `@create`,
 * `@idesc`, `@destroy`, `@rooms`, `@npc`, `@script errors`), for roles with EDIT_WORLD: others get the unknown-command
 * answer and never see them in `help`. Each calls BuildService, so the rules and their words are
 * the API's; a refusal is the command's failure message. They act on the room or item as it is
 * now (no version to send: each is one small change made on the spot).
 */
import type { Room } from '../worlds/world-loader.ts';
import { DomainError, InvalidInput } from '../../shared/errors.ts';
import { fail, ok, type Actor, type ArgumentKind, type CommandResult, type RoomCommand, type Turn } from '../game/command-table.ts';
import type { BuildNpcSummary, BuildService, Builder } from './build-service.ts';

interface Named {
  name: string;
}

/** The item or NPC a builder names: by its whole name, else by the start of it, in any letter case. */
function pick<T extends Named>(things: readonly T[], wanted: string): T | undefined {
  const lower = wanted.toLowerCase();
  return things.find((i) => i.name.toLowerCase() === lower) ?? things.find((i) => i.name.toLowerCase().startsWith(lower));
}

/** Words in the longest of the names: no longer run of words can name one. */
function longestName(things: readonly Named[]): number {
  return Math.max(0, ...things.map((i) => i.name.split(/\s+/).length));
}

/**
 * The thing named by the longest leading run of words of `args` (leaving at least one word when
 * `text` is needed), and the rest of `args` as typed (empty when the name is all there is).
 */
function namedAndText<T extends Named>(things: readonly T[], args: string, text: 'needed' | 'optional'): { thing: T; text: string } | null {
  const words = args.trim().split(/\s+/);
  for (let count = Math.min(words.length - (text === 'needed' ? 1 : 0), longestName(things)); count >= 1; count--) {
    const thing = pick(things, words.slice(0, count).join(' '));
    if (thing) return { thing, text: args.trim().replace(new RegExp(`^(?:\\S+(?:\\s+|$)){${count}}`), '') };
  }
  return null;
}

/** NPCs `@npc` reads of those standing here, as a page of the building API's list holds at most. */
const NPCS_HERE = 200;

const NPC_USAGE = '@npc [create <name> | desc <npc> <text> | script <npc> <code> | noscript <npc> | destroy <npc>]';

export function buildCommands(build: BuildService): RoomCommand[] {
  /**
   * A builder's command: it acts as the actor's account, on the room it stands in (the table
   * checked that it stands in one, and that the argument is there); a refusal is its message.
   */
  const asBuilder = (run: (builder: Builder, actor: Actor, room: Room, args: string) => Promise<string>) => {
    return async ({ actor, room, args }: Turn<Room>): Promise<CommandResult> => {
      try {
        const account = await build.accountOf(actor.characterId);
        const builder: Builder = { role: actor.role, userId: account.userId, username: account.username, worldId: actor.worldId, via: 'game' };
        return ok(await run(builder, actor, room, args));
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

  /** An item lying here named by the longest leading run of words, and some text after it. */
  const itemAndText = async (actor: Actor, room: Room, args: string) => {
    const found = namedAndText(await build.itemsLyingIn(actor.worldId, room.id), args, 'needed');
    return found ? { item: found.thing, text: found.text } : null;
  };

  /** `@npc …`: the NPCs standing here, or one of its subcommands on one of them. */
  const npcCommand = async (builder: Builder, actor: Actor, room: Room, args: string): Promise<string> => {
    // Only those standing here are read, never the world's every NPC.
    const here = (await build.listNpcs(builder, actor.worldId, { limit: NPCS_HERE, after: null, standingIn: room.id })).npcs;
    const sub = /^\S*/.exec(args.trim())![0].toLowerCase();
    const after = args.trim().slice(sub.length).trim();
    if (sub === '') {
      if (here.length === 0) return `No NPC stands here. Usage: ${NPC_USAGE}`;
      const lines = here.map((n) => `  - ${n.id}: ${n.name}${n.script_suspended ? ' (script suspended)' : n.scripted ? ' (scripted)' : ''}`);
      return `NPCs here:\n${lines.join('\n')}${here.length === NPCS_HERE ? `\n  (the first ${NPCS_HERE}, by id)` : ''}`;
    }
    if (sub === 'create') {
      if (after === '') throw new InvalidInput('Usage: @npc create <name>');
      const npc = await build.createNpc(builder, actor.worldId, { name: after, description: `${after}, waiting to be described.`, roomId: room.id });
      return `You create ${npc.name} (NPC ${npc.id}).`;
    }
    const needsText = sub === 'desc' || sub === 'script';
    if (!['desc', 'script', 'noscript', 'destroy'].includes(sub)) throw new InvalidInput(`Unknown @npc subcommand '${sub}'. Usage: ${NPC_USAGE}`);
    const usage = `Usage: @npc ${sub} <npc>${needsText ? ` <${sub === 'desc' ? 'text' : 'code'}>` : ''}`;
    if (after === '') throw new InvalidInput(usage);
    const found = namedAndText(here, after, needsText ? 'needed' : 'optional');
    if (!found) throw new InvalidInput(needsText && namedAndText(here, after, 'optional') ? usage : `No NPC here is named at the start of '${after}'. ${usage}`);
    const npc: BuildNpcSummary = found.thing;
    if (sub === 'desc') {
      await build.updateNpc(builder, actor.worldId, npc.id, 'current', { description: found.text });
      return `You describe ${npc.name} anew.`;
    }
    if (sub === 'script' || sub === 'noscript') {
      await build.updateNpc(builder, actor.worldId, npc.id, 'current', { script: sub === 'script' ? found.text : null });
      return sub === 'script' ? `${npc.name} has a new script.` : `${npc.name} has no script now.`;
    }
    await build.deleteNpc(builder, actor.worldId, npc.id, 'current');
    return `You destroy ${npc.name}.`;
  };

  /** A builder's verb: permission EDIT_WORLD, a room to stand in, and `Usage: …` for a missing argument. */
  const verb = (name: string, usage: string, summary: string, run: RoomCommand['run'], argument: ArgumentKind | null = 'text'): RoomCommand => ({
    verbs: [name],
    permission: 'edit_world',
    needsRoom: true,
    usage,
    summary,
    ...(argument ? { argument: { kind: argument, missing: `Usage: ${usage}` } } : {}),
    help: { section: 'Building', lines: [`${usage} - ${summary}`] },
    run,
  });

  return [
    verb('@dig', '@dig <direction> <room name>', 'Dig a new room that way, joined both ways', asBuilder(async (builder, actor, room, args) => {
      const parts = split(args);
      if (!parts) throw new InvalidInput('Usage: @dig <direction> <room name>');
      const made = await build.dig(builder, actor.worldId, room.id, parts[0].toLowerCase(), parts[1]);
      return `You dig ${parts[0].toLowerCase()} and make ${made.name} (${made.id}).`;
    })),
    verb('@name', '@name <text>', 'Rename this room', asBuilder(async (builder, actor, room, args) => {
      const renamed = await build.updateRoom(builder, actor.worldId, room.id, 'current', { name: args });
      return `This room is now called ${renamed.name}.`;
    })),
    verb('@desc', '@desc <text>', 'Describe this room', asBuilder(async (builder, actor, room, args) => {
      await build.updateRoom(builder, actor.worldId, room.id, 'current', { description: args });
      return 'You describe this room anew.';
    })),
    verb('@exit', '@exit <direction> <room id>', 'Open a one-way exit from here', asBuilder(async (builder, actor, room, args) => {
      const parts = split(args);
      if (!parts) throw new InvalidInput('Usage: @exit <direction> <room id>');
      const direction = parts[0].toLowerCase();
      await build.addExit(builder, actor.worldId, room.id, 'current', { direction, to: parts[1].trim(), twoWay: false });
      return `You open an exit ${direction} to ${parts[1].trim()}.`;
    })),
    verb('@unexit', '@unexit <direction>', 'Close the exit that way (one-way)', asBuilder(async (builder, actor, room, args) => {
      const direction = args.trim().toLowerCase();
      const changed = await build.removeExit(builder, actor.worldId, room.id, 'current', direction, false);
      const lost = (changed.unreachable ?? []).map((id) => build.roomName(actor.worldId, id));
      return `You close the exit ${direction}.${lost.length === 0 ? '' : `\nWarning: no walk from the world's spawn reaches ${lost.join(', ')} any more.`}`;
    })),
    verb('@create', '@create <item name>', 'Make an item here', asBuilder(async (builder, actor, room, args) => {
      const item = await build.createItem(builder, actor.worldId, room.id, { name: args, description: `${args.trim()}, nothing more.` });
      return `You create ${item.name} (item ${item.id}).`;
    })),
    verb('@idesc', '@idesc <item> <text>', 'Describe an item lying here', asBuilder(async (builder, actor, room, args) => {
      const found = await itemAndText(actor, room, args);
      if (!found) throw new InvalidInput(`There is no item here named at the start of '${args}'. Usage: @idesc <item> <text>`);
      const item = await build.updateItem(builder, actor.worldId, found.item.id, 'current', { description: found.text });
      return `You describe ${item.name} anew.`;
    }), 'item_here'),
    verb('@destroy', '@destroy <item>', 'Destroy an item lying here', asBuilder(async (builder, actor, room, args) => {
      const item = pick(await build.itemsLyingIn(actor.worldId, room.id), args.trim());
      if (!item) throw new InvalidInput(`There is no '${args.trim()}' here.`);
      await build.deleteItem(builder, actor.worldId, item.id, 'current');
      return `You destroy ${item.name}.`;
    }), 'item_here'),
    verb(
      '@rooms',
      '@rooms',
      'List the rooms of this world',
      asBuilder(async (builder, actor, room) => {
        const { rooms } = await build.listRooms(builder, actor.worldId);
        return `Rooms of this world:\n${rooms.map((r) => `  - ${r.id}: ${r.name} (${r.zone})${r.id === room.id ? ' [here]' : ''}`).join('\n')}`;
      }),
      null,
    ),
    verb('@npc', NPC_USAGE, 'List the NPCs here, or make, describe, script or destroy one', asBuilder(npcCommand), null),
    verb(
      '@script',
      '@script errors',
      "The newest errors of this world's scripts",
      asBuilder(async (builder, actor, _room, args) => {
        if (args.trim().toLowerCase() !== 'errors') throw new InvalidInput('Usage: @script errors');
        const { errors } = await build.scriptErrors(builder, actor.worldId, 10, null, null);
        if (errors.length === 0) return "No script of this world has failed.";
        const lines = errors.map((e) => `  ${e.created_at} ${e.owner} ${e.hook}${e.line === null ? '' : ` line ${e.line}`}: ${e.kind}: ${e.message}`);
        return `Newest script errors:\n${lines.join('\n')}`;
      }),
    ),
  ];
}
