/**
 * Building worlds while they are played (docs/decisions.md, "Building worlds"): the building
 * API's rules, versions and denials, the history and revert, and the builders' `@` commands in
 * the game, all through HTTP on a real database.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { builderPlayer, cmd, newPlayer, okCmd, wroteBehindServer, type Player } from '../helpers/players.ts';
import { openStream } from '../helpers/sse.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';

describe(`building worlds (${DB_NAME})`, function () {
  let server: TestServer;
  let builder: string;
  let admin: string;
  let player: Player;
  const call = (session: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> =>
    server.request(method, path, body, { ...bearer(session), ...headers });

  before(async () => {
    server = await startTestServer();
    builder = await sessionFor(server, 'mason', 'worldbuilder');
    admin = await sessionFor(server, 'warden', 'admin');
    player = await newPlayer(server, 'Walker');
  });
  after(async () => {
    await server.close();
  });

  describe('denials', () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', `${W}/rooms`],
      ['POST', `${W}/rooms`, { name: 'X', description: 'Y' }],
      ['GET', `${W}/rooms/lockkeepers_square`],
      ['PATCH', `${W}/rooms/lockkeepers_square`, { version: 1, name: 'X' }],
      ['DELETE', `${W}/rooms/tinkers_wharf?version=1`],
      ['POST', `${W}/rooms/tinkers_wharf/revert`, { version: 1 }],
      ['POST', `${W}/rooms/tinkers_wharf/exits`, { direction: 'north', to: 'chandlers_row', version: 1 }],
      ['DELETE', `${W}/rooms/tinkers_wharf/exits/east?version=1`],
      ['POST', `${W}/rooms/tinkers_wharf/items`, { name: 'X', description: 'Y' }],
      ['GET', `${W}/items/1`],
      ['PATCH', `${W}/items/1`, { version: 1, name: 'X' }],
      ['DELETE', `${W}/items/1?version=1`],
      ['GET', `${W}/changes`],
    ];

    it('answers a player 403 on every building route, and changes nothing', async () => {
      for (const [method, path, body] of routes) {
        const res = await call(player.sessionId, method, path, body);
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(403);
        expect(res.body.detail).to.equal('Insufficient permissions. Required: edit_world');
      }
      expect(await server.db('world_rooms').count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 0);
      expect(await server.db('world_changes').count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 0);
    });

    it('answers 401 without a session', async () => {
      expect((await server.get(`${W}/rooms`)).status).to.equal(401);
      expect((await server.request('PATCH', `${W}/rooms/lockkeepers_square`, { version: 1, name: 'X' })).status).to.equal(401);
    });

    it('refuses a world the account may not enter, and a session playing in another world', async () => {
      const invite = await call(builder, 'GET', '/api/worlds/hollow_spire/rooms');
      expect(invite.status, invite.text).to.equal(403);
      expect(invite.body.detail).to.equal("This account has no access to world 'hollow_spire'");
      // Admins may enter every world; but a session playing in emberwick edits only emberwick.
      expect((await call(admin, 'GET', '/api/worlds/hollow_spire/rooms')).status).to.equal(200);
      const playing = await builderPlayer(server, 'tiler', 'admin');
      const other = await call(playing.sessionId, 'GET', '/api/worlds/hollow_spire/rooms');
      expect(other.status).to.equal(403);
      expect(other.body.detail).to.equal("This session plays in world 'emberwick' and cannot change world 'hollow_spire'");
      expect((await call(playing.sessionId, 'GET', `${W}/rooms`)).status).to.equal(200);
    });

    it('answers 404 for an unknown world, room and item', async () => {
      expect((await call(admin, 'GET', '/api/worlds/nowhere/rooms')).body).to.deep.equal({ detail: "World 'nowhere' not found" });
      expect((await call(builder, 'GET', `${W}/rooms/nowhere`)).body).to.deep.equal({ detail: "Room 'nowhere' not found in world 'emberwick'" });
      expect((await call(builder, 'GET', `${W}/items/99999`)).body).to.deep.equal({ detail: "Item 99999 not found in world 'emberwick'" });
    });
  });

  describe('rooms, versions and exits', () => {
    it('lists the package rooms at version 1 and reads one with its items and ETag', async () => {
      const list = await call(builder, 'GET', `${W}/rooms`);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.rooms).to.have.length(18);
      expect(list.body.rooms[0]).to.deep.include({ id: 'lockkeepers_square', zone: 'canal_quarter', version: 1, origin: 'package', changed: false });
      const room = await call(builder, 'GET', `${W}/rooms/sooty_heron_taproom`);
      expect(room.headers.get('etag')).to.equal('"1"');
      expect(room.body.items.map((i: { item_id: string }) => i.item_id)).to.deep.equal(['pewter_tankard']);
    });

    it('never answers 304 or lets an answer be stored: the ETag is the version, and items change without it', async () => {
      const room = await call(builder, 'GET', `${W}/rooms/chandlers_row`, undefined, { 'If-None-Match': '"1"' });
      expect(room.status).to.equal(200);
      expect(room.headers.get('cache-control')).to.equal('no-store');
      expect(room.body.items).to.have.length(1);
    });

    it('creates a room (id from the name when none is given) and refuses a taken id, an unknown zone and blank or long names', async () => {
      const res = await call(builder, 'POST', `${W}/rooms`, { name: 'Lamplit Cellar', description: 'A low brick cellar.' });
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.deep.equal({ id: 'lamplit_cellar', zone: 'canal_quarter', name: 'Lamplit Cellar', description: 'A low brick cellar.', exits: {}, script: null, version: 1, origin: 'builder', changed: true, items: [], script_suspended: false });
      expect(res.headers.get('etag')).to.equal('"1"');
      const again = await call(builder, 'POST', `${W}/rooms`, { name: 'Lamplit Cellar', description: 'Another.' });
      expect(again.body.id).to.equal('lamplit_cellar_2');
      const taken = await call(builder, 'POST', `${W}/rooms`, { id: 'lamplit_cellar', name: 'X', description: 'Y' });
      expect(taken.status).to.equal(409);
      expect(taken.body.detail).to.equal("Room 'lamplit_cellar' already exists in world 'emberwick'");
      expect((await call(builder, 'POST', `${W}/rooms`, { zone: 'atlantis', name: 'X', description: 'Y' })).status).to.equal(404);
      const blank = await call(builder, 'POST', `${W}/rooms`, { name: '   ', description: 'Y' });
      expect(blank.status).to.equal(400);
      expect(blank.body.detail).to.equal('Room name must not be empty');
      expect((await call(builder, 'POST', `${W}/rooms`, { name: 'x'.repeat(101), description: 'Y' })).status).to.equal(400);
      const cleaned = await call(builder, 'POST', `${W}/rooms`, { id: 'odd_nook', name: 'Odd\u202e Nook\u0007', description: 'Cafe\u0301 corner,\nquiet.' });
      expect(cleaned.body).to.deep.include({ name: 'Odd Nook', description: 'Caf\u00e9 corner, quiet.' });
      expect((await call(builder, 'POST', `${W}/rooms`, { name: 'X', description: 'y'.repeat(1001) })).status).to.equal(400);
    });

    it('refuses a stale or missing version and names the current one', async () => {
      const first = await call(builder, 'PATCH', `${W}/rooms/lamplit_cellar_2`, { description: 'A damp cellar.' }, { 'If-Match': '"1"' });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.version).to.equal(2);
      expect(first.headers.get('etag')).to.equal('"2"');
      const stale = await call(builder, 'PATCH', `${W}/rooms/lamplit_cellar_2`, { version: 1, description: 'Lost update.' });
      expect(stale.status).to.equal(409);
      expect(stale.body).to.deep.equal({ detail: "Room 'lamplit_cellar_2' is at version 2, not 1 as sent; read it again", current_version: 2 });
      const missing = await call(builder, 'PATCH', `${W}/rooms/lamplit_cellar_2`, { description: 'No version.' });
      expect(missing.status).to.equal(400);
      expect(missing.body.detail).to.equal('Send the version you last read: an If-Match header (its ETag) or version.');
      const disagree = await call(builder, 'PATCH', `${W}/rooms/lamplit_cellar_2`, { version: 2, description: 'x' }, { 'If-Match': '"3"' });
      expect(disagree.status).to.equal(400);
      expect((await call(builder, 'GET', `${W}/rooms/lamplit_cellar_2`)).body.description).to.equal('A damp cellar.');
    });

    it('adds two-way exits that players use at once, and refuses duplicates and missing rooms', async () => {
      const walker = await newPlayer(server, 'Stroller', 'sooty_heron_taproom');
      const res = await call(builder, 'POST', `${W}/rooms/sooty_heron_taproom/exits`, { direction: 'down', to: 'lamplit_cellar', two_way: true, version: 1 });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.exits).to.deep.equal({ west: 'chandlers_row', north: 'heron_yard', down: 'lamplit_cellar' });
      expect(res.body.version).to.equal(2);
      const cellar = await call(builder, 'GET', `${W}/rooms/lamplit_cellar`);
      expect(cellar.body.exits).to.deep.equal({ up: 'sooty_heron_taproom' });
      expect(cellar.body.version).to.equal(2);
      const moved = await okCmd(walker, 'down');
      expect(moved).to.contain('=== Lamplit Cellar ===').and.contain('A low brick cellar.').and.contain('up: The Sooty Heron');
      const duplicate = await call(builder, 'POST', `${W}/rooms/sooty_heron_taproom/exits`, { direction: 'down', to: 'chandlers_row', version: 2 });
      expect(duplicate.status).to.equal(409);
      expect(duplicate.body.detail).to.equal("Room 'sooty_heron_taproom' already has an exit down (to 'lamplit_cellar'); remove it first");
      const nowhere = await call(builder, 'POST', `${W}/rooms/sooty_heron_taproom/exits`, { direction: 'up', to: 'nowhere', version: 2 });
      expect(nowhere.status).to.equal(409);
      expect(nowhere.body.detail).to.equal("An exit must lead to a room of world 'emberwick': there is no room 'nowhere'");
      const theirs = await call(builder, 'POST', `${W}/rooms/lamplit_cellar_2/exits`, { direction: 'east', to: 'sooty_heron_taproom', two_way: true, version: 2 });
      expect(theirs.status).to.equal(409);
      expect(theirs.body.detail).to.equal("Room 'sooty_heron_taproom' already has an exit west (to 'chandlers_row'); remove it first");
    });

    it('removes an exit one-way or both ways', async () => {
      const missing = await call(builder, 'DELETE', `${W}/rooms/lamplit_cellar/exits/north?version=2`);
      expect(missing.status).to.equal(404);
      expect(missing.body.detail).to.equal("Room 'lamplit_cellar' has no exit north");
      const res = await call(builder, 'DELETE', `${W}/rooms/sooty_heron_taproom/exits/down?version=2&two_way=true`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.exits).to.deep.equal({ west: 'chandlers_row', north: 'heron_yard' });
      expect((await call(builder, 'GET', `${W}/rooms/lamplit_cellar`)).body.exits).to.deep.equal({});
    });

    it('refuses to delete a spawn room or a room someone stands in; a deletion takes the exits into the room and its items along', async () => {
      const spawn = await call(builder, 'DELETE', `${W}/rooms/lockkeepers_square?version=1`);
      expect(spawn.status).to.equal(409);
      expect(spawn.body.detail).to.equal("Room 'lockkeepers_square' is the world's spawn room and cannot be deleted");
      const zoneSpawn = await call(builder, 'DELETE', `${W}/rooms/foundry_gate?version=1`);
      expect(zoneSpawn.body.detail).to.equal("Room 'foundry_gate' is the spawn room of zone 'old_foundry' and cannot be deleted");
      const occupied = await call(builder, 'DELETE', `${W}/rooms/lamplit_cellar?version=3`);
      expect(occupied.status).to.equal(409);
      expect(occupied.body.detail).to.match(/^Room 'lamplit_cellar' cannot be deleted while characters are in it: Stroller Q/);

      const room = await call(builder, 'POST', `${W}/rooms`, { id: 'brief_nook', name: 'Brief Nook', description: 'Soon gone.' });
      await call(builder, 'POST', `${W}/rooms/tinkers_wharf/exits`, { direction: 'north', to: 'brief_nook', two_way: true, version: 1 });
      await call(builder, 'POST', `${W}/rooms/brief_nook/items`, { name: 'Odd Pebble', description: 'Round.' });
      expect(room.status).to.equal(201);
      const gone = await call(builder, 'DELETE', `${W}/rooms/brief_nook`, undefined, { 'If-Match': '"2"' });
      expect(gone.status, gone.text).to.equal(200);
      expect(gone.body).to.deep.equal({ success: true, message: "Room 'brief_nook' deleted." });
      const wharf = await call(builder, 'GET', `${W}/rooms/tinkers_wharf`);
      expect(wharf.body.exits).to.deep.equal({ east: 'lockkeepers_square', down: 'eel_cistern' });
      expect(wharf.body.version).to.equal(3);
      expect(await server.db('item_instances').where({ room_id: 'brief_nook' }).count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 0);
      expect((await call(builder, 'GET', `${W}/rooms/brief_nook`)).status).to.equal(404);
      // The id may be used again; its version goes on counting.
      const reborn = await call(builder, 'POST', `${W}/rooms`, { id: 'brief_nook', name: 'Brief Nook', description: 'Back.' });
      expect(reborn.body.version).to.equal(4);
    });

    it('keeps a zone spawn room in its zone and moves other rooms between zones', async () => {
      const spawn = await call(builder, 'PATCH', `${W}/rooms/bell_stair`, { version: 1, zone: 'canal_quarter' });
      expect(spawn.status).to.equal(409);
      expect(spawn.body.detail).to.equal("Room 'bell_stair' is the spawn room of zone 'bellwatch': it stays in zone 'bellwatch'");
      const moved = await call(builder, 'PATCH', `${W}/rooms/brief_nook`, { version: 4, zone: 'bellwatch' });
      expect(moved.status, moved.text).to.equal(200);
      expect(moved.body.zone).to.equal('bellwatch');
    });
  });

  describe('items', () => {
    let lanternId: number;
    it('creates an item that players see and take like any other', async () => {
      const res = await call(builder, 'POST', `${W}/rooms/chandlers_row/items`, { name: 'Dusty Lantern', description: 'A tin lantern.' });
      expect(res.status, res.text).to.equal(201);
      lanternId = res.body.id;
      expect(res.body).to.deep.equal({ id: lanternId, item_id: `item-${lanternId}`, name: 'Dusty Lantern', description: 'A tin lantern.', room_id: 'chandlers_row', held: false, script: null, version: 1 });
      const taker = await newPlayer(server, 'Taker', 'chandlers_row');
      expect(await okCmd(taker, 'look')).to.contain('  - Dusty Lantern\n');
      expect(await okCmd(taker, 'get dusty lantern')).to.equal('You picked up the Dusty Lantern.');
      const held = await call(builder, 'GET', `${W}/items/${lanternId}`);
      expect(held.body).to.deep.include({ room_id: null, held: true });
      const rename = await call(builder, 'PATCH', `${W}/items/${lanternId}`, { version: 1, name: 'Polished Lantern' });
      expect(rename.status, rename.text).to.equal(200);
      expect(await okCmd(taker, 'inventory')).to.contain('  - Polished Lantern\n');
      const move = await call(builder, 'PATCH', `${W}/items/${lanternId}`, { version: 2, room_id: 'lockkeepers_square' });
      expect(move.status).to.equal(409);
      expect(move.body.detail).to.equal(`Item ${lanternId} is held by a character and cannot be moved`);
      expect((await call(builder, 'DELETE', `${W}/items/${lanternId}?version=2`)).status).to.equal(409);
      await okCmd(taker, 'drop polished lantern');
    });

    it('renames a package item, moves and deletes items with versions', async () => {
      const penny = (await call(builder, 'GET', `${W}/rooms/lockkeepers_square`)).body.items[0];
      expect(penny).to.deep.include({ item_id: 'canal_penny', name: 'Canal Penny', version: 1 });
      const stale = await call(builder, 'PATCH', `${W}/items/${penny.id}`, { version: 7, name: 'X' });
      expect(stale.body).to.deep.equal({ detail: `Item '${penny.id}' is at version 1, not 7 as sent; read it again`, current_version: 1 });
      const moved = await call(builder, 'PATCH', `${W}/items/${penny.id}`, { version: 1, name: 'Bent Penny', room_id: 'ropewalk_bridge' });
      expect(moved.body).to.deep.include({ name: 'Bent Penny', room_id: 'ropewalk_bridge', version: 2 });
      const nowhere = await call(builder, 'PATCH', `${W}/items/${penny.id}`, { version: 2, room_id: 'nowhere' });
      expect(nowhere.status).to.equal(404);
      const onBridge = await newPlayer(server, 'Crosser', 'ropewalk_bridge');
      expect(await okCmd(onBridge, 'look')).to.contain('  - Bent Penny\n');
      const deleted = await call(builder, 'DELETE', `${W}/items/${penny.id}?version=2`);
      expect(deleted.body).to.deep.equal({ success: true, message: `Item ${penny.id} (Bent Penny) deleted.` });
      expect(await okCmd(onBridge, 'look')).not.to.contain('Bent Penny');
    });
  });

  describe('history and revert', () => {
    it('lists every change newest first, with who, how, before and after', async () => {
      const res = await call(builder, 'GET', `${W}/changes?limit=3`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.changes.map((c: { action: string }) => c.action)).to.deep.equal(['item.delete', 'item.update', 'item.update']);
      const [deleted, moved] = res.body.changes;
      expect(deleted).to.deep.include({ actor: 'mason', via: 'api', target_type: 'item', after: null });
      expect(deleted.before).to.deep.include({ name: 'Bent Penny' });
      expect(moved.before).to.deep.include({ name: 'Canal Penny', room_id: 'lockkeepers_square' });
      expect(moved.after).to.deep.include({ name: 'Bent Penny', room_id: 'ropewalk_bridge' });
      const older = await call(builder, 'GET', `${W}/changes?limit=500&before=${res.body.changes[2].id}`);
      expect(older.body.changes[older.body.changes.length - 1]).to.deep.include({ action: 'room.create', target_id: 'lamplit_cellar', before: null });
    });

    it('reverts a room to its package version and refuses a room the package lacks', async () => {
      const edited = await call(builder, 'PATCH', `${W}/rooms/pattern_loft`, { version: 1, name: 'Renamed Loft' });
      expect(edited.body.version).to.equal(2);
      const res = await call(builder, 'POST', `${W}/rooms/pattern_loft/revert`, { version: 2 });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.include({ name: 'Pattern Loft', version: 3, origin: 'package' });
      const own = await call(builder, 'POST', `${W}/rooms/lamplit_cellar/revert`, { version: 3 });
      expect(own.status).to.equal(409);
      expect(own.body.detail).to.equal("Room 'lamplit_cellar' is not in the package of world 'emberwick': there is nothing to revert to (delete it instead)");
    });
  });

  describe('in the game', () => {
    let mason: Player;
    before(async () => {
      mason = await builderPlayer(server, 'digger', 'worldbuilder');
      await server.db('characters').where({ id: mason.characterId }).update({ room_id: 'pattern_loft' });
      await wroteBehindServer(server);
    });

    it('lists the @ commands in help only for roles that may build; players get the unknown-command answer', async () => {
      expect(await okCmd(mason, 'help')).to.contain('Building:\n  @dig <direction> <room name>');
      expect(await okCmd(player, 'help')).not.to.contain('@dig');
      expect(await cmd(player, '@dig north Nope')).to.deep.equal({ success: false, message: "Unknown command: @dig. Type 'help' for available commands." });
    });

    it('digs, names, describes, opens exits and makes items, under the API\'s rules', async () => {
      {
        expect(await okCmd(mason, '@dig up Dusty Attic')).to.equal('You dig up and make Dusty Attic (dusty_attic).');
        expect(await cmd(mason, '@dig down Another')).to.deep.equal({ success: false, message: "Room 'pattern_loft' already has an exit down (to 'casting_floor')" });
        expect(await cmd(mason, '@dig sideways Nope')).to.deep.equal({ success: false, message: 'Unknown direction \'sideways\' (one of north, south, east, west, up, down)' });
        await okCmd(mason, 'up');
        expect(await okCmd(mason, '@name Dusty Garret')).to.equal('This room is now called Dusty Garret.');
        expect(await okCmd(mason, '@desc Cobwebs hang from the rafters.')).to.equal('You describe this room anew.');
        expect(await okCmd(mason, '@create Moth-eaten Rug')).to.match(/^You create Moth-eaten Rug \(item \d+\)\.$/);
        expect(await okCmd(mason, '@idesc moth-eaten rug A rug the moths love.')).to.equal('You describe Moth-eaten Rug anew.');
        expect(await okCmd(mason, 'examine moth-eaten rug')).to.equal('[Moth-eaten Rug]\nA rug the moths love.');
        expect(await cmd(mason, '@exit west moss_garden')).to.deep.equal({ success: false, message: "An exit must lead to a room of world 'emberwick': there is no room 'moss_garden'" });
        expect(await okCmd(mason, '@exit north lockkeepers_square')).to.equal('You open an exit north to lockkeepers_square.');
        const look = await okCmd(mason, 'look');
        expect(look).to.contain('=== Dusty Garret ===\nCobwebs hang from the rafters.').and.contain('  - Moth-eaten Rug\n').and.contain("north: Lockkeeper's Square");
        expect(await okCmd(mason, '@unexit north')).to.equal('You close the exit north.');
        expect(await okCmd(mason, '@destroy moth-eaten rug')).to.equal('You destroy Moth-eaten Rug.');
        expect(await okCmd(mason, '@rooms')).to.contain('  - dusty_attic: Dusty Garret (old_foundry) [here]');
        const history = await call(mason.sessionId, 'GET', `${W}/changes?limit=1`);
        expect(history.body.changes[0]).to.deep.include({ actor: 'digger', via: 'game', action: 'item.delete' });
      }
    });

    it('sends a room event to the players standing in a room when it changes', async () => {
      const watcher = await newPlayer(server, 'Watcher', 'casting_floor');
      const stream = await openStream(`${server.url}/events/${watcher.sessionId}`);
      try {
        const res = await call(builder, 'PATCH', `${W}/rooms/casting_floor`, { version: 1, description: 'The floor glows faintly.' });
        expect(res.status, res.text).to.equal(200);
        const event = await stream.nextOf('room', 5000);
        expect(event.data.room_id).to.equal('casting_floor');
        expect(event.data.look).to.contain('The floor glows faintly.');
        // An item change sends what changed: the item, not the room again.
        await call(builder, 'POST', `${W}/rooms/casting_floor/items`, { name: 'Glowing Slag', description: 'Warm.' });
        expect((await stream.nextOf('item', 5000)).data).to.deep.equal({ character: null, item: 'Glowing Slag', action: 'appear', room_id: 'casting_floor' });
        expect(await okCmd(watcher, 'look')).to.contain('  - Glowing Slag\n');
      } finally {
        stream.close();
      }
    });
  });

  describe('the session as session_id and as bearer', () => {
    /** `path` with the session as its `session_id` query parameter too. */
    const withSession = (path: string, session: string): string => `${path}${path.includes('?') ? '&' : '?'}session_id=${session}`;

    it('every DELETE route takes the same session sent both ways, or as session_id alone, like the routes that read', async () => {
      const made = await call(builder, 'POST', `${W}/rooms`, { id: 'twice_nook', name: 'Twice Nook', description: 'Named twice.' });
      expect(made.status, made.text).to.equal(201);
      const exit = await call(builder, 'POST', `${W}/rooms/twice_nook/exits`, { direction: 'north', to: 'tinkers_wharf', version: 1 });
      expect(exit.status, exit.text).to.equal(200);
      const pebble = await call(builder, 'POST', `${W}/rooms/twice_nook/items`, { name: 'Twice Pebble', description: 'Round.' });
      const marble = await call(builder, 'POST', `${W}/rooms/twice_nook/items`, { name: 'Twice Marble', description: 'Glass.' });

      // For comparison, a route that reads.
      const read = await call(builder, 'GET', withSession(`${W}/rooms/twice_nook`, builder));
      expect(read.status, read.text).to.equal(200);

      const both = (path: string) => call(builder, 'DELETE', withSession(path, builder));
      const exitGone = await both(`${W}/rooms/twice_nook/exits/north?version=2`);
      expect(exitGone.status, exitGone.text).to.equal(200);
      expect(exitGone.body.exits).to.deep.equal({});
      const pebbleGone = await both(`${W}/items/${pebble.body.id}?version=1`);
      expect(pebbleGone.status, pebbleGone.text).to.equal(200);
      expect(pebbleGone.body).to.deep.equal({ success: true, message: `Item ${pebble.body.id} (Twice Pebble) deleted.` });
      const alone = await server.request('DELETE', withSession(`${W}/items/${marble.body.id}?version=1`, builder));
      expect(alone.status, alone.text).to.equal(200);
      const roomGone = await both(`${W}/rooms/twice_nook?version=3`);
      expect(roomGone.status, roomGone.text).to.equal(200);
      expect(roomGone.body).to.deep.equal({ success: true, message: "Room 'twice_nook' deleted." });
    });

    it('answers 400 naming both when they differ, on DELETE as on the routes that read', async () => {
      const detail = 'session_id and the Authorization bearer token name different sessions; send one of them.';
      for (const [method, path] of [['GET', `${W}/rooms/tinkers_wharf`], ['DELETE', `${W}/rooms/tinkers_wharf?version=1`], ['DELETE', `${W}/rooms/tinkers_wharf/exits/east?version=1`], ['DELETE', `${W}/items/1?version=1`]] as const) {
        const res = await call(builder, method, withSession(path, admin));
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(400);
        expect(res.body.detail).to.equal(detail);
      }
    });

    it('names a session_id query parameter that a route does not take (400), rather than calling a valid session expired', async () => {
      const res = await call(builder, 'PATCH', withSession(`${W}/rooms/tinkers_wharf`, builder), { version: 1, name: 'X' });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.detail).to.equal('Invalid request: session_id: is not a known query parameter');
    });
  });
});
