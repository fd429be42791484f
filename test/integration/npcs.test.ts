/**
 * NPCs and builders' scripts through the real stack (issue 32): NPCs built online are seen in
 * `look` and the room's data, greet arrivals and answer what is said, walk; a script that does
 * not compile is refused naming its line; what goes wrong is for builders to read; a room's own
 * verb; timers that fire and keep their state.
 */
import { describe, it, before, after } from 'mocha';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { builderPlayer, cmd, newPlayer, okCmd, registerGuest, uniqueName, wroteBehindServer, type Player } from '../helpers/players.ts';
import { openStream } from '../helpers/sse.ts';
import { eventually } from '../helpers/eventually.ts';
import { worldsCopy } from '../helpers/worlds.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';

describe(`NPCs and scripts (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let builder: string;
  const call = (method: string, path: string, body?: unknown): Promise<HttpResponse> => server.request(method, path, body, bearer(builder));

  before(async () => {
    server = await startTestServer();
    builder = await sessionFor(server, 'puppeteer', 'worldbuilder');
  });
  after(async () => {
    await server?.close();
  });

  it('an NPC built online stands in its room: look lists it, the room data names it, arrivals are greeted and a keyword is answered', async () => {
    const script = [
      'function onEnter(actor) { self.say("Evening, " + actor.name + "."); }',
      'function onSay(actor, text) {',
      '  if (/fare/i.test(text)) { state.asked = (state.asked || 0) + 1; self.say("Two pennies. Asked " + state.asked + " times."); }',
      '}',
    ].join('\n');
    const made = await call('POST', `${W}/npcs`, { name: 'Old Tam', description: 'A bent old lockkeeper.', room_id: 'ropewalk_bridge', script });
    expect(made.status, made.text).to.equal(201);
    expect(made.body).to.deep.include({ id: 'old_tam', room_id: 'ropewalk_bridge', standing_in: 'ropewalk_bridge', version: 1, origin: 'builder', script });

    const walker = await newPlayer(server, 'Walker', 'lockkeepers_square');
    const stream = await openStream(`${server.url}/events/${walker.sessionId}`);
    try {
      const moved = await cmd(walker, 'north');
      expect(moved.message).to.contain('\n[Also here]:\n  - Old Tam\n');
      expect(moved.room?.npcs).to.deep.equal([{ id: 'old_tam', name: 'Old Tam' }]);
      const greeting = await stream.nextOf('chat', 5000);
      expect(greeting.data).to.deep.include({ sender: 'Old Tam', text: `Evening, ${walker.name}.`, channel: 'say', speaker: 'npc' });
      await okCmd(walker, 'say What is the fare?');
      let answer = await stream.nextOf('chat', 5000);
      while (answer.data.sender !== 'Old Tam') answer = await stream.nextOf('chat', 5000);
      expect(answer.data.text).to.equal('Two pennies. Asked 1 times.');
      // The NPC's line is in the room's chat like anyone's.
      const chat = await server.get(`/chat/${walker.sessionId}`);
      expect(chat.body.messages.map((m: { sender: string; text: string }) => `${m.sender}: ${m.text}`)).to.include('Old Tam: Two pennies. Asked 1 times.');
      // A new home takes the NPC there: those it leaves see it go, as an NPC.
      const rehomed = await call('PATCH', `${W}/npcs/old_tam`, { version: 1, room_id: 'lockkeepers_square' });
      expect(rehomed.status, rehomed.text).to.equal(200);
      expect((await stream.nextOf('leave', 5000)).data).to.deep.equal({ character: 'Old Tam', room_id: 'ropewalk_bridge', direction: null, cause: 'walk', npc: true, npc_id: 'old_tam' });
    } finally {
      stream.close();
    }
  });

  it('refuses a script that does not compile, naming its line, and writes nothing', async () => {
    const refused = await call('POST', `${W}/npcs`, { name: 'Broken Bob', description: 'Never built.', room_id: 'ropewalk_bridge', script: 'function onSay(actor, text) {\n  self.say("unclosed"\n}' });
    expect(refused.status).to.equal(400);
    expect(refused.body.detail).to.match(/^The script does not compile \(line \d+\): /);
    expect(await server.db('world_npcs').where({ npc_id: 'broken_bob' }).first()).to.equal(undefined);
  });

  it('a script that throws is recorded for builders, and suspended after faults in a row until saved again', async () => {
    const made = await call('POST', `${W}/npcs`, { id: 'grumbler', name: 'Grumbler', description: 'Always cross.', room_id: 'chandlers_row', script: 'function onSay(actor, text) {\n  undefinedThing();\n}' });
    expect(made.status, made.text).to.equal(201);
    const speaker = await newPlayer(server, 'Speaker', 'chandlers_row');
    for (let i = 0; i < 6; i++) await okCmd(speaker, `say hello ${i}`);
    await eventually(async () => {
      const errors = (await call('GET', `${W}/script-errors?owner=npc:grumbler`)).body.errors as Array<{ kind: string; hook: string; line: number | null; message: string }>;
      expect(errors.map((e) => e.kind)).to.include('suspended');
      expect(errors.find((e) => e.kind === 'thrown')).to.deep.include({ hook: 'onSay', line: 2 });
    }, 5000);
    const player = await sessionFor(server, 'nosy', 'player');
    expect((await server.get(`${W}/script-errors?session_id=${player}`)).status).to.equal(403);
  });

  it('a room takes its own verb, and a timer fires with its state kept', async () => {
    const room = (await call('GET', `${W}/rooms/sooty_heron_taproom`)).body;
    const script = [
      'function onCommand(actor, verb, args) {',
      '  if (verb !== "ring" || args !== "bell") return false;',
      '  actor.tell("You ring the bell.");',
      '  after(1, "lastOrders");',
      '  return true;',
      '}',
      'function lastOrders() { state.rung = (state.rung || 0) + 1; room.echo("The landlord calls last orders (" + state.rung + ")."); }',
    ].join('\n');
    const saved = await call('PATCH', `${W}/rooms/sooty_heron_taproom`, { version: room.version, script });
    expect(saved.status, saved.text).to.equal(200);
    expect(saved.body.script).to.equal(script);
    const drinker = await newPlayer(server, 'Drinker', 'sooty_heron_taproom');
    const stream = await openStream(`${server.url}/events/${drinker.sessionId}`);
    try {
      expect(await cmd(drinker, 'ring bell')).to.deep.equal({ success: true, message: 'You ring the bell.' });
      expect((await cmd(drinker, 'ring gong')).message).to.equal("Unknown command: ring. Type 'help' for available commands.");
      server.clock.advance(1500);
      await server.services.scriptClock.tick();
      const echo = await stream.nextOf('chat', 5000);
      expect(echo.data).to.deep.include({ channel: 'emote', text: 'The landlord calls last orders (1).', speaker: 'world' });
    } finally {
      stream.close();
    }
  });

  /** The next chat line a stream gets from `sender`. */
  const lineFrom = async (stream: Awaited<ReturnType<typeof openStream>>, sender: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const line = await stream.nextOf('chat', 5000);
      if (line.data.sender === sender) return line.data;
    }
  };

  it("Emberwick's living scene: Maud greets and answers, the NPCs are examined but not players, and the yard's chain opens the drain for 30 seconds", async () => {
    const guest: Player = await newPlayer(server, 'Guest', 'chandlers_row');
    const stream = await openStream(`${server.url}/events/${guest.sessionId}`);
    try {
      const inside = await cmd(guest, 'east');
      expect(inside.message).to.contain('[Also here]:\n  - Maud the Barkeep');
      expect(await lineFrom(stream, 'Maud the Barkeep')).to.deep.include({ channel: 'say', speaker: 'npc', text: `Evening, ${guest.name}. Ale&#x27;s a penny and the stove&#x27;s free. Ask me about the old drain if you&#x27;re curious.` });
      // Chat text is kept escaped, an NPC's as a player's.
      await okCmd(guest, 'say Where is the old drain?');
      expect((await lineFrom(stream, 'Maud the Barkeep')).text).to.equal('Out the back door, north. Pull the chain in the yard and the trapdoor opens on the old drain, but not for long.');
      expect(await okCmd(guest, 'examine maud')).to.match(/^\[Maud the Barkeep\]\nA broad woman in a leather apron/);
      expect(await okCmd(guest, 'who')).to.not.contain('Maud');
      expect((await cmd(guest, 'tell Maud hello')).success).to.equal(false);

      const yard = await cmd(guest, 'north');
      expect(yard.room?.npcs).to.deep.equal([{ id: 'smudge', name: 'Smudge the Cat' }]);
      expect(yard.room?.exits.map((e) => e.direction)).to.not.include('down');
      expect(await cmd(guest, 'pull chain')).to.deep.equal({ success: true, message: 'You haul on the chain. Somewhere a counterweight creaks, and the trapdoor swings open.' });
      expect(await lineFrom(stream, 'Heron Yard')).to.deep.include({ speaker: 'world', text: `${guest.name} hauls on the rusty chain; the trapdoor in the cobbles swings open onto iron rungs going down into the dark.` });
      await eventually(async () => expect((await cmd(guest, 'look')).room?.exits.map((e) => e.direction)).to.include('down'), 5000);
      expect((await cmd(guest, 'down')).room?.name).to.equal('Flooded Culvert');
      await server.db('characters').where({ id: guest.characterId }).update({ room_id: 'heron_yard' });
      await wroteBehindServer(server);
      expect((await cmd(guest, 'pull chain')).message).to.equal('The trapdoor already stands open; the chain hangs slack.');
      server.clock.advance(31_000);
      await server.services.scriptClock.tick();
      expect((await lineFrom(stream, 'Heron Yard')).text).to.equal('The counterweight drags the trapdoor shut with a bang.');
      await eventually(async () => expect((await cmd(guest, 'look')).room?.exits.map((e) => e.direction)).to.not.include('down'), 5000);
      // A script's exits are no builder's change: the history has none of them (script-world-changes.test.ts).
      const history = (await call('GET', `${W}/changes?limit=500`)).body.changes as Array<{ via: string; actor: string }>;
      expect(history.filter((c) => c.actor === 'room:heron_yard')).to.deep.equal([]);
    } finally {
      stream.close();
    }
  });

  it('builders make, describe, script and destroy NPCs with @npc in the game, and read @script errors; players cannot', async () => {
    const mason = await builderPlayer(server, 'npcmason', 'worldbuilder');
    // A room no NPC of the world roams to (Smudge the Cat walks the Heron Yard's rooms).
    await server.db('characters').where({ id: mason.characterId }).update({ room_id: 'weathercock_ledge' });
    await wroteBehindServer(server);
    expect(await okCmd(mason, 'help')).to.contain('@npc');
    expect(await okCmd(mason, '@npc create Pip the Boy')).to.equal('You create Pip the Boy (NPC pip_the_boy).');
    expect(await okCmd(mason, '@npc desc pip A small boy with a big cap.')).to.equal('You describe Pip the Boy anew.');
    expect(await okCmd(mason, 'examine pip')).to.equal('[Pip the Boy]\nA small boy with a big cap.');
    const broken = await cmd(mason, '@npc script pip function onSay( { self.say("hi"); }');
    expect(broken.success).to.equal(false);
    expect(broken.message).to.match(/^The script does not compile \(line 1\): /);
    expect(await okCmd(mason, '@npc script pip function onSay(actor, text) { if (text === "boom") nothing(); else if (text === "who") self.say(room.characters().join(",") + "/" + room.npcs().join(",")); }')).to.equal('Pip the Boy has a new script.');
    expect(await okCmd(mason, '@npc')).to.contain('  - pip_the_boy: Pip the Boy (scripted)');
    await okCmd(mason, 'say who');
    await eventually(async () => expect((await server.db('chat_messages').where({ npc_id: 'pip_the_boy' }).select('message')).map((r: { message: string }) => r.message)).to.deep.equal([`${mason.name}/Pip the Boy`]), 5000);
    await okCmd(mason, 'say boom');
    await eventually(async () => expect(await okCmd(mason, '@script errors')).to.match(/npc:pip_the_boy onSay line 1: thrown: ReferenceError: .*nothing/), 5000);
    expect((await cmd(mason, '@npc script pip')).message).to.equal('Usage: @npc script <npc> <code>');
    expect((await cmd(mason, '@npc wave pip')).message).to.match(/^Unknown @npc subcommand 'wave'/);
    expect((await cmd(mason, '@npc destroy nobody')).message).to.match(/^No NPC here is named at the start of 'nobody'/);
    expect(await okCmd(mason, '@npc noscript pip')).to.equal('Pip the Boy has no script now.');
    expect(await okCmd(mason, '@npc destroy pip')).to.equal('You destroy Pip the Boy.');
    expect((await cmd(mason, 'look')).room?.npcs.map((n) => n.id)).to.not.include('pip_the_boy');
    const player = await newPlayer(server, 'Plain', 'weathercock_ledge');
    expect(await cmd(player, '@npc create Nobody')).to.deep.equal({ success: false, message: "Unknown command: @npc. Type 'help' for available commands." });
    expect(await cmd(player, '@script errors')).to.deep.equal({ success: false, message: "Unknown command: @script. Type 'help' for available commands." });
  });
});

