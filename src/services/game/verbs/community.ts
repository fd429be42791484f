/**
 * A community looking after itself (docs/decisions.md, "Moderation"): `ignore` and `unignore`
 * (the account stops seeing a character's chat, and refuses its tells), `report` (to the staff,
 * with the last lines of chat the reporter could read) and the staff's `wall` (an announcement
 * to every connected player of every world). The rules live in src/services/moderation/.
 */
import { fail, ok, type AnywhereCommand, type RoomCommand } from '../command-table.ts';
import type { GameCore } from '../game-core.ts';
import { InvalidInput } from '../../../shared/errors.ts';
import type { Announcements } from '../../moderation/announcements.ts';
import { MAX_IGNORED, type IgnoreLists } from '../../moderation/ignores.ts';
import { REPORT_CONTEXT_LINES, type ReportService } from '../../moderation/reports.ts';
import { chatMessage } from '../game-core.ts';

const REPORT_USAGE = 'Usage: /report <player> <what happened>';
const NOBODY: ReadonlySet<number> = new Set();

export function communityVerbs(core: GameCore, d: { ignores: IgnoreLists; reports: ReportService; announcements: Announcements }) {
  const ignore: AnywhereCommand = {
    verbs: ['ignore'],
    needsRoom: false,
    usage: 'ignore [player]',
    summary: 'Stop seeing what a player says or does; alone, list whom you ignore',
    argument: { kind: 'character' },
    help: {
      section: 'Other',
      lines: ['/ignore <player> - Stop seeing what a player says or does (and refuse their tells); /ignore lists them', '/unignore <player> - See a player you ignored again'],
    },
    run: async ({ actor, args }) => {
      if (args === '') {
        const listed = await d.ignores.list(actor.accountId);
        if (listed.length === 0) return ok('You ignore nobody.');
        return ok(`You ignore:\n${listed.map((c) => `  - ${c.name}${c.worldId === actor.worldId ? '' : ` (${c.worldId})`}\n`).join('')}`);
      }
      const target = await core.findInWorld(actor.worldId, args);
      if (!target) return fail(`Nobody in this world is called '${args}'.`);
      if (target.id === actor.characterId) return fail('You cannot ignore yourself.');
      const outcome = await d.ignores.add(actor.accountId, target.id);
      if (outcome === 'already') return fail(`You ignore ${target.name} already.`);
      if (outcome === 'full') return fail(`You ignore ${MAX_IGNORED} characters already: unignore one first.`);
      return ok(`You ignore ${target.name}: you no longer see what they say or do, and their tells to you are refused.`);
    },
  };

  const unignore: AnywhereCommand = {
    verbs: ['unignore'],
    needsRoom: false,
    usage: 'unignore <player>',
    summary: 'See a player you ignored again',
    argument: { kind: 'character', missing: 'Unignore whom? Usage: /unignore <player>' },
    help: { section: 'Other', lines: [] },
    run: async ({ actor, args }) => {
      // By the name on the list: the character may be of another world, where its name is unique too.
      const named = (await d.ignores.list(actor.accountId)).filter((c) => c.name === args);
      const found = named.find((c) => c.worldId === actor.worldId) ?? named[0];
      if (!found) return fail(`You do not ignore anyone called '${args}'.`);
      await d.ignores.remove(actor.accountId, found.characterId);
      return ok(`You no longer ignore ${found.name}.`);
    },
  };

  const report: RoomCommand = {
    verbs: ['report'],
    needsRoom: true,
    usage: 'report <player> <what happened>',
    summary: 'Report a player to the staff',
    argument: { kind: 'character', missing: `Report whom? ${REPORT_USAGE}` },
    help: { section: 'Other', lines: ['/report <player> <what happened> - Tell the staff about a player (with the last lines of chat you saw)'] },
    run: async ({ actor, room, args }) => {
      const { targetName, text } = await core.namedTarget(actor.worldId, args);
      if (!text) return fail(`Report what? ${REPORT_USAGE}`);
      const target = await core.findInWorld(actor.worldId, targetName);
      if (!target) return fail(`Nobody in this world is called '${targetName}'.`);
      if (target.id === actor.characterId) return fail('You cannot report yourself.');
      // What the reporter could read here, the lines of those it ignores included: a report is often about them.
      const seen = await core.repo.recentMessages(actor.worldId, room.id, { characterId: actor.characterId, ignored: NOBODY }, REPORT_CONTEXT_LINES);
      await d.reports.file({
        reporter: { userId: actor.accountId, characterId: actor.characterId, character: actor.name, worldId: actor.worldId, roomId: room.id },
        reported: { characterId: target.id, character: target.name },
        text,
        context: seen.map(chatMessage),
      });
      return ok(`Thank you: the staff will read your report about ${target.name}.`);
    },
  };

  const wall: AnywhereCommand = {
    verbs: ['wall'],
    needsRoom: false,
    permission: 'announce',
    usage: 'wall <announcement>',
    summary: 'Announce something to every connected player of every world',
    argument: { kind: 'text', missing: 'Announce what? Usage: /wall <announcement>' },
    help: { section: 'Other', lines: ['/wall <announcement> - Staff: announce to every connected player of every world'] },
    run: async ({ actor, args }) => {
      try {
        await d.announcements.announce({ userId: actor.accountId, username: actor.username, role: actor.role }, actor.door, args);
      } catch (err) {
        // Too long: a game answer, as for any command.
        if (err instanceof InvalidInput) return fail(err.message);
        throw err;
      }
      return ok('Announced to every connected player.');
    },
  };

  return { ignore, unignore, report, wall };
}
