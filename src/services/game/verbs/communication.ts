/**
 * Talking: `say` (`chat`) to the room, `yell` to the room and the rooms its exits lead to,
 * `whisper` to one character in the room, `emote` (`pose`, `:`) as an action the room reads,
 * `tell` to one character anywhere in the world (waiting in their chat when they are away), and
 * `ooc` to the whole world. All of it is stored HTML-escaped in the chat store, read through
 * /chat and the event streams; say, yell and whisper also go through the chat mechanics (axis
 * engine, translation); `ooc` has its own limit on top of the command throttle. All of them
 * talk, which a muted account's characters may not do (the command table refuses them); a tell
 * to someone whose account ignores the sender is refused, with an answer that does not say so.
 */
import type { Limit } from '../../limits/limits.ts';
import type { IgnoreLists } from '../../moderation/ignores.ts';
import { fail, ok, type RoomCommand } from '../command-table.ts';
import { LINKDEAD, type GameCore } from '../game-core.ts';
import { escapeHtml } from '../../../shared/plain-text.ts';
import { ambiguousAnswer } from '../../../shared/name-match.ts';

const WHISPER_USAGE = 'Usage: /whisper <player> <message>';
const TELL_USAGE = 'Usage: /tell <player> <message>';

/**
 * An emote as others read it: `Wren` + `waves` → `Wren waves.`; an action starting with an
 * apostrophe or comma joins the name (`Wren's eyes gleam.`); a full stop is added when the
 * action ends in none.
 */
