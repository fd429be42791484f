/**
 * The game's own verbs, by kind, in the order `help` lists them within its sections (the
 * builders' join them from src/services/building/build-commands.ts).
 */
import type { Limit } from '../../limits/limits.ts';
import type { Command, CommandTable } from '../command-table.ts';
import type { GameCore } from '../game-core.ts';
import { communicationVerbs } from './communication.ts';
import { informationVerbs } from './information.ts';
import { itemVerbs } from './items.ts';
import { movementVerbs } from './movement.ts';

/** `table` is the table they join, which `help` reads; `oocLimit` is the ooc channel's own limit. */
export function gameVerbs(core: GameCore, table: CommandTable, oocLimit: Limit | null): Command[] {
  const movement = movementVerbs(core);
  const items = itemVerbs(core);
  const talk = communicationVerbs(core, oocLimit);
  const info = informationVerbs(core, table);
  return [
    ...movement.directions,
    info.look,
    items.inventory,
    items.get,
    items.drop,
    movement.recall,
    talk.say,
    talk.yell,
    talk.whisper,
    info.who,
    info.help,
    movement.go,
    movement.exits,
    info.examine,
    talk.emote,
    talk.tell,
    talk.ooc,
  ];
}
