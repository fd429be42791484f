/**
 * NPC building within bounds (docs/decisions.md, "Building worlds"): a world holds at most
 * `[building] max_npcs_per_world` NPCs, its list comes a page at a time without scripts, `@npc`
 * reads only the NPCs standing here, a created NPC's script loads at once, the building limit
 * comes before a script is compiled, a suspended script shows, and no NPC's name passes for a
 * player, the server or its staff.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { builderPlayer, cmd, newPlayer, okCmd, wroteBehindServer, type Player } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';
const MAX_NPCS = 12;

interface NpcSummary {
  id: string;
  name: string;
  standing_in: string;
  scripted: boolean;
  script_suspended: boolean;
}

describe(`NPCs within bounds (${DB_NAME})`, function () {
  this.timeout(120_000);
  let server: TestServer;
  let builder: string;
  let mason: Player;
  let room = '';
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> => server.request(method, path, body, bearer(builder));

  before(async () => {
    server = await startTestServer({ env: { MUD_BUILDING_MAX_NPCS_PER_WORLD: String(MAX_NPCS) } });
    builder = await sessionFor(server, 'npcwright', 'worldbuilder');
    mason = await builderPlayer(server, 'npcmason', 'worldbuilder');
    const made = await call('POST', `${W}/rooms`, { name: 'Puppet Loft', description: 'Strings hang from the rafters.' });
    expect(made.status, made.text).to.equal(201);
    room = made.body.id;
    await server.db('characters').where({ id: mason.characterId }).update({ room_id: room });
    await wroteBehindServer(server);
  });
  after(async () => {
    await server?.close();
  });

  /** Every NPC of the world, read a page of `limit` at a time. */
  const everyNpc = async (limit: number, query = ''): Promise<{ npcs: NpcSummary[]; pages: number }> => {
    const npcs: NpcSummary[] = [];
    let pages = 0;
    for (let after: string | null = null; ; ) {
      const res = await call('GET', `${W}/npcs?limit=${limit}${after === null ? '' : `&after=${after}`}${query}`);
      expect(res.status, res.text).to.equal(200);
      pages++;
      npcs.push(...res.body.npcs);
      expect(res.body.npcs.length).to.be.at.most(limit);
      if (res.body.npcs.length < limit) return { npcs, pages };
      after = res.body.npcs.at(-1).id;
    }
  };

  it('a created NPC runs its onLoad at once: its timer fires', async () => {
    const script = 'function onLoad() { every(1, "wave"); }\nfunction wave() { state.waves = (state.waves || 0) + 1; self.emote("waves."); }';
    const made = await call('POST', `${W}/npcs`, { id: 'waver', name: 'Waver', description: 'It waves.', room_id: room, script });
    expect(made.status, made.text).to.equal(201);
    expect(made.body).to.deep.include({ scripted: true, script_suspended: false, script });
    await eventually(async () => expect(await server.db('script_timers').where({ world_id: 'emberwick', owner: 'npc:waver', name: 'wave' }).first(), 'the timer onLoad sets').to.not.equal(undefined), 10_000);
    server.clock.advance(1_100);
    await server.services.scriptClock.tick();
    await eventually(async () => {
      const state = await server.db('script_state').where({ world_id: 'emberwick', owner: 'npc:waver' }).first('state');
      expect(JSON.parse(state.state)).to.deep.equal({ waves: 1 });
    }, 10_000);
  });

  it('lists NPCs a page at a time in id order, without scripts (one NPC has its script); standing_in keeps a room\'s; bad pages are 400', async () => {
    for (const name of ['Ann Puppet', 'Bo Puppet']) expect((await call('POST', `${W}/npcs`, { name, description: 'Wooden.', room_id: room })).status).to.equal(201);
    const all = await everyNpc(200);
    const paged = await everyNpc(2);
    expect(paged.npcs).to.deep.equal(all.npcs);
    expect(paged.pages).to.be.greaterThan(2);
    const ids = all.npcs.map((n) => n.id);
    expect(ids).to.deep.equal([...ids].sort());
    expect(ids).to.include.members(['maud', 'smudge', 'waver', 'ann_puppet', 'bo_puppet']);
    for (const npc of all.npcs) expect(npc).to.not.have.property('script');
    expect(all.npcs.find((n) => n.id === 'waver')).to.deep.include({ scripted: true, script_suspended: false });
    expect(all.npcs.find((n) => n.id === 'ann_puppet')).to.deep.include({ scripted: false });
    expect((await call('GET', `${W}/npcs/waver`)).body.script).to.contain('function onLoad()');

    const here = await everyNpc(2, `&standing_in=${room}`);
    expect(here.npcs.map((n) => n.id)).to.deep.equal(['ann_puppet', 'bo_puppet', 'waver']);

    for (const [query, detail] of [
      ['limit=0', /limit/],
      ['limit=201', /limit/],
      ['after=', /after/],
    ] as const) {
      const res = await call('GET', `${W}/npcs?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.detail, query).to.match(detail);
    }
  });

  it('@npc lists only the NPCs standing here, marking the scripted ones', async () => {
    expect(await okCmd(mason, '@npc')).to.equal(`NPCs here:\n  - ann_puppet: Ann Puppet\n  - bo_puppet: Bo Puppet\n  - waver: Waver (scripted)`);
  });

  it('a suspended script shows as script_suspended on the NPC, in the list and on the room, until it is saved again', async () => {
    const thrower = 'function onSay(actor, text) { throw new Error("no"); }';
    expect((await call('POST', `${W}/npcs`, { id: 'sulker', name: 'Sulker', description: 'Sulks.', room_id: room, script: thrower })).status).to.equal(201);
    const roomNow = (await call('GET', `${W}/rooms/${room}`)).body;
    const scripted = await call('PATCH', `${W}/rooms/${room}`, { version: roomNow.version, script: thrower });
    expect(scripted.status, scripted.text).to.equal(200);
    expect(scripted.body.script_suspended).to.equal(false);
    const suspended = async (owner: string): Promise<void> => {
      const errors = (await call('GET', `${W}/script-errors?owner=${owner}`)).body.errors as Array<{ kind: string }>;
      expect(errors.map((e) => e.kind)).to.include('suspended');
    };
    // Each say faults both scripts; five in a row suspend them.
    for (let n = 1; n <= 5; n++) {
      await okCmd(mason, `say sulk ${n}`);
      await eventually(async () => {
        const rows = await server.db('script_state').where({ world_id: 'emberwick' }).whereIn('owner', ['npc:sulker', `room:${room}`]).select('faults', 'suspended_at');
        expect(rows.filter((r) => Number(r.faults) >= n || r.suspended_at !== null)).to.have.length(2);
      }, 10_000);
    }
    await eventually(() => suspended('npc:sulker'), 10_000);
    await eventually(() => suspended(`room:${room}`), 10_000);

    const npc = await call('GET', `${W}/npcs/sulker`);
    expect(npc.body.script_suspended).to.equal(true);
    expect((await everyNpc(200, `&standing_in=${room}`)).npcs.find((n) => n.id === 'sulker')).to.deep.include({ script_suspended: true });
    const roomView = await call('GET', `${W}/rooms/${room}`);
    expect(roomView.body.script_suspended).to.equal(true);
    expect(await okCmd(mason, '@npc')).to.contain('  - sulker: Sulker (script suspended)');

    // Saving it again runs it again: the answer says so at once.
    const saved = await call('PATCH', `${W}/npcs/sulker`, { version: npc.body.version, script: 'function onSay(actor, text) { }' });
    expect(saved.status, saved.text).to.equal(200);
    expect(saved.body.script_suspended).to.equal(false);
    expect((await call('GET', `${W}/npcs/sulker`)).body.script_suspended).to.equal(false);
    const unsuspended = await call('PATCH', `${W}/rooms/${room}`, { version: roomView.body.version, script: null });
    expect(unsuspended.body.script_suspended).to.equal(false);
  });

  it('refuses an NPC that would pass for a character of the world, the server or its staff, through the API and @npc', async () => {
    const dielun = await newPlayer(server, 'Dielun', room);
    const name = dielun.name;
    const lookalike = name.replace(/a/, '\u0430'); // a Cyrillic а
    for (const taken of [name, name.toUpperCase(), `  ${name.toLowerCase()} `, lookalike]) {
      const res = await call('POST', `${W}/npcs`, { name: taken, description: 'An impostor.', room_id: room });
      expect(res.status, taken).to.equal(409);
      expect(res.body.detail).to.equal(`NPC name '${taken.trim()}' is too like the name of ${name}, a character of world 'emberwick': an NPC may not pass for a player`);
    }
    const staffLike: Array<[string, RegExp]> = [
      ['[ANNOUNCEMENT] boss', /must not start with a bracket nor contain \[ or \]/],
      ['\uFF3BYELL\uFF3D Bob', /must not start with a bracket/],
      ['Bob [OOC]', /contain \[ or \]/],
      ['\u3010Notice\u3011 Bob', /must not start with a bracket/],
      ['\u2474 Boss', /must not start with a bracket/],
      ['Staff Announcement', /must not contain the word 'staff'/],
      ['Town Announcement Crier', /must not contain the word 'announcement'/],
      ['The Adm\u0456n', /must not contain the word 'admin'/],
      ['Bob OOC', /must not contain the word 'ooc'/],
    ];
    for (const [bad, detail] of staffLike) {
      const res = await call('POST', `${W}/npcs`, { name: bad, description: 'An impostor.', room_id: room });
      expect(res.status, bad).to.equal(400);
      expect(res.body.detail, bad).to.match(detail);
    }
    // A rename is held to the same rules.
    const ann = (await call('GET', `${W}/npcs/ann_puppet`)).body;
    const renamed = await call('PATCH', `${W}/npcs/ann_puppet`, { version: ann.version, name });
    expect(renamed.status).to.equal(409);
    expect(renamed.body.detail).to.contain('an NPC may not pass for a player');
    // The game's @npc create says the same.
    expect(await cmd(mason, `@npc create ${name}`)).to.deep.equal({ success: false, message: `NPC name '${name}' is too like the name of ${name}, a character of world 'emberwick': an NPC may not pass for a player` });
    const tagged = await cmd(mason, '@npc create [ANNOUNCEMENT] boss');
    expect(tagged.success).to.equal(false);
    expect(tagged.message).to.match(/must not start with a bracket/);
    expect(await server.db('world_npcs').where({ world_id: 'emberwick' }).whereILike('name', '%announcement%').first()).to.equal(undefined);
  });

  it(`holds a world to max_npcs_per_world (${MAX_NPCS}): POST /npcs and @npc create are refused past it`, async () => {
    const count = (await everyNpc(200)).npcs.length;
    for (let n = count; n < MAX_NPCS; n++) {
      const res = await call('POST', `${W}/npcs`, { name: `Filler ${String.fromCharCode(97 + n)}`, description: 'Fills.', room_id: room });
      expect(res.status, res.text).to.equal(201);
    }
    const refused = await call('POST', `${W}/npcs`, { name: 'One Too Many', description: 'Never made.', room_id: room });
    expect(refused.status).to.equal(409);
    expect(refused.body.detail).to.equal(`World 'emberwick' has ${MAX_NPCS} NPCs, the most it may have ([building] max_npcs_per_world)`);
    expect(await cmd(mason, '@npc create One Too Many')).to.deep.equal({ success: false, message: refused.body.detail });
    expect((await everyNpc(200)).npcs).to.have.length(MAX_NPCS);
    // Deleting one makes room again.
    const filler = (await call('GET', `${W}/npcs/bo_puppet`)).body;
    expect((await call('DELETE', `${W}/npcs/bo_puppet?version=${filler.version}`)).status).to.equal(200);
    expect(await okCmd(mason, '@npc create One More')).to.equal('You create One More (NPC one_more).');
  });
});

describe(`the building limit comes before a script is compiled (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let builder: string;

  before(async () => {
    server = await startTestServer({ env: { MUD_RATE_LIMIT_ENABLED: 'true', MUD_RATE_LIMIT_BUILD_PER_ACCOUNT: '2' } });
    builder = await sessionFor(server, 'hastybuilder', 'worldbuilder');
  });
  after(async () => {
    await server?.close();
  });

  it('past build_per_account a save is refused (429) before its script is compiled', async () => {
    const call = (body: unknown): Promise<HttpResponse> => server.request('POST', `${W}/npcs`, body, bearer(builder));
    expect((await call({ name: 'Quick One', description: 'Made.', room_id: 'chandlers_row' })).status).to.equal(201);
    // A script that does not compile is a 400 while the limit allows it…
    const broken = { name: 'Quick Two', description: 'Never made.', room_id: 'chandlers_row', script: 'function onLoad( {' };
    expect((await call(broken)).status).to.equal(400);
    // …and 429 past it: the limit answered first, no compile ran.
    const refused = await call(broken);
    expect(refused.status, refused.text).to.equal(429);
    expect(refused.body.detail).to.match(/^Too many building changes\. Try again in \d+ seconds\.$/);
  });
});
