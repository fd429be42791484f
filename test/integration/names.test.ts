/**
 * Names as players type them (issue 35): a character or an item is named by its whole name in
 * any letter case, or by the start of its name or of one of its words when only one name
 * starts so ("tell het hi" for Hettie Webb, "get penny" for the Canal Penny), for every verb
 * that names one, over HTTP and over telnet alike; a start that several names share is answered
 * with them. Telnet's `connect` takes a username in any letter case (usernames are unique so),
 * while POST /login keeps the specification's exact lookup.
 */
import { describe, it, afterEach } from 'mocha';
import { expect } from 'chai';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { createUser, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { cmd, newPlayer, okCmd, wroteBehindServer, type Player } from '../helpers/players.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const SQUARE = 'lockkeepers_square';

describe(`names as players type them (${DB_NAME})`, function () {
  this.timeout(30_000);
  const server = oneServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0' }, reset: true });
  const clients: TelnetClient[] = [];

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  /** Characters named `<first> <Surname>` (letters only, unique in this test file). */
  let surnames = 0;
  const named = async (first: string, roomId = SQUARE): Promise<Player> => {
    const player = await newPlayer(server(), first, roomId);
    // newPlayer names characters `<first> Q<tag>`; a surname of letters of its own keeps starts apart.
    const name = `${first} ${['Webb', 'Vell', 'Vane', 'Marsh', 'Ashdown', 'Pike', 'Rook', 'Thorne'][surnames++ % 8]}${'x'.repeat(Math.floor(surnames / 8))}`;
    await server().db('characters').where({ id: player.characterId }).update({ name, name_key: name.toLowerCase() });
    await wroteBehindServer(server());
    return { ...player, name };
  };

  it('tell and whisper take a name in any letter case, or the start of it or of one of its words', async () => {
    const ann = await named('Annick');
    const hettie = await named('Hettie');
    expect(await okCmd(ann, 'tell het see you at the lock')).to.equal(`You tell ${hettie.name}: see you at the lock`);
    expect(await okCmd(ann, `tell ${hettie.name.toLowerCase()} and the bridge`)).to.equal(`You tell ${hettie.name}: and the bridge`);
    const surname = hettie.name.split(' ')[1]!;
    expect(await okCmd(ann, `whisper ${surname.slice(0, 3).toLowerCase()} psst`)).to.equal(`You whisper to ${hettie.name}: psst`);
    const chat = await server().get(`/chat/${hettie.sessionId}`);
    expect(chat.body.messages.map((m: { text: string }) => m.text)).to.include.members([
      `[TELL: ${ann.name} \u2192 ${hettie.name}] see you at the lock`,
      `[WHISPER: ${ann.name} \u2192 ${hettie.name}] psst`,
    ]);
  });

  it('a start several names share is answered with the names; a whole name wins over a start', async () => {
    const ann = await named('Annick');
    const mara = await named('Mara');
    const marathon = await named('Marabel');
    const reply = await cmd(ann, 'tell mara hello');
    // "mara" is Mara's whole first name but not a whole name: Mara and Marabel both start so.
    expect(reply).to.deep.equal({ success: false, message: `'mara' could be ${[mara.name, marathon.name].sort().join(' or ')}: type more of the name.` });
    expect(await okCmd(ann, `tell ${marathon.name.slice(0, 5)} hello`)).to.equal(`You tell ${marathon.name}: hello`);
    expect((await cmd(ann, 'tell zzz hello')).message).to.equal("Nobody in this world is called 'zzz'.");
    expect((await cmd(ann, 'whisper zzz hello')).message).to.equal("Player 'zzz' does not exist.");
  });

  it('get, drop and examine take a word of an item, or its start; examine a character by a start of its name', async () => {
    const ann = await named('Annick');
    const bert = await named('Bertram');
    expect(await okCmd(ann, 'examine penny')).to.match(/^\[Canal Penny\]\n/);
    expect(await okCmd(ann, 'get pen')).to.equal('You picked up the Canal Penny.');
    expect(await okCmd(ann, 'exa CANAL')).to.match(/^\[Canal Penny\]\n/);
    expect(await okCmd(ann, 'drop can')).to.equal('You dropped the Canal Penny.');
    expect(await okCmd(ann, 'examine bert')).to.equal(`${bert.name} is here.\nThey carry nothing.`);
    // A second item whose word starts alike: the answer names both.
    await server().db('item_instances').where({ world_id: 'emberwick', item_id: 'tallow_candle' }).update({ room_id: SQUARE, character_id: null });
    await wroteBehindServer(server());
    expect(await cmd(ann, 'get c')).to.deep.equal({ success: false, message: "'c' could be Canal Penny or Tallow Candle: type more of the name." });
    expect(await okCmd(ann, 'get cand')).to.equal('You picked up the Tallow Candle.');
    expect((await cmd(ann, 'get zzz')).message).to.equal("There is no 'zzz' here.");
  });

  it('over telnet alike: connect takes the username in any letter case, tell and get take starts', async () => {
    const hettie = await named('Hettie');
    await createUser(server(), 'TinaPlayer', 'player');
    const created = await server().post('/characters/create', { world_id: 'emberwick' }, { Authorization: `Bearer ${(await server().post('/login', { username: 'TinaPlayer', password: GOOD_PASSWORD })).body.session_id}` });
    expect(created.status, created.text).to.equal(200);
    await server().db('characters').where({ id: created.body.character_id }).update({ room_id: SQUARE });
    await wroteBehindServer(server());
    // POST /login keeps the specification's exact lookup.
    expect((await server().post('/login', { username: 'tinaplayer', password: GOOD_PASSWORD })).status).to.equal(401);

    const client = await TelnetClient.connect(server().telnet!.port);
    clients.push(client);
    await client.read('Username: ');
    client.line(`connect tinaplayer ${GOOD_PASSWORD}`);
    expect(await client.read('Type play')).to.contain('Logged in as TinaPlayer.');
    // The character by the start of its name, in any case.
    client.line(`play ${String(created.body.character_name).slice(0, 3).toLowerCase()}`);
    await client.read('[Exits]:');
    client.line('tell het evening');
    await client.read(`You tell ${hettie.name}: evening`);
    client.line('get penny');
    await client.read('You picked up the Canal Penny.');
  });
});
