/**
 * What a world may grow to, and what growing costs (issue 30, findings 2, 3 and 7): caps on rooms
 * per world and items per room, building counted by the shared limits, a change that reads what
 * it touches and not the world, `@idesc` with one lookup, a room whose text stays bounded however
 * much lies in it, item changes sent as items, and a room that 1,500 rooms lead into deleted in
 * one change. Rows a test needs in bulk are written behind the server, as an import would.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import path from 'node:path';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, login, sessionFor } from '../helpers/accounts.ts';
import { cmd, newPlayer, okCmd, selectCharacter, wroteBehindServer, type Player } from '../helpers/players.ts';
import { openStream } from '../helpers/sse.ts';
import { eventually } from '../helpers/eventually.ts';
import { loadWorld } from '../../src/services/worlds/world-loader.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';

/** A worldbuilder session playing a character of its own in emberwick, as a Player. */
async function builderPlayer(server: TestServer, username: string): Promise<Player> {
  await createUser(server, username, 'worldbuilder');
  const sessionId = await login(server, username);
  const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(sessionId));
  expect(created.status, created.text).to.equal(200);
  await selectCharacter(server, sessionId, created.body.character_id as number);
  return { server, name: created.body.character_name, username, characterId: created.body.character_id as number, sessionId };
}

/** `count` rooms of canal_quarter written behind the server, as one more revision of the world, each with `exits`. */
async function roomsBehind(server: TestServer, prefix: string, count: number, exits: Record<string, string> = {}): Promise<void> {
  const last = await server.db('world_rooms').where({ world_id: 'emberwick' }).max({ revision: 'revision' }).first();
  const revision = Number(last?.revision ?? 0) + 1;
  const rows = Array.from({ length: count }, (_, i) => ({
    world_id: 'emberwick',
    room_id: `${prefix}_${i}`,
    zone_id: 'canal_quarter',
    name: `${prefix} ${i}`,
    description: 'A room written behind the server.',
    exits: JSON.stringify(exits),
    deleted: false,
    version: 1,
    revision,
    updated_at: '2026-11-27 00:00:00',
  }));
  for (let i = 0; i < rows.length; i += 100) await server.db('world_rooms').insert(rows.slice(i, i + 100));
}

/** `count` items lying in a room, written behind the server. */
async function itemsBehind(server: TestServer, roomId: string, count: number, name = 'Pebble'): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => ({ world_id: 'emberwick', item_id: `behind-${roomId}-${i}`, room_id: roomId, character_id: null, name: `${name} ${i}`, description: 'Small.', version: 1 }));
  for (let i = 0; i < rows.length; i += 100) await server.db('item_instances').insert(rows.slice(i, i + 100));
}

