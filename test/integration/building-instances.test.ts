/**
 * A world built while it is played on two instances of one PostgreSQL database: a builder on
 * instance one digs a room, describes it and places items (in the game and through the API);
 * a player on instance two sees the new exit at once, walks in, sees it all, and gets a `room`
 * event whenever the room it stands in changes. SQLite serves one instance, so this runs on
 * PostgreSQL only.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { twoInstances } from '../helpers/suite-servers.ts';
import { bearer, createUser, login } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';
import { newPlayer, okCmd, selectCharacter, wroteBehindServer, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';

const W = '/api/worlds/emberwick';

describe('building on one instance, playing on another (PostgreSQL)', function () {
  let builder: Player;
  let visitor: Player;
  let stream: SseStream;

  // Registered before the instances' hooks, so that the stream ends before they close.
  after(() => {
    stream?.close();
  });
  const servers = twoInstances({ postgresOnly: true });
  before(async () => {
    const [one, two] = servers();
    await createUser(one, 'mason', 'worldbuilder');
    const sessionId = await login(one, 'mason');
    const created = await one.post('/characters/create', { world_id: 'emberwick' }, bearer(sessionId));
    expect(created.status, created.text).to.equal(200);
    await selectCharacter(one, sessionId, created.body.character_id);
    await one.db('characters').where({ id: created.body.character_id }).update({ room_id: 'sooty_heron_taproom' });
    builder = { server: one, name: created.body.character_name, username: 'mason', characterId: created.body.character_id, sessionId };
    visitor = await newPlayer(two, 'Visitor', 'sooty_heron_taproom');
    await wroteBehindServer(one);
    stream = await openStream(`${two.url}/events/${visitor.sessionId}`);
    expect(stream.status).to.equal(200);
  });

  it('shows the player the new exit of the room it stands in, live', async () => {
    expect(await okCmd(builder, '@dig down Lamplit Cellar')).to.equal('You dig down and make Lamplit Cellar (lamplit_cellar).');
    const event = await stream.nextOf('room', 5000);
    expect(event.data.room_id).to.equal('sooty_heron_taproom');
    expect(event.data.look).to.contain('  - down: Lamplit Cellar\n');
  });

  it('lets the player walk in and see what the builder described and placed', async () => {
    const [one] = servers();
    await okCmd(builder, 'down');
    await okCmd(builder, '@desc A low brick cellar, lit by one oil lamp.');
    await okCmd(builder, '@create Dusty Lantern');
    const res = await one.request('POST', `${W}/rooms/lamplit_cellar/items`, { name: 'Oil Can', description: 'Half full.' }, bearer(builder.sessionId));
    expect(res.status, res.text).to.equal(201);
    await eventually(async () => {
      const look = await okCmd(visitor, 'look');
      expect(look).to.contain('  - down: Lamplit Cellar\n');
    }, 5000);
    const walked = await okCmd(visitor, 'down');
    expect(walked).to.contain('=== Lamplit Cellar ===\nA low brick cellar, lit by one oil lamp.\n');
    expect(walked).to.contain('[Items here]:\n  - Dusty Lantern\n  - Oil Can\n');
    expect(walked).to.contain(`[Players here]:\n  - ${builder.name}\n`);
    expect(walked).to.contain('  - up: The Sooty Heron\n');
    expect((await stream.nextOf('room', 5000)).data.room_id).to.equal('lamplit_cellar');
  });

  it('sends the player a room event for each later change, and removed items are gone', async () => {
    const [one] = servers();
    const room = (await one.get(`${W}/rooms/lamplit_cellar`, bearer(builder.sessionId))).body;
    const renamed = await one.request('PATCH', `${W}/rooms/lamplit_cellar`, { name: 'Lamplit Vault' }, { ...bearer(builder.sessionId), 'If-Match': `"${room.version}"` });
    expect(renamed.status, renamed.text).to.equal(200);
    const event = await stream.nextOf('room', 5000);
    expect(event.data.look).to.contain('=== Lamplit Vault ===');
    expect(await okCmd(builder, '@destroy oil can')).to.equal('You destroy Oil Can.');
    expect((await stream.nextOf('item', 5000)).data).to.deep.equal({ character: null, item: 'Oil Can', action: 'vanish', room_id: 'lamplit_cellar' });
    expect(await okCmd(visitor, 'look')).not.to.contain('Oil Can');
    expect(await okCmd(visitor, 'get dusty lantern')).to.equal('You picked up the Dusty Lantern.');
  });
});
