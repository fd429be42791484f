/**
 * The game through HTTP against the real app (SQLite, or PostgreSQL with MUD_TEST_DB=postgres):
 * the 409/401 preconditions of /command, /status and /chat; every verb and alias of the
 * specification's table with the reference server's exact texts and the choices settled beside
 * the specification and in docs/decisions.md (real items, yell once per distinct room, `who`
 * without the caller, multi-word whisper targets, no kick); /status and /chat; session
 * expiry; a race for one item; a scripted walk through the whole shipped demo world; and
 * state surviving a restart.
 *
 * Expected room texts are built from the world files themselves (worlds/emberwick), not from
 * the server's loader, so a broken exit or item in the shipped world fails here.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { cmd, loginAs, newPlayer, okCmd, registerGuest, selectCharacter, statusOf, uniqueName, wroteBehindServer, type Player } from '../helpers/players.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const WORLD_ID = 'emberwick';
const MINUTE = 60_000;
const NO_CHARACTER = 'No character selected for session. Select a character first.';
const INVALID_SESSION = 'Invalid or expired session';
const WHISPER_USAGE = 'Usage: /whisper <player> <message>';
/** The walk through every room of the demo world, starting at the default spawn. */
const WALK = ['north', 'north', 'north', 'up', 'down', 'west', 'down', 'north', 'east', 'up', 'east', 'east', 'east', 'north', 'east', 'west', 'west', 'east', 'south', 'west', 'up', 'up', 'up', 'down', 'down', 'down', 'west'];

// ---------------------------------------------------------------------------------------
// The demo world, read straight from its files
// ---------------------------------------------------------------------------------------

interface RoomInfo {
  id: string;
  zoneId: string;
  name: string;
  description: string;
  /** Direction → bare room id, in JSON order. */
  exits: Array<[string, string]>;
  items: string[];
}

interface WorldInfo {
  rooms: Map<string, RoomInfo>;
  itemNames: Map<string, string>;
  zones: Map<string, { name: string; spawnRoom: string }>;
  spawnRoom: string;
}

/** Zone rooms and items may be written as an object keyed by id or as a list. */
function entries<T extends { id?: string }>(raw: unknown): Array<[string, T]> {
  if (Array.isArray(raw)) return (raw as T[]).map((v) => [String(v.id), v]);
  return Object.entries((raw ?? {}) as Record<string, T>).map(([k, v]) => [v.id ?? k, v]);
}

function readWorld(dir: string): WorldInfo {
  const world = JSON.parse(readFileSync(path.join(dir, 'world.json'), 'utf8'));
  const rooms = new Map<string, RoomInfo>();
  const itemNames = new Map<string, string>();
  const zones = new Map<string, { name: string; spawnRoom: string }>();
  for (const [id, item] of entries<{ id?: string; name: string }>(world.global_items)) itemNames.set(id, item.name);
  const rawExits: Array<{ room: RoomInfo; dir: string; target: string }> = [];
  for (const zoneId of world.zones as string[]) {
    const zone = JSON.parse(readFileSync(path.join(dir, 'zones', `${zoneId}.json`), 'utf8'));
    zones.set(zoneId, { name: zone.name, spawnRoom: zone.spawn_room });
    for (const [id, item] of entries<{ id?: string; name: string }>(zone.items)) itemNames.set(id, item.name);
    type RawRoom = { id?: string; name: string; description: string; exits?: Record<string, string>; items?: string[] };
    for (const [id, raw] of entries<RawRoom>(zone.rooms)) {
      if (rooms.has(id)) throw new Error(`room id ${id} appears twice in the world files`);
      const room: RoomInfo = { id, zoneId, name: raw.name, description: raw.description, exits: [], items: raw.items ?? [] };
      rooms.set(id, room);
      for (const [dir, target] of Object.entries(raw.exits ?? {})) rawExits.push({ room, dir, target });
    }
  }
  for (const { room, dir, target } of rawExits) {
    const bare = target.includes(':') ? target.slice(target.indexOf(':') + 1) : target;
    if (!rooms.has(bare)) throw new Error(`exit ${room.id}.${dir} leads to unknown room ${target}`);
    room.exits.push([dir, bare]);
  }
  return { rooms, itemNames, zones, spawnRoom: world.default_spawn.room };
}

const WORLD = readWorld(path.resolve('worlds', WORLD_ID));

function room(id: string): RoomInfo {
  const r = WORLD.rooms.get(id);
  if (!r) throw new Error(`no room ${id} in the world files`);
  return r;
}

function itemName(id: string): string {
  const name = WORLD.itemNames.get(id);
  if (!name) throw new Error(`no item ${id} in the world files`);
  return name;
}

/** The look text, the reference server's; items default to the room's items as shipped. */
function lookText(roomId: string, opts: { items?: string[]; players?: string[]; world?: WorldInfo } = {}): string {
  const world = opts.world ?? WORLD;
  const r = world.rooms.get(roomId)!;
  const items = opts.items ?? r.items.map((i) => world.itemNames.get(i)!);
  let text = `\n=== ${r.name} ===\n${r.description}\n`;
  if (items.length > 0) text += `\n[Items here]:\n${items.map((i) => `  - ${i}\n`).join('')}`;
  if (opts.players && opts.players.length > 0) text += `\n[Players here]:\n${opts.players.map((p) => `  - ${p}\n`).join('')}`;
  if (r.exits.length > 0) text += `\n[Exits]:\n${r.exits.map(([dir, to]) => `  - ${dir}: ${world.rooms.get(to)!.name}\n`).join('')}`;
  return text;
}

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------








