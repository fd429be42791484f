/**
 * Moving: the six directions and their short forms, `go <direction>`, `exits`, and `recall` (with
 * `flee` and `scurry`) back to the zone's spawn room.
 */
import { DIRECTIONS, directionNamed, SHORT_DIRECTIONS, type Direction, type Room } from '../../worlds/world-loader.ts';
import { fail, ok, type Actor, type AnywhereCommand, type CommandResult, type RoomCommand } from '../command-table.ts';
import { exitLines, type GameCore } from '../game-core.ts';

const MOVE_HELP = ['/north, /n, /south, /s, /east, /e, /west, /w - Move in a direction', '/up, /u, /down, /d - Move up or down'];

export function movementVerbs(core: GameCore) {
  const walk = (actor: Actor, room: Room, direction: Direction): Promise<CommandResult> => {
    const target = room.exits[direction];
    if (!target) return Promise.resolve(fail(`You cannot move ${direction} from here.`));
    return core.moveTo(actor, target, direction, 'walk', `You move ${direction}.`);
  };

  const directions: RoomCommand[] = DIRECTIONS.map((direction) => {
    const short = Object.keys(SHORT_DIRECTIONS).find((s) => SHORT_DIRECTIONS[s] === direction)!;
    return {
      verbs: [direction, short],
      needsRoom: true,
      usage: direction,
      summary: `Move ${direction}`,
      // One pair of help lines for all six.
      help: { section: 'Movement', lines: direction === DIRECTIONS[0] ? MOVE_HELP : [] },
      run: ({ actor, room }) => walk(actor, room, direction),
    };
  });

  const go: RoomCommand = {
    verbs: ['go'],
    needsRoom: true,
    usage: 'go <direction>',
    summary: 'Move in a direction',
    argument: { kind: 'direction', missing: 'Go where? Usage: /go <direction>' },
    help: { section: 'Movement', lines: ['/go <direction> - Move in a direction (north, n, up, ...)'] },
    run: ({ actor, room, args }) => {
      const direction = directionNamed(args.trim());
      if (!direction) return Promise.resolve(fail(`'${args.trim()}' is not a direction. Directions: ${DIRECTIONS.join(', ')}.`));
      return walk(actor, room, direction);
    },
  };

  const exits: RoomCommand = {
    verbs: ['exits'],
    needsRoom: true,
    usage: 'exits',
    summary: 'List the ways out of this room',
    help: { section: 'Movement', lines: ['/exits - List the ways out of this room'] },
    run: async ({ world, room }) => {
      const lines = exitLines(world, room);
      return ok(lines === '' ? 'There is no way out of here.' : `[Exits]:\n${lines}`);
    },
  };

  const recall: AnywhereCommand = {
    verbs: ['recall', 'flee', 'scurry'],
    needsRoom: false,
    usage: 'recall',
    summary: 'Return to the zone spawn point',
    help: { section: 'Actions', lines: ['/recall, /flee, /scurry - Return to zone spawn point'] },
    run: async ({ actor, world, room }) => {
      // From nowhere (a room gone), to the world's spawn.
      const zone = room ? world.zones.get(room.zoneId) : undefined;
      const destination = zone ? zone.spawnRoom : world.defaultSpawn.room;
      if (actor.roomId === destination) return ok('You are already at the spawn point.');
      return core.moveTo(actor, destination, null, 'recall', `You recall to ${zone ? zone.name : 'the world'}'s spawn point.`);
    },
  };

  return { directions, go, exits, recall };
}