export function emoteText(name: string, action: string): string {
  const joined = /^['’,]/.test(action) ? `${name}${action}` : `${name} ${action}`;
  return /[.!?…"')\]]$/.test(joined) ? joined : `${joined}.`;
}

export function communicationVerbs(core: GameCore, oocLimit: Limit | null, ignores: IgnoreLists) {
  const say: RoomCommand = {
    verbs: ['say', 'chat'],
    talks: true,
    needsRoom: true,
    usage: 'say <message>',
    summary: 'Send a message to the current room',
    argument: { kind: 'message', missing: 'Say what?' },
    help: { section: 'Communication', lines: ['/say <message>, /chat <message> - Send a message to the current room'] },
    run: async ({ actor, room, args }) => {
      const escaped = escapeHtml(await core.mechanics.interact(actor, 'say', args, await core.mechanics.roomListener(actor, room.id)));
      await core.post(actor, [core.message(actor, room.id, 'say', escaped)]);
      return ok(`You say: ${escaped}`);
    },
  };

  const yell: RoomCommand = {
    verbs: ['yell'],
    talks: true,
    needsRoom: true,
    usage: 'yell <message>',
    summary: 'Yell to the current room and adjoining rooms',
    argument: { kind: 'message', missing: 'Yell what?' },
    help: { section: 'Communication', lines: ['/yell <message> - Yell to current room and adjoining rooms'] },
    run: async ({ actor, room, args }) => {
      const escaped = escapeHtml(await core.mechanics.interact(actor, 'yell', args, await core.mechanics.roomListener(actor, room.id)));
      // The current room, then each distinct room an exit leads to.
      const rooms = [...new Set([room.id, ...Object.values(room.exits)])];
      await core.post(actor, rooms.map((roomId) => core.message(actor, roomId, 'yell', `[YELL] ${escaped}`)));
      return ok(`You yell: ${escaped}`);
    },
  };

  const whisper: RoomCommand = {
    verbs: ['whisper'],
    talks: true,
    needsRoom: true,
    usage: 'whisper <player> <message>',
    summary: 'Send a private message to a player in this room',
    argument: { kind: 'character', missing: `Whisper to whom? ${WHISPER_USAGE}` },
    help: { section: 'Communication', lines: ['/whisper <player> <message> - Send private message to a player in this room (same-room only)'] },
    run: async ({ actor, room, args }) => {
      const { targetName, text, target: named } = await core.namedTarget(actor.worldId, args, room.id);
      if (!text) return fail(`Whisper what? ${WHISPER_USAGE}`);
      if (!named) return fail(`Player '${targetName}' does not exist.`);
      if (!('found' in named)) return fail(ambiguousAnswer(targetName, named.ambiguous));
      const target = named.found;
      if (!(await core.present(actor.worldId)).some((a) => a.id === target.id)) return fail(`Player '${target.name}' is not online.`);
      if (target.roomId !== room.id) return fail(`Player '${target.name}' is not in this room.`);
      const escaped = escapeHtml(await core.mechanics.interact(actor, 'whisper', text, target.id === actor.characterId ? null : target.id));
      await core.post(actor, [core.message(actor, room.id, 'whisper', `[WHISPER: ${actor.name} \u2192 ${target.name}] ${escaped}`, target.id)], target.name);
      return ok(`You whisper to ${target.name}: ${escaped}`);
    },
  };

  const emote: RoomCommand = {
    verbs: ['emote', 'pose'],
    talks: true,
    needsRoom: true,
    usage: 'emote <action>',
    summary: 'Act in the room',
    argument: { kind: 'message', missing: 'Emote what?' },
    help: { section: 'Communication', lines: ['/emote <action>, /pose <action>, :<action> - Act in the room (:waves shows "<you> waves.")'] },
    run: async ({ actor, room, args }) => {
      const text = escapeHtml(emoteText(actor.name, args));
      await core.post(actor, [core.message(actor, room.id, 'emote', text)]);
      return ok(text);
    },
  };

  const tell: RoomCommand = {
    verbs: ['tell'],
    talks: true,
    needsRoom: true,
    usage: 'tell <player> <message>',
    summary: 'Send a private message to a player anywhere in this world',
    argument: { kind: 'character', missing: `Tell whom? ${TELL_USAGE}` },
    help: { section: 'Communication', lines: ['/tell <player> <message> - Private message to a player anywhere in this world (waits in their chat if away)'] },
    run: async ({ actor, room, args }) => {
      const { targetName, text, target: named } = await core.namedTarget(actor.worldId, args);
      if (!text) return fail(`Tell what? ${TELL_USAGE}`);
      if (!named) return fail(`Nobody in this world is called '${targetName}'.`);
      if (!('found' in named)) return fail(ambiguousAnswer(targetName, named.ambiguous));
      const target = named.found;
      if (target.id === actor.characterId) return fail('You cannot tell yourself.');
      if (await ignores.ownerIgnores(target.id, actor.characterId)) return fail(`Your tell to ${target.name} was not delivered.`);
      const escaped = escapeHtml(text);
      await core.post(actor, [core.message(actor, room.id, 'tell', `[TELL: ${actor.name} \u2192 ${target.name}] ${escaped}`, target.id)], target.name, true);
      const present = (await core.present(actor.worldId)).find((c) => c.id === target.id);
      // On a line of its own: clients that show the tell from its chat event still show this.
      const away = !present ? `\n${target.name} is not in the world now: it waits in their chat.` : present.linkdead ? `\n${target.name} is ${LINKDEAD}: it waits in their chat.` : '';
      return ok(`You tell ${target.name}: ${escaped}${away}`);
    },
  };

  const ooc: RoomCommand = {
    verbs: ['ooc'],
    talks: true,
    needsRoom: true,
    usage: 'ooc <message>',
    summary: 'Out-of-character message to the whole world',
    argument: { kind: 'message', missing: 'Say what out of character?' },
    help: { section: 'Communication', lines: ['/ooc <message> - Out-of-character message to the whole world (never translated)'] },
    run: async ({ actor, room, args }) => {
      const refused = await oocLimit?.hit(String(actor.characterId));
      if (refused) throw refused;
      const escaped = escapeHtml(args);
      await core.post(actor, [core.message(actor, room.id, 'ooc', `[OOC] ${escaped}`)], null, true);
      return ok(`You say out of character: ${escaped}`);
    },
  };

  return { say, yell, whisper, emote, tell, ooc };
}