/** Arrangement: puts the character into a room directly. */
async function placeIn(player: Player, roomId: string): Promise<void> {
  room(roomId);
  const updated = await player.server.db('characters').where({ id: player.characterId }).update({ room_id: roomId });
  expect(updated).to.equal(1);
  await wroteBehindServer(player.server);
}



async function expectReply(player: Player, command: string, success: boolean, message: string): Promise<void> {
  const reply = await cmd(player, command);
  expect({ success: reply.success, message: reply.message }, command).to.deep.equal({ success, message });
  // An answer that shows a room carries that room as data too.
  expect(reply.room?.name, command).to.equal(/\n=== (.+) ===\n/.exec(message)?.[1]);
}

async function look(player: Player): Promise<string> {
  return okCmd(player, 'look');
}


interface ChatMessage {
  id: number;
  sender: string;
  text: string;
  channel: string;
  recipient: string | null;
  created_at: string;
}

async function chat(player: Player): Promise<{ chat: string; messages: ChatMessage[] }> {
  const res = await player.server.get(`/chat/${player.sessionId}`);
  expect(res.status, res.text).to.equal(200);
  expect(Object.keys(res.body).sort()).to.deep.equal(['chat', 'messages']);
  return res.body;
}

function chatText(lines: Array<[sender: string, text: string]>): string {
  return lines.length === 0 ? '[No messages in this room yet]' : `[Recent messages]:\n${lines.map(([s, t]) => `${s}: ${t}\n`).join('')}`;
}

async function itemRows(server: TestServer, itemId: string): Promise<Array<{ room_id: string | null; character_id: number | null }>> {
  const rows = await server.db('item_instances').where({ world_id: WORLD_ID, item_id: itemId }).select('room_id', 'character_id');
  return rows.map((r) => ({ room_id: r.room_id ?? null, character_id: r.character_id === null ? null : Number(r.character_id) }));
}

/**
 * Gives each test a fresh game on the shared server: no session is active, no chat, and the
 * items lie where the world files put them (seeded again the way a new database is).
 */

// ---------------------------------------------------------------------------------------
// The world files themselves
// ---------------------------------------------------------------------------------------

describe('game: the demo world files', () => {
  it('have the spawn, the one-way slag chute, cross-zone exits and 11 placed items the suite relies on', () => {
    expect(WORLD.spawnRoom).to.equal('lockkeepers_square');
    expect(WORLD.rooms.size).to.equal(18);
    expect(room('slag_chute').exits).to.deep.include(['down', 'slag_pool']);
    expect(room('slag_pool').exits.map(([, to]) => to)).to.not.include('slag_chute');
    expect(room('ropewalk_bridge').exits).to.deep.include(['north', 'foundry_gate']);
    expect(room('foundry_gate').zoneId).to.equal('old_foundry');
    const placed = [...WORLD.rooms.values()].flatMap((r) => r.items);
    expect(placed).to.have.length(11);
    expect(new Set(placed).size).to.equal(11);
  });
});

// ---------------------------------------------------------------------------------------
// The game on one server
// ---------------------------------------------------------------------------------------

