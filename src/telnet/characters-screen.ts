/**
 * Logged in, choosing a character: the account's characters numbered with their worlds, and the
 * worlds that take a new one; `play <number or name>`, `new <world>` (POST /characters/create's
 * rules), `list`.
 */
import type { WorldEntry } from '../services/worlds/world-access.ts';
import type { TelnetConnection } from './connection.ts';
import { colour, config, quit, type Screen } from './screen.ts';
import { ambiguousAnswer, resolveName } from '../shared/name-match.ts';
import { enter } from './play-screen.ts';

/** The account's characters in every world it may enter (what `play <number>` counts in), and the worlds. */
async function loadCharacters(c: TelnetConnection): Promise<WorldEntry[]> {
  const session = await c.validSession();
  const worlds = await c.s.worldAccess.listForAccount(session.userId, session.role);
  const playable = worlds.filter((w) => w.can_access && w.current_character_count > 0);
  c.characters = (await Promise.all(playable.map((w) => c.s.characters.list(session, w.id)))).flat();
  return worlds;
}

/** The characters numbered, with their worlds, and the worlds that take a new character. */
export async function showCharacters(c: TelnetConnection): Promise<void> {
  const worlds = await loadCharacters(c);
  const names = new Map(worlds.map((w) => [w.id, w.name ?? w.id]));
  const lines = c.characters.length === 0 ? ['You have no characters yet.'] : ['Your characters:', ...c.characters.map((ch, i) => `  ${i + 1}. ${ch.name} (${names.get(ch.world_id) ?? ch.world_id})`)];
  const open = worlds.filter((w) => w.can_create);
  if (open.length > 0) {
    lines.push('New characters can be made in:', ...open.map((w) => `  ${w.id} - ${w.name ?? w.id} (${w.current_character_count}/${w.slot_limit_per_account} used)`));
  }
  lines.push('Type play <number or name>, new <world> or quit.');
  c.terminal.print(lines.join('\n'));
}

async function play(c: TelnetConnection, rest: string): Promise<void> {
  const wanted = rest.trim();
  if (c.characters.length === 0) await loadCharacters(c);
  const byNumber = /^\d+$/.test(wanted) ? c.characters[Number(wanted) - 1] : undefined;
  // A name as players type names (src/shared/name-match.ts): in any case, or a start of it.
  const named = byNumber ? { found: byNumber } : resolveName(c.characters, (ch) => ch.name, wanted.normalize('NFC'));
  if (named && !('found' in named)) return c.terminal.print(ambiguousAnswer(wanted, named.ambiguous));
  const character = named?.found;
  if (!character) {
    c.terminal.print(wanted ? `You have no character '${wanted}'. Type list to see them.` : 'Play whom? Type play <number or name>.');
    return;
  }
  await enter(c, character.id, character.world_id);
}

async function newCharacter(c: TelnetConnection, rest: string): Promise<void> {
  const worldId = rest.trim();
  if (!worldId) {
    c.terminal.print('Usage: new <world>');
    return;
  }
  c.terminal.print((await c.s.characters.create(await c.validSession(), worldId)).message);
  await showCharacters(c);
}

export const characters: Screen = {
  prompt: () => '> ',
  commands: {
    play,
    new: newCharacter,
    list: (c) => showCharacters(c),
    help: (c) => showCharacters(c),
    colour,
    color: colour,
    config,
    quit,
  },
  other: async (c) => c.terminal.print('Type play <number or name>, new <world>, list or quit.'),
};