describe(`building bounds (${DB_NAME})`, function () {
  this.timeout(120_000);
  let server: TestServer;
  let packageRooms: number;
  const call = (session: string, method: string, urlPath: string, body?: unknown): Promise<HttpResponse> => server.request(method, urlPath, body, bearer(session));

  before(async () => {
    packageRooms = (await loadWorld(path.resolve('worlds/emberwick'))).rooms.size;
  });

  describe('caps', () => {
    let mason: Player;
    before(async () => {
      server = await startTestServer({ env: { MUD_BUILDING_MAX_ROOMS_PER_WORLD: String(packageRooms + 1), MUD_BUILDING_MAX_ITEMS_PER_ROOM: '3' } });
      mason = await builderPlayer(server, 'mason');
    });
    after(async () => {
      await server.close();
    });

    it('refuses a room past [building] max_rooms_per_world with a 409 naming the bound, on both doors, and a deleted one makes room', async () => {
      const first = await call(mason.sessionId, 'POST', `${W}/rooms`, { id: 'last_nook', name: 'Last Nook', description: 'The last room there is room for.' });
      expect(first.status, first.text).to.equal(201);
      const refused = await call(mason.sessionId, 'POST', `${W}/rooms`, { id: 'one_too_many', name: 'One Too Many', description: 'Never built.' });
      expect(refused.status).to.equal(409);
      expect(refused.body.detail).to.equal(`World 'emberwick' has ${packageRooms + 1} rooms, the most it may have ([building] max_rooms_per_world)`);
      const dug = await cmd(mason, '@dig south Overflow');
      expect(dug).to.deep.equal({ success: false, message: refused.body.detail });
      expect(await server.db('world_rooms').where({ room_id: 'one_too_many' }).first()).to.equal(undefined);
      expect((await call(mason.sessionId, 'DELETE', `${W}/rooms/last_nook?version=1`)).status).to.equal(200);
      expect((await call(mason.sessionId, 'POST', `${W}/rooms`, { id: 'one_more', name: 'One More', description: 'Room again.' })).status).to.equal(201);
    });

    it('refuses an item past [building] max_items_per_room: created there, moved there, or dropped there', async () => {
      const room = 'one_more';
      for (const name of ['Cup', 'Plate', 'Spoon']) expect((await call(mason.sessionId, 'POST', `${W}/rooms/${room}/items`, { name, description: 'Tin.' })).status).to.equal(201);
      const refused = await call(mason.sessionId, 'POST', `${W}/rooms/${room}/items`, { name: 'Fork', description: 'Tin.' });
      expect(refused.status).to.equal(409);
      expect(refused.body.detail).to.equal(`Room '${room}' holds 3 items, the most one room may hold ([building] max_items_per_room)`);
      const elsewhere = await call(mason.sessionId, 'POST', `${W}/rooms/tinkers_wharf/items`, { name: 'Knife', description: 'Tin.' });
      const moved = await call(mason.sessionId, 'PATCH', `${W}/items/${elsewhere.body.id}`, { version: 1, room_id: room });
      expect(moved.status).to.equal(409);
      expect(moved.body.detail).to.equal(refused.body.detail);

      const walker = await newPlayer(server, 'Walker', 'tinkers_wharf');
      expect(await okCmd(walker, 'get knife')).to.equal('You picked up the Knife.');
      await server.db('characters').where({ id: walker.characterId }).update({ room_id: room });
      await wroteBehindServer(server);
      expect(await cmd(walker, 'drop knife')).to.deep.equal({ success: false, message: 'There is no room to drop anything more here.' });
      expect(await okCmd(walker, 'inventory')).to.contain('  - Knife\n');
    });
  });

  describe('the building limit', () => {
    before(async () => {
      server = await startTestServer({ env: { MUD_RATE_LIMIT_ENABLED: 'true', MUD_RATE_LIMIT_BUILD_PER_ACCOUNT: '3' } });
    });
    after(async () => {
      await server.close();
    });

    it('counts changes per account on both doors: past [rate_limit] build_per_account a change answers 429 and writes nothing; other builders go on', async () => {
      const mason = await builderPlayer(server, 'mason');
      expect(await okCmd(mason, '@name The Busy Square')).to.equal('This room is now called The Busy Square.');
      for (const name of ['Cup', 'Plate']) expect((await call(mason.sessionId, 'POST', `${W}/rooms/tinkers_wharf/items`, { name, description: 'Tin.' })).status).to.equal(201);
      const refused = await call(mason.sessionId, 'POST', `${W}/rooms/tinkers_wharf/items`, { name: 'Spoon', description: 'Tin.' });
      expect(refused.status).to.equal(429);
      expect(refused.body.detail).to.match(/^Too many building changes\. Try again in \d+ seconds?\.$/);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      expect((await cmd(mason, '@desc Crowded.')).message).to.equal(refused.body.detail);
      expect(await server.db('item_instances').where({ name: 'Spoon' }).first()).to.equal(undefined);
      const other = await sessionFor(server, 'joiner', 'worldbuilder');
      expect((await call(other, 'POST', `${W}/rooms/tinkers_wharf/items`, { name: 'Spoon', description: 'Tin.' })).status).to.equal(201);
    });
  });

  describe('a large world', () => {
    let mason: Player;
    before(async () => {
      server = await startTestServer();
      mason = await builderPlayer(server, 'mason');
    });
    after(async () => {
      await server.close();
    });

    it('a change reads what it touches, not the world: with 3,000 builders\u2019 rooms no query of a change returns more than a handful of rows', async () => {
      await roomsBehind(server, 'hall', 3000);
      await wroteBehindServer(server);
      await eventually(async () => expect((await call(mason.sessionId, 'GET', `${W}/rooms/hall_2999`)).status).to.equal(200), 5000);
      let most = 0;
      const count = (response: unknown) => {
        if (Array.isArray(response)) most = Math.max(most, response.length);
      };
      server.db.on('query-response', count);
      try {
        const renamed = await call(mason.sessionId, 'PATCH', `${W}/rooms/hall_7`, { version: 1, name: 'Hall Seven' });
        expect(renamed.status, renamed.text).to.equal(200);
        const dug = await call(mason.sessionId, 'POST', `${W}/rooms`, { id: 'hall_annex', name: 'Hall Annex', description: 'Beside the halls.' });
        expect(dug.status, dug.text).to.equal(201);
      } finally {
        server.db.off('query-response', count);
      }
      expect(most).to.be.at.most(5);
      // The change is served at once, and the world is whole.
      expect((await call(mason.sessionId, 'GET', `${W}/rooms/hall_7`)).body.name).to.equal('Hall Seven');
      const listed = await call(mason.sessionId, 'GET', `${W}/rooms`);
      expect(listed.body.rooms.length).to.equal(packageRooms + 3001);
    });

    it('deletes a room that 1,500 rooms lead into in one change, each of their exits recorded (SQLite refused the history as one statement)', async () => {
      await roomsBehind(server, 'hub', 1);
      await server.db('world_rooms').where({ room_id: 'hub_0' }).update({ room_id: 'hub' });
      await roomsBehind(server, 'spoke', 1500, { north: 'hub' });
      await wroteBehindServer(server);
      const gone = await call(mason.sessionId, 'DELETE', `${W}/rooms/hub?version=1`);
      expect(gone.status, gone.text).to.equal(200);
      const history = await server.db('world_changes').where({ world_id: 'emberwick', action: 'exit.remove' }).count({ n: '*' }).first();
      expect(Number(history!.n)).to.equal(1500);
      const spoke = await call(mason.sessionId, 'GET', `${W}/rooms/spoke_1499`);
      expect(spoke.body.exits).to.deep.equal({});
      expect(spoke.body.version).to.equal(2);
      expect((await call(mason.sessionId, 'GET', `${W}/rooms/hub`)).status).to.equal(404);
    });

    it('@idesc finds its item with one read of the room, however long the text', async () => {
      await itemsBehind(server, 'chandlers_row', 300);
      await wroteBehindServer(server);
      await server.db('characters').where({ id: mason.characterId }).update({ room_id: 'chandlers_row' });
      await wroteBehindServer(server);
      let itemReads = 0;
      const count = (query: { sql: string }) => {
        if (/^select .*item_instances/i.test(query.sql)) itemReads++;
      };
      server.db.on('query', count);
      const text = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
      try {
        expect(await okCmd(mason, `@idesc pebble 299 ${text}`)).to.equal('You describe Pebble 299 anew.');
      } finally {
        server.db.off('query', count);
      }
      // The lookup, and the update's read of the row it changes.
      expect(itemReads).to.be.at.most(2);
      expect((await server.db('item_instances').where({ name: 'Pebble 299' }).first()).description).to.equal(text);
    });

    it('a room with 1,200 items: look names 50 and counts the rest; walking in keeps the stream, and item changes send the item, not the room', async () => {
      await itemsBehind(server, 'ropewalk_bridge', 1200, 'Shell');
      await wroteBehindServer(server);
      const walker = await newPlayer(server, 'Walker', 'lockkeepers_square');
      const stream = await openStream(`${server.url}/events/${walker.sessionId}`);
      try {
        const moved = await okCmd(walker, 'north');
        // The bridge's own Hemp Rope Coil, then 49 shells.
        expect(moved).to.contain('  - Hemp Rope Coil\n').and.contain('  - Shell 48\n').and.contain('  (and 1,151 more)\n').and.not.contain('Shell 49\n');
        expect(moved.length).to.be.below(8000);
        const room = await stream.nextOf('room', 5000);
        expect(room.data.look).to.contain('  (and 1,151 more)\n');
        // More than its bound already lies there: a builder may add none.
        expect((await call(mason.sessionId, 'POST', `${W}/rooms/ropewalk_bridge/items`, { name: 'Net', description: 'Wet.' })).status).to.equal(409);
        // Back in the square, builders' item changes: three small item events, then the room only when the room itself changes.
        await okCmd(walker, 'south');
        await stream.nextOf('room', 5000);
        for (const name of ['Net', 'Oar', 'Rope']) expect((await call(mason.sessionId, 'POST', `${W}/rooms/lockkeepers_square/items`, { name, description: 'Wet.' })).status).to.equal(201);
        const square = (await call(mason.sessionId, 'GET', `${W}/rooms/lockkeepers_square`)).body;
        expect((await call(mason.sessionId, 'PATCH', `${W}/rooms/lockkeepers_square`, { version: square.version, description: 'Nets hang everywhere.' })).status).to.equal(200);
        const seen: string[] = [];
        for (;;) {
          const event = await stream.next(5000);
          if (event.event === 'item') seen.push(`${event.data.action} ${event.data.item}`);
          if (event.event === 'room') {
            expect(event.data.look).to.contain('Nets hang everywhere.').and.contain('  - Rope\n');
            break;
          }
        }
        expect(seen).to.deep.equal(['appear Net', 'appear Oar', 'appear Rope']);
        expect(server.services.streams.stats().endedByReason.lagging ?? 0).to.equal(0);
      } finally {
        stream.close();
      }
    });
  });
});