describe(`game (${DB_NAME})`, function () {
  const server = oneServer({ reset: true });

  describe('preconditions', () => {
    it('a session without a character gets 409 on /command, /status and /chat', async () => {
      const { username } = await registerGuest(server(), uniqueName('Unbound'));
      const sid = await loginAs(server(), username);
      const results = [
        await server().post('/command', { session_id: sid, command: 'look' }),
        await server().get(`/status/${sid}`),
        await server().get(`/chat/${sid}`),
      ];
      for (const res of results) {
        expect(res.status, res.text).to.equal(409);
        expect(res.body).to.deep.equal({ detail: NO_CHARACTER });
      }
    });

    it('an invalid session gets 401 on /command, /status and /chat', async () => {
      const bogus = '0b6c4a1e-9f0d-4a2b-8c3d-5e6f7a8b9c0d';
      const results = [
        await server().post('/command', { session_id: bogus, command: 'look' }),
        await server().get(`/status/${bogus}`),
        await server().get(`/chat/${bogus}`),
      ];
      for (const res of results) {
        expect(res.status, res.text).to.equal(401);
        expect(res.body).to.deep.equal({ detail: INVALID_SESSION });
      }
    });

    it('a logged-out session gets 401', async () => {
      const p = await newPlayer(server());
      expect((await server().post('/logout', { session_id: p.sessionId })).status).to.equal(200);
      expect((await server().post('/command', { session_id: p.sessionId, command: 'look' })).status).to.equal(401);
      expect((await server().get(`/status/${p.sessionId}`)).status).to.equal(401);
      expect((await server().get(`/chat/${p.sessionId}`)).status).to.equal(401);
    });
  });

  describe('movement', () => {
    const moves: Array<[verb: string, direction: string, from: string, to: string]> = [
      ['n', 'north', 'lockkeepers_square', 'ropewalk_bridge'],
      ['north', 'north', 'lockkeepers_square', 'ropewalk_bridge'],
      ['s', 'south', 'ropewalk_bridge', 'lockkeepers_square'],
      ['south', 'south', 'ropewalk_bridge', 'lockkeepers_square'],
      ['e', 'east', 'lockkeepers_square', 'chandlers_row'],
      ['east', 'east', 'lockkeepers_square', 'chandlers_row'],
      ['w', 'west', 'lockkeepers_square', 'tinkers_wharf'],
      ['west', 'west', 'lockkeepers_square', 'tinkers_wharf'],
      // Cross-zone exits.
      ['u', 'up', 'chandlers_row', 'bell_stair'],
      ['up', 'up', 'chandlers_row', 'bell_stair'],
      ['d', 'down', 'tinkers_wharf', 'eel_cistern'],
      ['down', 'down', 'tinkers_wharf', 'eel_cistern'],
    ];
    for (const [verb, direction, from, to] of moves) {
      it(`${verb} moves ${direction} (${from} → ${to}) and describes the new room`, async () => {
        const p = await newPlayer(server(), 'Walker', from);
        await expectReply(p, verb, true, `You move ${direction}.\n${lookText(to)}`);
        expect((await statusOf(p)).current_room).to.equal(to);
        expect(await look(p)).to.equal(lookText(to));
      });
    }

    for (const [verb, direction] of moves) {
      // The ledge has only a way down; the square has no way down.
      const from = direction === 'down' ? 'lockkeepers_square' : 'weathercock_ledge';
      it(`${verb} without a ${direction} exit: "You cannot move ${direction} from here." and no move`, async () => {
        const p = await newPlayer(server(), 'Blocked', from);
        await expectReply(p, verb, false, `You cannot move ${direction} from here.`);
        expect((await statusOf(p)).current_room).to.equal(from);
      });
    }

    it('verbs are case-insensitive and take an optional slash; w is west even with arguments', async () => {
      const p = await newPlayer(server(), 'Walker');
      await expectReply(p, '/NORTH', true, `You move north.\n${lookText('ropewalk_bridge')}`);
      await expectReply(p, '  /S  ', true, `You move south.\n${lookText('lockkeepers_square')}`);
      await expectReply(p, 'w Somebody hello', true, `You move west.\n${lookText('tinkers_wharf')}`);
    });

    it('the slag chute is one-way: down into the slag pool, no way back up', async () => {
      const p = await newPlayer(server(), 'Slider', 'slag_chute');
      await expectReply(p, 'down', true, `You move down.\n${lookText('slag_pool')}`);
      await expectReply(p, 'up', false, 'You cannot move up from here.');
    });
  });

  describe('look', () => {
    it('look and l describe the spawn room exactly: items, exits in JSON order, no players when alone', async () => {
      const p = await newPlayer(server(), 'Looker');
      const expected = `\n=== Lockkeeper's Square ===\n${room('lockkeepers_square').description}\n\n[Items here]:\n  - Canal Penny\n\n[Exits]:\n  - north: Ropewalk Bridge\n  - east: Chandler's Row\n  - west: Tinker's Wharf\n`;
      expect(lookText('lockkeepers_square')).to.equal(expected);
      await expectReply(p, 'look', true, expected);
      await expectReply(p, 'l', true, expected);
      await expectReply(p, '/LOOK', true, expected);
    });

    it('a room without items has no [Items here] section; cross-zone exits name the room', async () => {
      const p = await newPlayer(server(), 'Looker', 'foundry_gate');
      const text = await look(p);
      expect(text).to.equal(`\n=== Foundry Gate ===\n${room('foundry_gate').description}\n\n[Exits]:\n  - south: Ropewalk Bridge\n  - north: Casting Floor\n`);
    });

    it('[Players here] lists the other active players in the room, not the viewer and not players elsewhere', async () => {
      const a = await newPlayer(server(), 'Ada');
      const b = await newPlayer(server(), 'Bram');
      const c = await newPlayer(server(), 'Cora');
      await newPlayer(server(), 'Elsewhere', 'ropewalk_bridge');
      // A character with no session is not present.
      await registerGuest(server(), uniqueName('Offline'));
      expect(await look(a)).to.equal(lookText('lockkeepers_square', { players: [b.name, c.name].sort() }));
      expect(await look(b)).to.equal(lookText('lockkeepers_square', { players: [a.name, c.name].sort() }));
      // After B leaves, A no longer sees B.
      await okCmd(b, 'north');
      expect(await look(a)).to.equal(lookText('lockkeepers_square', { players: [c.name] }));
      // A logged-out player is gone too.
      expect((await server().post('/logout', { session_id: c.sessionId })).status).to.equal(200);
      expect(await look(a)).to.equal(lookText('lockkeepers_square'));
    });
  });

  describe('inventory, get, drop', () => {
    it('inventory, inv and i: empty, then one line per item', async () => {
      const p = await newPlayer(server(), 'Holder');
      for (const verb of ['inventory', 'inv', 'i', '/INV']) await expectReply(p, verb, true, 'Your inventory is empty.');
      await okCmd(p, 'get Canal Penny');
      await okCmd(p, 'north');
      await okCmd(p, 'get Hemp Rope Coil');
      for (const verb of ['inventory', 'inv', 'i']) await expectReply(p, verb, true, 'Your inventory:\n  - Canal Penny\n  - Hemp Rope Coil\n');
    });

    it('get matches the whole name ignoring case; the item leaves the room and is in the inventory', async () => {
      const p = await newPlayer(server(), 'Taker');
      const other = await newPlayer(server(), 'Watcher');
      await expectReply(p, 'get canal PENNY', true, 'You picked up the Canal Penny.');
      expect(await look(p)).to.equal(lookText('lockkeepers_square', { items: [], players: [other.name] }));
      expect(await look(other)).to.equal(lookText('lockkeepers_square', { items: [], players: [p.name] }));
      await expectReply(p, 'inventory', true, 'Your inventory:\n  - Canal Penny\n');
      expect(await itemRows(server(), 'canal_penny')).to.deep.equal([{ room_id: null, character_id: p.characterId }]);
      // It is gone: nobody can take it again.
      await expectReply(p, 'get Canal Penny', false, "There is no 'Canal Penny' here.");
      await expectReply(other, 'take canal penny', false, "There is no 'canal penny' here.");
    });

    it('take is get; a word of the name or its start will do (issue 35), an id or a longer name will not; the argument is echoed as typed', async () => {
      const p = await newPlayer(server(), 'Taker', 'chandlers_row');
      await expectReply(p, 'take tallow_candle', false, "There is no 'tallow_candle' here.");
      await expectReply(p, 'take Tallow Candles', false, "There is no 'Tallow Candles' here.");
      await expectReply(p, 'take Candle Tallow', false, "There is no 'Candle Tallow' here.");
      await expectReply(p, 'get Pewter Tankard', false, "There is no 'Pewter Tankard' here.");
      await expectReply(p, 'TAKE tallow', true, 'You picked up the Tallow Candle.');
      expect(await itemRows(server(), 'tallow_candle')).to.deep.equal([{ room_id: null, character_id: p.characterId }]);
    });

    it('get and take without an argument: "Get what?"', async () => {
      const p = await newPlayer(server());
      for (const c of ['get', 'take', '/get   ', 'TAKE']) await expectReply(p, c, false, 'Get what?');
    });

    it('drop puts the item into the current room, where others see it and can take it', async () => {
      const p = await newPlayer(server(), 'Dropper');
      await okCmd(p, 'get Canal Penny');
      await okCmd(p, 'north');
      await expectReply(p, 'drop CANAL penny', true, 'You dropped the Canal Penny.');
      await expectReply(p, 'inventory', true, 'Your inventory is empty.');
      expect(await itemRows(server(), 'canal_penny')).to.deep.equal([{ room_id: 'ropewalk_bridge', character_id: null }]);
      // Listed on the bridge (after the bridge's own coil or before it; the order is not specified), not back in the square.
      const bridge = await look(p);
      const orders = [
        lookText('ropewalk_bridge', { items: ['Hemp Rope Coil', 'Canal Penny'] }),
        lookText('ropewalk_bridge', { items: ['Canal Penny', 'Hemp Rope Coil'] }),
      ];
      expect(orders).to.include(bridge);
      const other = await newPlayer(server(), 'Finder');
      expect(await look(other)).to.equal(lookText('lockkeepers_square', { items: [] }));
      await expectReply(other, 'get Canal Penny', false, "There is no 'Canal Penny' here.");
      await okCmd(other, 'north');
      await expectReply(other, 'get canal penny', true, 'You picked up the Canal Penny.');
      expect(await itemRows(server(), 'canal_penny')).to.deep.equal([{ room_id: null, character_id: other.characterId }]);
    });

    it('drop of something not held: "You don\'t have a \'<x>\'." and "Drop what?" without an argument', async () => {
      const p = await newPlayer(server());
      await expectReply(p, 'drop Canal Penny', false, "You don't have a 'Canal Penny'.");
      await okCmd(p, 'get Canal Penny');
      await expectReply(p, 'drop Penny Canal', false, "You don't have a 'Penny Canal'.");
      await expectReply(p, 'drop', false, 'Drop what?');
      await expectReply(p, '/drop  ', false, 'Drop what?');
      await expectReply(p, 'drop canal penny', true, 'You dropped the Canal Penny.');
      await expectReply(p, 'drop canal penny', false, "You don't have a 'canal penny'.");
      expect(await itemRows(server(), 'canal_penny')).to.deep.equal([{ room_id: 'lockkeepers_square', character_id: null }]);
    });

    it('two players racing for one item: exactly one gets it, five times over', async () => {
      const a = await newPlayer(server(), 'Racer');
      const b = await newPlayer(server(), 'Racer');
      const items = ['canal_penny', 'hemp_coil', 'tallow_candle', 'pewter_tankard', 'tin_whistle'];
      // Arrangement: gather the five items in the square.
      await server().db('item_instances').where({ world_id: WORLD_ID }).whereIn('item_id', items).update({ room_id: 'lockkeepers_square', character_id: null });
      const won = new Map<number, string[]>([
        [a.characterId, []],
        [b.characterId, []],
      ]);
      for (const itemId of items) {
        const name = itemName(itemId);
        const replies = await Promise.all([cmd(a, `get ${name}`), cmd(b, `get ${name}`)]);
        const winners = replies.filter((r) => r.success);
        expect(winners, `${name}: ${JSON.stringify(replies)}`).to.have.length(1);
        expect(winners[0]!.message).to.equal(`You picked up the ${name}.`);
        expect(replies.find((r) => !r.success)!.message).to.equal(`There is no '${name}' here.`);
        const rows = await itemRows(server(), itemId);
        expect(rows).to.have.length(1);
        expect(rows[0]!.room_id).to.equal(null);
        const holder = replies[0]!.success ? a.characterId : b.characterId;
        expect(rows[0]!.character_id).to.equal(holder);
        won.get(holder)!.push(name);
      }
      for (const p of [a, b]) {
        const held = won.get(p.characterId)!;
        const inv = (await statusOf(p)).inventory;
        expect(inv).to.equal(held.length === 0 ? 'Your inventory is empty.' : `Your inventory:\n${held.map((n) => `  - ${n}\n`).join('')}`);
      }
    });
  });

  describe('say, yell, whisper', () => {
    it('say and chat speak to the room, HTML-escaped; the room hears it, other rooms do not', async () => {
      const a = await newPlayer(server(), 'Speaker');
      const b = await newPlayer(server(), 'Listener');
      const far = await newPlayer(server(), 'Far', 'ropewalk_bridge');
      await expectReply(a, 'say Hello   There', true, 'You say: Hello   There');
      await expectReply(b, 'chat <b>&\'"', true, 'You say: &lt;b&gt;&amp;&#x27;&quot;');
      const expected = chatText([
        [a.name, 'Hello   There'],
        [b.name, '&lt;b&gt;&amp;&#x27;&quot;'],
      ]);
      expect((await chat(a)).chat).to.equal(expected);
      expect((await chat(b)).chat).to.equal(expected);
      expect(await chat(far)).to.deep.equal({ chat: '[No messages in this room yet]', messages: [] });
      const stored = await server().db('chat_messages').where({ world_id: WORLD_ID }).orderBy('id').select('message', 'room_id', 'channel');
      expect(stored).to.deep.equal([
        { message: 'Hello   There', room_id: 'lockkeepers_square', channel: 'say' },
        { message: '&lt;b&gt;&amp;&#x27;&quot;', room_id: 'lockkeepers_square', channel: 'say' },
      ]);
    });

    it('say and chat without a message: "Say what?"', async () => {
      const p = await newPlayer(server());
      for (const c of ['say', 'chat', '/say   ', 'CHAT']) await expectReply(p, c, false, 'Say what?');
      expect((await chat(p)).messages).to.deep.equal([]);
    });

    it('yell reaches the room and the rooms its exits lead to, not a room that only exits into it', async () => {
      const yeller = await newPlayer(server(), 'Yeller', 'slag_pool');
      const beside = await newPlayer(server(), 'Beside', 'slag_pool');
      const adjoining = await newPlayer(server(), 'Culvert', 'flooded_culvert');
      const above = await newPlayer(server(), 'Chute', 'slag_chute');
      await expectReply(yeller, 'yell Help <me>!', true, 'You yell: Help &lt;me&gt;!');
      const heard = chatText([[yeller.name, '[YELL] Help &lt;me&gt;!']]);
      expect((await chat(yeller)).chat).to.equal(heard);
      expect((await chat(beside)).chat).to.equal(heard);
      expect((await chat(adjoining)).chat).to.equal(heard);
      expect((await chat(adjoining)).messages[0]!.channel).to.equal('yell');
      expect((await chat(above)).chat).to.equal('[No messages in this room yet]');
    });

    it('a yell crosses zone borders (stored under the resolved room)', async () => {
      const yeller = await newPlayer(server(), 'Yeller', 'ropewalk_bridge');
      const gate = await newPlayer(server(), 'Gate', 'foundry_gate');
      const square = await newPlayer(server(), 'Square');
      const wharf = await newPlayer(server(), 'Wharf', 'tinkers_wharf');
      await expectReply(yeller, 'yell Anyone?', true, 'You yell: Anyone?');
      const heard = chatText([[yeller.name, '[YELL] Anyone?']]);
      expect((await chat(gate)).chat).to.equal(heard);
      expect((await chat(square)).chat).to.equal(heard);
      expect((await chat(wharf)).chat).to.equal('[No messages in this room yet]');
    });

    it('yell without a message: "Yell what?"', async () => {
      const p = await newPlayer(server());
      await expectReply(p, 'yell', false, 'Yell what?');
      await expectReply(p, '/YELL  ', false, 'Yell what?');
    });

    it('whisper: usage messages, unknown, offline and elsewhere targets', async () => {
      const sender = await newPlayer(server(), 'Osk');
      const target = await newPlayer(server(), 'Mara');
      const away = await newPlayer(server(), 'Away', 'ropewalk_bridge');
      const offlineName = uniqueName('Ghost');
      await registerGuest(server(), offlineName);
      await expectReply(sender, 'whisper', false, `Whisper to whom? ${WHISPER_USAGE}`);
      await expectReply(sender, '/whisper   ', false, `Whisper to whom? ${WHISPER_USAGE}`);
      await expectReply(sender, 'whisper Nobody', false, `Whisper what? ${WHISPER_USAGE}`);
      await expectReply(sender, `whisper ${target.name}`, false, `Whisper what? ${WHISPER_USAGE}`);
      await expectReply(sender, 'whisper Nobody hello there', false, "Player 'Nobody' does not exist.");
      await expectReply(sender, `whisper ${offlineName} boo`, false, `Player '${offlineName}' is not online.`);
      // Names are taken in any letter case (issue 35), and answered as they are.
      await expectReply(sender, `whisper ${offlineName.toLowerCase()} boo`, false, `Player '${offlineName}' is not online.`);
      await expectReply(sender, `whisper ${away.name} boo`, false, `Player '${away.name}' is not in this room.`);
      // None of that was stored.
      expect(await server().db('chat_messages').count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 0);
    });

    it('whisper to a two-word name reaches only the recipient and the sender, escaped', async () => {
      const sender = await newPlayer(server(), 'Osk');
      const target = await newPlayer(server(), 'Mara');
      const third = await newPlayer(server(), 'Wren');
      expect(target.name.split(' ')).to.have.length(2);
      await expectReply(sender, `whisper ${target.name} psst  <i>it's</i>`, true, `You whisper to ${target.name}: psst  &lt;i&gt;it&#x27;s&lt;/i&gt;`);
      const text = `[WHISPER: ${sender.name} \u2192 ${target.name}] psst  &lt;i&gt;it&#x27;s&lt;/i&gt;`;
      for (const p of [sender, target]) {
        const seen = await chat(p);
        expect(seen.chat).to.equal(chatText([[sender.name, text]]));
        expect(seen.messages).to.have.length(1);
        expect(seen.messages[0]).to.include({ sender: sender.name, text, channel: 'whisper', recipient: target.name });
      }
      expect(await chat(third)).to.deep.equal({ chat: '[No messages in this room yet]', messages: [] });
      // A public message afterwards is seen by all three; the third still misses the whisper.
      await okCmd(third, 'say hi');
      expect((await chat(third)).chat).to.equal(chatText([[third.name, 'hi']]));
      expect((await chat(target)).chat).to.equal(
        chatText([
          [sender.name, text],
          [third.name, 'hi'],
        ]),
      );
    });

    it('whispering to yourself is allowed', async () => {
      const p = await newPlayer(server(), 'Lonely');
      await expectReply(p, `whisper ${p.name} note to self`, true, `You whisper to ${p.name}: note to self`);
    });
  });

  describe('recall, who, help, unknown, empty', () => {
    it('recall, flee and scurry return to the zone spawn point', async () => {
      const p = await newPlayer(server(), 'Homer');
      await expectReply(p, 'recall', true, 'You are already at the spawn point.');
      await okCmd(p, 'north');
      await expectReply(p, 'recall', true, `You recall to The Canal Quarter's spawn point.\n${lookText('lockkeepers_square')}`);
      expect((await statusOf(p)).current_room).to.equal('lockkeepers_square');
      await placeIn(p, 'casting_floor');
      await expectReply(p, 'flee', true, `You recall to The Old Foundry's spawn point.\n${lookText('foundry_gate')}`);
      await expectReply(p, 'flee', true, 'You are already at the spawn point.');
      await placeIn(p, 'slag_pool');
      await expectReply(p, 'scurry', true, `You recall to The Drowned Works's spawn point.\n${lookText('eel_cistern')}`);
      await expectReply(p, '/SCURRY', true, 'You are already at the spawn point.');
      await placeIn(p, 'weathercock_ledge');
      await expectReply(p, 'recall', true, `You recall to The Bellwatch's spawn point.\n${lookText('bell_stair')}`);
      expect((await statusOf(p)).current_room).to.equal('bell_stair');
    });

    it('who: "No other players online." alone; the other active players otherwise, caller excluded', async () => {
      const a = await newPlayer(server(), 'Alone');
      await expectReply(a, 'who', true, 'No other players online.');
      // Characters without a session, and sessions without a character, are not players online.
      await registerGuest(server(), uniqueName('Offline'));
      const { username } = await registerGuest(server(), uniqueName('Unbound'));
      await loginAs(server(), username);
      await expectReply(a, 'who', true, 'No other players online.');
      const b = await newPlayer(server(), 'Bee', 'weathercock_ledge');
      const c = await newPlayer(server(), 'Cee');
      const reply = await cmd(a, '/WHO');
      expect(reply.success).to.equal(true);
      const [head, ...lines] = reply.message.split('\n');
      expect(head).to.equal('Active players:');
      expect(lines.sort()).to.deep.equal([` - ${b.name}`, ` - ${c.name}`].sort());
      const fromB = await okCmd(b, 'who');
      expect(fromB.split('\n').slice(1).sort()).to.deep.equal([` - ${a.name}`, ` - ${c.name}`].sort());
      // Logging out takes a player off the list.
      await server().post('/logout', { session_id: c.sessionId });
      await expectReply(a, 'who', true, `Active players:\n - ${b.name}`);
    });

    it('help and ? list every verb and alias of the specification, without kick', async () => {
      const p = await newPlayer(server());
      const text = await okCmd(p, 'help');
      expect(await okCmd(p, '?')).to.equal(text);
      expect(await okCmd(p, '/HELP')).to.equal(text);
      expect(await okCmd(p, '/?')).to.equal(text);
      expect(text.startsWith('\n[Available Commands]\n')).to.equal(true);
      expect(text.endsWith('\nNote: Commands can be used with or without the / prefix\n')).to.equal(true);
      expect(text.toLowerCase()).to.not.include('kick');
      const lines = text.split('\n');
      for (const line of lines) expect(line, JSON.stringify(line)).to.not.match(/\s$/);
      // The reference server's help lines without the kick line.
      const referenceLines = [
        '[Available Commands]',
        'Movement:',
        '  /north, /n, /south, /s, /east, /e, /west, /w - Move in a direction',
        '  /up, /u, /down, /d - Move up or down',
        'Actions:',
        '  /look, /l - Examine the current room',
        '  /inventory, /inv, /i - View your inventory',
        '  /get <item>, /take <item> - Pick up an item',
        '  /drop <item> - Drop an item',
        '  /recall, /flee, /scurry - Return to zone spawn point',
        'Communication:',
        '  /yell <message> - Yell to current room and adjoining rooms',
        '  /whisper <player> <message> - Send private message to a player in this room (same-room only)',
        'Other:',
        '  /who - List active players',
        '  /help, /? - Show this help message',
        'Note: Commands can be used with or without the / prefix',
      ];
      for (const line of referenceLines) expect(lines, line).to.include(line);
      const sayLine = lines.find((l) => l.startsWith('  /say <message>'));
      expect(sayLine, 'the say line').to.be.a('string');
      expect(sayLine!.endsWith(' - Send a message to the current room')).to.equal(true);
      // The specification's verbs, then the social verbs (docs/decisions.md, "Social verbs"), then moderation's (a player's: no wall).
      const aliases = ['north', 'n', 'south', 's', 'east', 'e', 'west', 'w', 'up', 'u', 'down', 'd', 'look', 'l', 'inventory', 'inv', 'i', 'get', 'take', 'drop', 'say', 'chat', 'yell', 'whisper', 'recall', 'flee', 'scurry', 'who', 'help', '?'];
      aliases.push('go', 'exits', 'examine', 'exa', 'emote', 'pose', 'tell', 'ooc');
      aliases.push('ignore', 'unignore', 'report');
      const listed = new Set(text.match(/\/[a-z?]+/g));
      for (const alias of aliases) expect(listed.has(`/${alias}`), `/${alias} in help`).to.equal(true);
      // Every listed command is one the game knows.
      for (const c of listed) expect(aliases, c).to.include(c.slice(1));
    });

    it('an unknown verb: "Unknown command: <verb>. ..." with the verb lower-cased and one slash removed; kick is unknown', async () => {
      const p = await newPlayer(server());
      await expectReply(p, 'dance wildly', false, "Unknown command: dance. Type 'help' for available commands.");
      await expectReply(p, '/DANCE', false, "Unknown command: dance. Type 'help' for available commands.");
      await expectReply(p, '//look', false, "Unknown command: /look. Type 'help' for available commands.");
      await expectReply(p, `kick ${p.name}`, false, "Unknown command: kick. Type 'help' for available commands.");
      await expectReply(p, 'whisperx Bob hi', false, "Unknown command: whisperx. Type 'help' for available commands.");
    });

    it('an empty command, or a slash alone: "Enter a command."', async () => {
      const p = await newPlayer(server());
      for (const c of ['', '   ', '/', '/   ', ' \t/ ']) await expectReply(p, c, false, 'Enter a command.');
    });
  });

  describe('/status and /chat', () => {
    it('/status: every active player of the world sorted (caller included), the room id and the inventory text', async () => {
      const a = await newPlayer(server(), 'Zed');
      const b = await newPlayer(server(), 'Amy', 'bell_chamber');
      const c = await newPlayer(server(), 'Mia');
      await registerGuest(server(), uniqueName('Offline'));
      const all = [a.name, b.name, c.name].sort();
      expect(await statusOf(a)).to.deep.equal({ active_players: all, linkdead_players: [], current_room: 'lockkeepers_square', inventory: 'Your inventory is empty.' });
      await okCmd(b, 'get bell winding key');
      expect(await statusOf(b)).to.deep.equal({ active_players: all, linkdead_players: [], current_room: 'bell_chamber', inventory: 'Your inventory:\n  - Bell Winding Key\n' });
      await server().post('/logout', { session_id: c.sessionId });
      expect((await statusOf(a)).active_players).to.deep.equal([a.name, b.name].sort());
    });

    it('/chat: empty, then the last 20 messages oldest first, as text and structured', async () => {
      const p = await newPlayer(server(), 'Chatter');
      expect(await chat(p)).to.deep.equal({ chat: '[No messages in this room yet]', messages: [] });
      for (let i = 1; i <= 25; i++) await okCmd(p, `say message ${i}`);
      const seen = await chat(p);
      const expectedTexts = Array.from({ length: 20 }, (_, k) => `message ${k + 6}`);
      expect(seen.chat).to.equal(chatText(expectedTexts.map((t) => [p.name, t])));
      expect(seen.messages.map((m) => m.text)).to.deep.equal(expectedTexts);
      for (const m of seen.messages) {
        expect(Object.keys(m).sort()).to.deep.equal(['channel', 'created_at', 'id', 'recipient', 'sender', 'text']);
        expect(m).to.include({ sender: p.name, channel: 'say', recipient: null });
        expect(m.created_at).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      }
      const ids = seen.messages.map((m) => m.id);
      expect(ids).to.deep.equal([...ids].sort((x, y) => x - y));
      expect(new Set(ids).size).to.equal(20);
    });

    it('/chat follows the character: after moving it shows the new room\'s messages', async () => {
      const p = await newPlayer(server(), 'Mover');
      const q = await newPlayer(server(), 'Bridge', 'ropewalk_bridge');
      await okCmd(p, 'say down here');
      await okCmd(q, 'say up here');
      expect((await chat(p)).chat).to.equal(chatText([[p.name, 'down here']]));
      await okCmd(p, 'north');
      // Written before p arrived, still shown: the chat is the room's, not the presence's.
      expect((await chat(p)).chat).to.equal(chatText([[q.name, 'up here']]));
      await okCmd(p, 'south');
      expect((await chat(p)).chat).to.equal(chatText([[p.name, 'down here']]));
    });

    it('an expired session\'s character disappears from who, status and look', async () => {
      const stale = await newPlayer(server(), 'Stale');
      const fresh = await newPlayer(server(), 'Fresh');
      expect((await statusOf(fresh)).active_players).to.deep.equal([stale.name, fresh.name].sort());
      server().clock.advance(300 * MINUTE);
      // Only fresh's own request slides fresh's expiry; who and status read it once written.
      expect((await statusOf(fresh)).active_players).to.deep.equal([stale.name, fresh.name].sort());
      await server().services.sessions.flushActivity();
      server().clock.advance(200 * MINUTE);
      await expectReply(fresh, 'who', true, 'No other players online.');
      expect((await statusOf(fresh)).active_players).to.deep.equal([fresh.name]);
      expect(await look(fresh)).to.equal(lookText('lockkeepers_square'));
      expect((await server().get(`/status/${stale.sessionId}`)).status).to.equal(401);
    });
  });

  describe('the whole demo world', () => {
    it('a fresh character walks every room and picks up all 11 items', async () => {
      const p = await newPlayer(server(), 'Explorer');
      const visited: string[] = [];
      const collected: string[] = [];
      const visit = async (description: string): Promise<void> => {
        const header = /\n=== (.+) ===\n/.exec(description);
        expect(header, description).to.not.equal(null);
        visited.push(header![1]!);
        const items = /\n\[Items here\]:\n((?: {2}- .+\n)*)/.exec(description);
        if (!items) return;
        for (const line of items[1]!.split('\n').filter(Boolean)) {
          const name = line.slice('  - '.length);
          await expectReply(p, `get ${name}`, true, `You picked up the ${name}.`);
          collected.push(name);
        }
      };
      await visit(await look(p));
      for (const direction of WALK) {
        const reply = await cmd(p, direction);
        expect(reply.success, `${direction} from ${visited.at(-1)}: ${reply.message}`).to.equal(true);
        expect(reply.message.startsWith(`You move ${direction}.\n`)).to.equal(true);
        await visit(reply.message);
      }
      const allRooms = [...WORLD.rooms.values()].map((r) => r.name).sort();
      expect([...new Set(visited)].sort()).to.deep.equal(allRooms);
      const allItems = [...WORLD.rooms.values()].flatMap((r) => r.items.map(itemName)).sort();
      expect(allItems).to.have.length(11);
      expect([...collected].sort()).to.deep.equal(allItems);
      const inventory = await okCmd(p, 'inventory');
      expect(inventory.startsWith('Your inventory:\n')).to.equal(true);
      expect(inventory.split('\n').slice(1, -1).map((l) => l.slice(4)).sort()).to.deep.equal(allItems);
      expect((await statusOf(p)).current_room).to.equal(WORLD.spawnRoom);
      const held = await server().db('item_instances').where({ world_id: WORLD_ID, character_id: p.characterId }).count({ n: '*' }).first();
      expect(Number(held!.n)).to.equal(11);
    });
  });
});

