/**
 * What an NPC or a room's script says is marked as theirs on the telnet door: an NPC named like
 * the player reads "[NPC] Dielun Bridgehall says: …", never as the player's own words (which the
 * door does not print again) nor as a player's line; a room's echo reads "[Room] …"; GMCP
 * Comm.Channel.Text keeps the channel and carries the marked line and `speaker`, and a player's
 * own line carries neither mark nor `speaker` (src/shared/event-text.ts, SPEAKER_MARK).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, okCmd, registerGuest } from '../helpers/players.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';

const W = '/api/worlds/emberwick';
const ROOM = 'ropewalk_bridge';
const NAME = 'Dielun Bridgehall';
const CONFESSION = ['function onSay(actor, text) {', '  if (!/who took/i.test(text)) return;', '  self.say("It was me who took the penny");', '  self.emote("grins.");', '  actor.tell("Not a word.");', '}'].join('\n');
const ROOM_SCRIPT = ['function onCommand(actor, verb) {', '  if (verb !== "ring") return false;', '  room.echo("Dielun Bridgehall took the penny.");', '  self.say("Mind the gap.");', '  return true;', '}'].join('\n');

/** The lines the player read that hold `words`, whole and without their colours. */
const linesWith = (client: TelnetClient, words: string): string[] =>
  client.all
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\r\n')
    .filter((line) => line.includes(words));

describe(`NPC speech marked on telnet and in GET /chat (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
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

  it('an NPC named like the player, and a room, speak marked as theirs, in the text and in GMCP', async () => {
    const builder = await sessionFor(server, 'puppeteer', 'worldbuilder');
    const call = (method: string, path: string, body?: unknown) => server.request(method, path, body, bearer(builder));
    const made = await call('POST', `${W}/npcs`, { name: NAME, description: 'A bridge-keeper with quick hands.', room_id: ROOM, script: CONFESSION });
    expect(made.status, made.text).to.equal(201);
    const room = (await call('GET', `${W}/rooms/${ROOM}`)).body;
    expect((await call('PATCH', `${W}/rooms/${ROOM}`, { version: room.version, script: ROOM_SCRIPT })).status).to.equal(200);

    // A player who took the NPC's name after it was made.
    const { username, characterId } = await registerGuest(server, NAME);
    await server.db('characters').where({ id: characterId }).update({ room_id: ROOM });
    client = await TelnetClient.connect(server.telnet!.port, { gmcp: ['Comm.Channel 1'] });
    await client.read('Username: ');
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    client.line('play 1');
    await client.read('[Exits]:');

    const other = await newPlayer(server, 'Wren', ROOM);
    await okCmd(other, 'say Evening all');
    await client.read(`${other.name} says: Evening all`);
    expect(await client.gmcpMessage('Comm.Channel.Text', 1)).to.deep.equal({ channel: 'say', talker: other.name, text: `${other.name} says: Evening all` });

    // The player's own words are the command's answer; GMCP carries them as theirs, unmarked.
    client.line('say Who took the penny?');
    await client.read('You say: Who took the penny?');
    expect(await client.gmcpMessage('Comm.Channel.Text', 2)).to.deep.equal({ channel: 'say', talker: NAME, text: 'You say: Who took the penny?' });
    await client.read('Not a word.');
    expect(linesWith(client, 'took the penny')).to.deep.equal(['You say: Who took the penny?', `[NPC] ${NAME} says: It was me who took the penny`]);
    expect(linesWith(client, 'grins')).to.deep.equal([`[NPC] ${NAME} grins.`]);
    expect(linesWith(client, 'Not a word')).to.deep.equal([`[NPC] ${NAME} tells you: Not a word.`]);
    expect(await client.gmcpMessage('Comm.Channel.Text', 3)).to.deep.equal({ channel: 'say', talker: NAME, text: `[NPC] ${NAME} says: It was me who took the penny`, speaker: 'npc' });
    expect(await client.gmcpMessage('Comm.Channel.Text', 4)).to.deep.equal({ channel: 'emote', talker: NAME, text: `[NPC] ${NAME} grins.`, speaker: 'npc' });
    expect(await client.gmcpMessage('Comm.Channel.Text', 5)).to.deep.equal({ channel: 'tell', talker: NAME, text: `[NPC] ${NAME} tells you: Not a word.`, speaker: 'npc' });

    // The room's verb: its script's lines may come before or after the command's answer.
    client.line('ring');
    const roomName = room.name as string;
    await client.read('Mind the gap.');
    expect(linesWith(client, 'took the penny.')).to.deep.equal(['[Room] Dielun Bridgehall took the penny.']);
    expect(linesWith(client, 'Mind the gap')).to.deep.equal([`[Room] ${roomName} says: Mind the gap.`]);
    expect(await client.gmcpMessage('Comm.Channel.Text', 6)).to.deep.equal({ channel: 'emote', talker: roomName, text: '[Room] Dielun Bridgehall took the penny.', speaker: 'world' });
    expect(await client.gmcpMessage('Comm.Channel.Text', 7)).to.deep.equal({ channel: 'say', talker: roomName, text: `[Room] ${roomName} says: Mind the gap.`, speaker: 'world' });

    // GET /chat's text marks them as well; a character's line stays as it was.
    const chat = await server.get(`/chat/${other.sessionId}`);
    expect(chat.status, chat.text).to.equal(200);
    const lines = (chat.body.chat as string).split('\n');
    expect(lines).to.include.members([`${other.name}: Evening all`, `[NPC] ${NAME}: It was me who took the penny`, '[Room] Dielun Bridgehall took the penny.', `[Room] ${roomName}: Mind the gap.`]);
  });
});
