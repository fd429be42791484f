/**
 * The game's own verbs, by kind, in the order `help` lists them within its sections (the
 * builders' join them from src/services/building/build-commands.ts).
 */
import type { Limit } from '../../limits/limits.ts';
import type { Announcements } from '../../moderation/announcements.ts';
import type { IgnoreLists } from '../../moderation/ignores.ts';
import type { ReportService } from '../../moderation/reports.ts';
import type { Command, CommandTable } from '../command-table.ts';
import type { GameCore } from '../game-core.ts';
import { communicationVerbs } from './communication.ts';
import { communityVerbs } from './community.ts';
import { informationVerbs } from './information.ts';
import { itemVerbs } from './items.ts';
import { movementVerbs } from './movement.ts';

/**
 * `table` is the table they join, which `help` reads; `oocLimit` is the ooc channel's own limit;
 * the moderation services are those of ignore, report and wall (src/services/moderation/).
 */
export function gameVerbs(
  core: GameCore,
  table: CommandTable,
  d: { oocLimit: Limit | null; ignores: IgnoreLists; reports: ReportService; announcements: Announcements },
): Command[] {
  const movement = movementVerbs(core);
  const items = itemVerbs(core);
  const talk = communicationVerbs(core, d.oocLimit, d.ignores);
  const info = informationVerbs(core, table);
  const community = communityVerbs(core, d);
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
    community.ignore,
    community.unignore,
    community.report,
    community.wall,
  ];
}