// ---------------------------------------------------------------------------------------
// A world where two exits lead to one room and one exit leads back into the room itself
// ---------------------------------------------------------------------------------------

describe(`game: yell reaches each room once (${DB_NAME})`, function () {
  let server: TestServer;
  let worldsRoot: string;
  let world: WorldInfo;
  before(async () => {
    worldsRoot = mkdtempSync(path.join(tmpdir(), 'mud-worlds-'));
    for (const id of readdirSync(path.resolve('worlds'))) cpSync(path.resolve('worlds', id), path.join(worldsRoot, id), { recursive: true });
    const zonePath = path.join(worldsRoot, WORLD_ID, 'zones', 'canal_quarter.json');
    const zone = JSON.parse(readFileSync(zonePath, 'utf8'));
    const wharf = Array.isArray(zone.rooms) ? zone.rooms.find((r: { id: string }) => r.id === 'tinkers_wharf') : zone.rooms.tinkers_wharf;
    wharf.exits.south = 'lockkeepers_square';
    wharf.exits.north = 'tinkers_wharf';
    writeFileSync(zonePath, JSON.stringify(zone, null, 2));
    world = readWorld(path.join(worldsRoot, WORLD_ID));
    server = await startTestServer({ env: { MUD_WORLDS_ROOT: worldsRoot } });
  });
  after(async () => {
    await server?.close();
    rmSync(worldsRoot, { recursive: true, force: true });
  });

  it('the yeller\'s room, reached again by a loop exit, and a room reached by two exits each get the yell once', async () => {
    const yeller = await newPlayer(server, 'Yeller', 'tinkers_wharf');
    const square = await newPlayer(server, 'Square');
    const cistern = await newPlayer(server, 'Cistern', 'eel_cistern');
    expect(await look(yeller)).to.equal(lookText('tinkers_wharf', { world }));
    expect(world.rooms.get('tinkers_wharf')!.exits).to.deep.equal([
      ['east', 'lockkeepers_square'],
      ['down', 'eel_cistern'],
      ['south', 'lockkeepers_square'],
      ['north', 'tinkers_wharf'],
    ]);
    await expectReply(yeller, 'yell Once!', true, 'You yell: Once!');
    const heard = chatText([[yeller.name, '[YELL] Once!']]);
    for (const p of [yeller, square, cistern]) expect((await chat(p)).chat, p.name).to.equal(heard);
    const rows = await server.db('chat_messages').where({ world_id: WORLD_ID }).orderBy('room_id').select('room_id');
    expect(rows.map((r) => r.room_id)).to.deep.equal(['eel_cistern', 'lockkeepers_square', 'tinkers_wharf']);
  });
});