describe(`a world of many NPCs (${DB_NAME})`, function () {
  this.timeout(120_000);
  let server: TestServer;
  let worlds = '';
  const COUNT = 600;

  before(async () => {
    // More NPCs than one multi-row statement may hold on SQLite (500 terms).
    worlds = worldsCopy({});
    const zoneFile = path.join(worlds, 'emberwick', 'zones', 'heron_yard.json');
    const zone = JSON.parse(readFileSync(zoneFile, 'utf8')) as { npcs: Record<string, unknown> };
    for (let i = 0; i < COUNT; i++) zone.npcs[`crowd_${i}`] = { id: `crowd_${i}`, name: `Crowd ${i}`, description: 'One of many.', room: 'wash_house', script: 'scripts/crowd.js' };
    writeFileSync(zoneFile, JSON.stringify(zone));
    writeFileSync(path.join(worlds, 'emberwick', 'scripts', 'crowd.js'), 'function onLoad() { state.loaded = true; }\n');
    server = await startTestServer({ env: { MUD_WORLDS_ROOT: worlds } });
  });
  after(async () => {
    await server?.close();
    rmSync(worlds, { recursive: true, force: true });
  });

  it('places every one at its home and loads every script', async () => {
    const player = await newPlayer(server, 'Crowded', 'wash_house');
    const look = await cmd(player, 'look');
    expect(look.room?.npcs).to.have.length(50);
    expect(look.room?.more_npcs).to.equal(COUNT - 50);
    expect(look.message).to.contain(`(and ${COUNT - 50} more)`);
    await eventually(async () => {
      const [row] = await server.db('script_state').where({ world_id: 'emberwick' }).andWhere('owner', 'like', 'npc:crowd_%').count({ n: '*' });
      expect(Number(row!.n)).to.equal(COUNT);
    }, 60_000);
  });
});

describe(`NPCs over telnet (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let client: TelnetClient | undefined;

  before(async () => {
    server = await startTestServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0' } });
  });
  after(async () => {
    client?.close();
    await server?.close();
  });

  it("an NPC is in the room's look and its speech comes as anyone's, in the text and in GMCP Comm.Channel.Text", async () => {
    const name = uniqueName('Bargeman');
    const { username, characterId } = await registerGuest(server, name);
    await server.db('characters').where({ id: characterId }).update({ room_id: 'chandlers_row' });
    client = await TelnetClient.connect(server.telnet!.port, { gmcp: ['Comm.Channel 1'] });
    await client.read('Username: ');
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    client.line('play 1');
    await client.read('[Exits]:');
    client.line('east');
    await client.read('[Also here]:');
    await client.read('Maud the Barkeep says: Evening');
    expect(await client.gmcpMessage('Comm.Channel.Text')).to.deep.include({ channel: 'say', talker: 'Maud the Barkeep' });
  });
});
