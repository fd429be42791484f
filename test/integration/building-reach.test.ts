/**
 * A change that leaves rooms no walk from the spawn reaches is allowed, as `world-check` allows
 * such a package (with a warning), and the builder is told which rooms (issue 35): in the game
 * after `@unexit`, and in the building API's answer to removing an exit (`unreachable`).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, login } from '../helpers/accounts.ts';
import { cmd, wroteBehindServer } from '../helpers/players.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

describe(`building: rooms left out of reach (${DB_NAME})`, function () {
  this.timeout(30_000);
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startTestServer();
    await createUser(server, 'reacher', 'worldbuilder');
    token = await login(server, 'reacher');
  });
  after(async () => {
    await server?.close();
  });

  it('@unexit that cuts rooms off the spawn is done, and names them', async () => {
    const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(token));
    expect(created.status, created.text).to.equal(200);
    await server.db('characters').where({ id: created.body.character_id }).update({ room_id: 'chandlers_row' });
    await server.post('/characters/select', { session_id: token, character_id: created.body.character_id });
    await wroteBehindServer(server);
    const player = { server, name: created.body.character_name, username: 'reacher', characterId: created.body.character_id, sessionId: token };
    const reply = await cmd(player, '@unexit east');
    expect(reply.success, reply.message).to.equal(true);
    expect(reply.message).to.match(/^You close the exit east\.\nWarning: no walk from the world's spawn reaches .*The Sooty Heron.* any more\.$/);
    const closed = await cmd(player, '@unexit up');
    expect(closed.message).to.contain('Bell Stair');
  });

  it("the API's answer to removing an exit lists the rooms no walk reaches any more; none when all are reached", async () => {
    const room = '/api/worlds/emberwick/rooms/lockkeepers_square';
    const read = await server.get(room, bearer(token));
    const removed = await server.request('DELETE', `${room}/exits/east?version=${read.body.version}&two_way=true`, undefined, bearer(token));
    expect(removed.status, removed.text).to.equal(200);
    // Only what this change cut off: the rooms beyond Chandler's Row were cut off before.
    expect(removed.body.unreachable).to.deep.equal(['chandlers_row']);
    const added = await server.request('POST', `${room}/exits`, { direction: 'east', to: 'chandlers_row', two_way: true, version: removed.body.version }, bearer(token));
    expect(added.status, added.text).to.equal(200);
    const bridge = '/api/worlds/emberwick/rooms/ropewalk_bridge';
    const again = await server.get(bridge, bearer(token));
    const cut = await server.request('DELETE', `${bridge}/exits/north?version=${again.body.version}&two_way=false`, undefined, bearer(token));
    expect(cut.status, cut.text).to.equal(200);
    expect(cut.body.unreachable).to.include('foundry_gate').and.not.include('chandlers_row');
    const wharf = '/api/worlds/emberwick/rooms/tinkers_wharf';
    const wharfRead = await server.get(wharf, bearer(token));
    const sideways = await server.request('DELETE', `${wharf}/exits/east?version=${wharfRead.body.version}&two_way=false`, undefined, bearer(token));
    expect(sideways.status, sideways.text).to.equal(200);
    expect(sideways.body.unreachable, 'a way back that cuts nothing off').to.deep.equal([]);
  });
});