// ---------------------------------------------------------------------------------------
// Restart
// ---------------------------------------------------------------------------------------

describe(`game: state survives a restart (${DB_NAME})`, function () {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  after(async () => {
    // The second runs on the first one's database; the first one's close() removes it.
    await second?.close();
    await first?.close();
  });

  it('room, inventory, room contents and chat are the same after the server is restarted', async () => {
    first = await startTestServer();
    const p = await newPlayer(first, 'Survivor');
    await okCmd(p, 'north');
    await expectReply(p, 'get hemp rope coil', true, 'You picked up the Hemp Rope Coil.');
    await okCmd(p, 'say before the restart');
    // Stop the first server (its database stays), then start a new one on the same database.
    await first.stop();
    second = await startTestServer({ shareDatabaseWith: first, clock: first.clock });
    // The old session is still valid: sessions live in the database too.
    const old: Player = { ...p, server: second };
    expect(await statusOf(old)).to.deep.equal({ active_players: [p.name], linkdead_players: [], current_room: 'ropewalk_bridge', inventory: 'Your inventory:\n  - Hemp Rope Coil\n' });
    // Log in again on the new server.
    const sessionId = await loginAs(second, p.username);
    await selectCharacter(second, sessionId, p.characterId);
    const again: Player = { ...p, server: second, sessionId };
    // The coil was not placed again by the new server's start-up.
    expect(await look(again)).to.equal(lookText('ropewalk_bridge', { items: [] }));
    await expectReply(again, 'inventory', true, 'Your inventory:\n  - Hemp Rope Coil\n');
    expect((await chat(again)).chat).to.equal(chatText([[p.name, 'before the restart']]));
    expect(await itemRows(second, 'hemp_coil')).to.deep.equal([{ room_id: null, character_id: p.characterId }]);
    const count = await second.db('item_instances').where({ world_id: WORLD_ID }).count({ n: '*' }).first();
    expect(Number(count!.n)).to.equal(11);
  });
});
