/**
 * Playing characters for game tests: a guest registered, logged in and bound to its
 * character through the real routes, plus small wrappers around the game routes.
 */
import { expect } from 'chai';
import { bearer, createUser, GOOD_PASSWORD, login } from './accounts.ts';
import type { TestServer } from './test-server.ts';

export interface Player {
  server: TestServer;
  name: string;
  username: string;
  characterId: number;
  sessionId: string;
}

export interface CommandReply {
  success: boolean;
  message: string;
  /** The room the answer shows, as data (look, a move, go, recall). */
  room?: { id: string; name: string; description: string; exits: Array<{ direction: string; to: string; name: string }>; items: Array<{ name: string }>; more_items: number; characters: Array<{ name: string; linkdead: boolean }>; more_characters: number; npcs: Array<{ id: string; name: string }>; more_npcs: number };
}

export interface GameStatus {
  active_players: string[];
  /** Those of active_players that are link-dead. */
  linkdead_players: string[];
  current_room: string | null;
  inventory: string;
}

let nameCounter = 0;
/** Character names allow letters only, so the unique part is a run of letters. */
export function uniqueName(first: string): string {
  let n = ++nameCounter;
  let tag = '';
  do {
    tag = String.fromCharCode(97 + (n % 26)) + tag;
    n = Math.floor(n / 26);
  } while (n > 0);
  return `${first} Q${tag}`;
}

/** A guest account with one character in the default world, no session. */
export async function registerGuest(server: Pick<TestServer, 'post'>, name: string): Promise<{ username: string; characterId: number }> {
  const res = await server.post('/register-guest', { password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD, character_name: name });
  expect(res.status, res.text).to.equal(200);
  return { username: res.body.username, characterId: res.body.character_id };
}

export async function loginAs(server: Pick<TestServer, 'post'>, username: string): Promise<string> {
  const res = await server.post('/login', { username, password: GOOD_PASSWORD });
  expect(res.status, res.text).to.equal(200);
  return res.body.session_id;
}

export async function selectCharacter(server: Pick<TestServer, 'post'>, sessionId: string, characterId: number): Promise<void> {
  const res = await server.post('/characters/select', { session_id: sessionId, character_id: characterId });
  expect(res.status, res.text).to.equal(200);
}

/** A playing character: registered, logged in, selected; optionally placed in a room directly. */
export async function newPlayer(server: TestServer, first = 'Tester', roomId?: string): Promise<Player> {
  const name = uniqueName(first);
  const { username, characterId } = await registerGuest(server, name);
  const sessionId = await loginAs(server, username);
  await selectCharacter(server, sessionId, characterId);
  if (roomId) {
    expect(await server.db('characters').where({ id: characterId }).update({ room_id: roomId })).to.equal(1);
    await wroteBehindServer(server);
  }
  return { server, name, username, characterId, sessionId };
}

/** A session of the role with a character of its own in emberwick (the default world), as a Player. */
export async function builderPlayer(server: TestServer, username: string, role: 'worldbuilder' | 'admin' | 'superuser' | 'player'): Promise<Player> {
  await createUser(server, username, role);
  const sessionId = await login(server, username);
  const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(sessionId));
  expect(created.status, created.text).to.equal(200);
  const characterId = created.body.character_id as number;
  await selectCharacter(server, sessionId, characterId);
  return { server, name: created.body.character_name, username, characterId, sessionId };
}

export async function cmd(player: Player, command: string): Promise<CommandReply> {
  const res = await player.server.post('/command', { session_id: player.sessionId, command });
  expect(res.status, `${command}: ${res.text}`).to.equal(200);
  expect(Object.keys(res.body).filter((key) => key !== 'room').sort()).to.deep.equal(['message', 'success']);
  return res.body;
}

/** Runs a command that must succeed and returns its message. */
export async function okCmd(player: Player, command: string): Promise<string> {
  const reply = await cmd(player, command);
  expect(reply.success, `${command} → ${reply.message}`).to.equal(true);
  return reply.message;
}

export async function statusOf(player: Player): Promise<GameStatus> {
  const res = await player.server.get(`/status/${player.sessionId}`);
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

/** A fresh game: no active session, no chat, items where the world files put them. */
export async function resetGame(server: TestServer): Promise<void> {
  await server.db('sessions').del();
  await server.db('chat_messages').del();
  await server.db('item_instances').del();
  await server.db('world_seeds').del();
  await server.services.game.core.seedItems();
  await wroteBehindServer(server);
}

/**
 * After a test wrote to the database directly: the server's caches of sessions and chat forget
 * everything, as when its bus reconnects after possibly missing events.
 */
export async function wroteBehindServer(server: TestServer): Promise<void> {
  await server.services.events.publish({ type: 'reconnected' });
}
