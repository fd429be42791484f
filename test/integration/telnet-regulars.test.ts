/**
 * What regulars of Mudlet and TinTin++ expect of the telnet door (issue 35), through raw sockets
 * (test/helpers/telnet-client.ts): Core.Ping answered whatever Core.Supports.Set lists; a
 * prompt after each answer, ended by IAC GA or by IAC EOR when agreed, and answered to an
 * empty line; `config` (prompt, colours, screen-reader mode) kept for the account; no UTF-8 for
 * a client that refuses CHARSET; a dropped connection leaving its character link-dead for
 * `connect` to take over; login lines in the log; and the protocols MUD clients speak: MCCP2,
 * MSSP, GMCP (Char.Login, Char.StatusVars/Status, Comm.Channel.List, Room.Players, Char.Items)
 * and MXP links. The login limits for a shared address are in login-limits.test.ts.
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { TelnetClient, type ClientOptions } from '../helpers/telnet-client.ts';
import { GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName } from '../helpers/players.ts';
import { CHARSET, COMPRESS2, DO, EOR, IAC, MSSP, MXP, WILL, WONT } from '../../src/telnet/protocol.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const ESC = '\x1b';
/** The default prompt in the spawn room: its name and exits. */
const SQUARE_PROMPT = "[Lockkeeper's Square] n e w > ";

describe(`telnet door for regulars (${DB_NAME})`, function () {
  this.timeout(30_000);
  let server: TestServer;
  const clients: TelnetClient[] = [];

  before(async () => {
    server = await startTestServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0', MUD_LOG_LEVEL: 'info' } });
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await resetGame(server);
  });

  const connect = async (options: ClientOptions = {}): Promise<TelnetClient> => {
    const client = await TelnetClient.connect(server.telnet!.port, options);
    clients.push(client);
    await client.read('Username: ');
    return client;
  };

  /** Logs a client in as `username` and plays its first character. */
  const playAs = async (client: TelnetClient, username: string): Promise<void> => {
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    client.line('play 1');
    await client.read('[Exits]:');
  };

  /** Sends a line and reads its answer with the prompt after it. */
  const answer = (client: TelnetClient, line: string): Promise<string> => {
    client.line(line);
    return client.prompted();
  };

  /** A guest character and a telnet connection playing it. */
  const playing = async (first: string, options: ClientOptions = {}) => {
    const name = uniqueName(first);
    const { username } = await registerGuest(server, name);
    const client = await connect(options);
    await playAs(client, username);
    return { client, name, username };
  };

  it('answers Core.Ping when Core.Supports.Set leaves Core out, as Mudlet sends it', async () => {
    const { client } = await playing('Pim', { gmcp: ['Char 1', 'Room 1', 'Comm.Channel 1'] });
    client.gmcpSend('Core.Ping', {});
    await client.gmcpMessage('Core.Ping');
  });

  it('ends each answer with a prompt (IAC GA), answers an empty line with it, and shows events after it on a line of their own', async () => {
    const bert = await newPlayer(server, 'Bert');
    const { client } = await playing('Pru');
    expect((await client.prompted()).endsWith(`\r\n${SQUARE_PROMPT}`)).to.equal(true);
    const moved = await answer(client, 'north');
    expect(moved).to.contain('=== Ropewalk Bridge ===');
    expect(moved.endsWith('[Ropewalk Bridge] s n > ')).to.equal(true);
    expect(await answer(client, '')).to.equal('[Ropewalk Bridge] s n > ');
    expect(client.prompts.every((p) => p.mark === 'GA')).to.equal(true);
    // Someone speaks while the player reads the prompt: the line starts on a new line.
    await okCmd(bert, 'north');
    expect(await client.read(`${bert.name} arrives from the south.`)).to.equal(`\r\n${bert.name} arrives from the south.`);
  });

  it('ends prompts with IAC EOR for a client that agreed to TELOPT_EOR', async () => {
    const { client } = await playing('Eda', { accept: [EOR] });
    await client.prompted();
    client.line('look');
    await client.prompted();
    expect(client.prompts.map((p) => p.mark)).to.include('EOR');
    expect(client.prompts.at(-1)!.mark).to.equal('EOR');
  });

  it('config sets the prompt, colours and screen-reader mode, kept for the account across connections', async () => {
    const { client, name, username } = await playing('Cora');
    await client.prompted();
    const mine = await answer(client, 'config prompt <%n in %w: %r (%e)>');
    expect(mine).to.equal(`Your prompt is now '<%n in %w: %r (%e)> '.\r\n<${name} in Emberwick: Lockkeeper's Square (n e w)> `);
    expect(await answer(client, 'config colour off')).to.contain('Colours are now off.');
    expect(await answer(client, 'config screenreader on')).to.contain('Screen-reader mode is now on.');
    const plain = await answer(client, 'look');
    expect(plain).to.contain("Lockkeeper's Square\r\n");
    expect(plain).not.to.contain('===');
    expect(plain).not.to.contain('  - ');
    expect(plain).not.to.contain('\r\n\r\n');
    client.line('quit');
    await client.closed;

    // A new connection of the same account starts with what was chosen.
    const again = await connect();
    await playAs(again, username);
    const entered = await again.prompted();
    expect(entered).not.to.contain(ESC);
    expect(entered).not.to.contain('===');
    expect(entered).to.match(/in Emberwick: Lockkeeper's Square \(n e w\)> $/);
    const shown = await answer(again, 'config');
    expect(shown).to.contain('Colours: off');
    expect(shown).to.contain('Screen-reader mode: on');
    again.line('config prompt off');
    await again.read('No prompt from now on.');
    const prompts = again.prompts.length;
    again.line('config screenreader off');
    await again.read('Screen-reader mode is now off.');
    again.line('say done');
    await again.read('You say: done\r\n');
    expect(await answer(again, 'config prompt default')).to.equal(`Your prompt is now '[%r] %e > '.\r\n${SQUARE_PROMPT}`);
    expect(again.prompts.length, 'no prompt while it was off').to.equal(prompts + 1);
  });

  it('sends no UTF-8 to a client that refuses CHARSET: other characters arrive as ?', async () => {
    const bert = await newPlayer(server, 'Bert');
    const client = await TelnetClient.connect(server.telnet!.port);
    clients.push(client);
    await client.waitForNegotiation(WILL, CHARSET);
    // The test client refuses what it does not know, CHARSET among them (IAC DONT CHARSET).
    expect(client.negotiated()).to.include(`WILL ${CHARSET}`);
    await client.read('Username: ');
    const name = uniqueName('Ula');
    const { username } = await registerGuest(server, name);
    await playAs(client, username);
    await okCmd(bert, 'say café — naïve');
    expect(await client.read('na?ve')).to.contain(`${bert.name} says: caf? ? na?ve`);
  });

  it('a dropped connection leaves its character link-dead where it stood; connect and play take it over unseen', async () => {
    const watcher = await playing('Wes');
    const dropped = await playing('Dora');
    await watcher.client.read(`${dropped.name} steps into the world.`);
    dropped.client.line('north');
    await dropped.client.read('=== Ropewalk Bridge ===');
    dropped.client.line('south');
    await dropped.client.read("=== Lockkeeper's Square ===");
    await watcher.client.read(`${dropped.name} arrives from the north.`);
    dropped.client.socket.destroy();

    await eventually(async () => expect(await answer(watcher.client, 'who')).to.contain(` - ${dropped.name} (link-dead)\r\n`), 5000);
    const sessions = () => server.db('sessions as s').join('users as u', 'u.id', 's.user_id').where('u.username', dropped.username).select('s.id');
    expect(await sessions()).to.have.length(1);

    const back = await connect();
    await playAs(back, dropped.username);
    expect(back.all).to.contain(`=== Lockkeeper's Square ===`);
    back.line('say back again');
    await watcher.client.read(`${dropped.name} says: back again`);
    expect(watcher.client.all).not.to.contain(`${dropped.name} leaves the world.`);
    expect(watcher.client.all).to.contain(`${dropped.name} is link-dead.`);
    expect(watcher.client.all.split(`${dropped.name} is now online.`), 'online once, when it first came').to.have.length(2);
    expect(watcher.client.all.split(`${dropped.name} steps into the world.`)).to.have.length(2);
    expect(await sessions()).to.have.length(1);
    // Connected again once the new connection's stream is known (its lease is written in the background).
    await eventually(async () => expect(await answer(watcher.client, 'look')).to.contain(`  - ${dropped.name}\r\n`), 5000);
  });

  it('logs connections with their peer address, logins with the username, and failed logins without the password', async () => {
    const name = uniqueName('Lou');
    const { username } = await registerGuest(server, name);
    const client = await connect();
    client.line(`connect ${username} wrong-password-7`);
    await client.read('Invalid username or password');
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    const entries = () => server.logs.entries.filter((e) => String(e.message).startsWith('Telnet'));
    const failed = entries().find((e) => e.message === 'Telnet login failed' && e.username === username);
    expect(failed).to.include({ peer: '127.0.0.1', refused: 'Unauthenticated', reason: 'Invalid username or password' });
    expect(entries().find((e) => e.message === 'Telnet login' && e.username === username)).to.include({ peer: '127.0.0.1' });
    expect(entries().find((e) => e.message === 'Telnet connection')).to.have.property('peer', '127.0.0.1');
    expect(server.logs.text()).not.to.contain('wrong-password-7');
    expect(server.logs.text()).not.to.contain(GOOD_PASSWORD);
    client.line('quit');
    await client.closed;
    await eventually(async () => expect(entries().find((e) => e.message === 'Telnet connection closed' && e.username === username)).to.include({ peer: '127.0.0.1' }), 5000);
  });

  it('compresses what it sends with MCCP2 for a client that takes it, and plays on as before', async () => {
    const { client, name } = await playing('Mica', { accept: [COMPRESS2] });
    expect(client.compressed).to.equal(true);
    client.line('look');
    await client.read('[Exits]:');
    client.line('say squeezed');
    await client.read('You say: squeezed');
    expect(client.inflated).to.be.greaterThan(client.compressedBytes);
    expect(client.inflateError).to.equal(null);
    const bert = await newPlayer(server, 'Bert');
    await okCmd(bert, `tell ${name} still readable`);
    await client.read('tells you: still readable');
    client.line('quit');
    await client.read('Goodbye.');
    await client.closed;
    expect(client.inflateError).to.equal(null);
  });

  it('offers no MCCP2 when [telnet] compression is off', async () => {
    const plain = await startTestServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0', MUD_TELNET_COMPRESSION: 'false' } });
    try {
      const client = await TelnetClient.connect(plain.telnet!.port, { accept: [COMPRESS2] });
      clients.push(client);
      await client.read('Username: ');
      expect(client.negotiated()).not.to.include(`WILL ${COMPRESS2}`);
      client.send(Buffer.of(IAC, DO, COMPRESS2));
      await client.waitForNegotiation(WONT, COMPRESS2);
      expect(client.compressed).to.equal(false);
    } finally {
      await plain.close();
    }
  });

  it('tells MUD directories what MSSP asks: name, players, uptime, codebase, port and protocols', async () => {
    await newPlayer(server, 'Bert');
    const client = await TelnetClient.connect(server.telnet!.port, { accept: [MSSP] });
    clients.push(client);
    await client.until(() => client.subnegotiations.some((s) => s.option === MSSP), () => 'MSSP');
    const mssp = new Map<string, string[]>();
    let name = '';
    for (const part of client.subnegotiations.find((s) => s.option === MSSP)!.data.toString('utf8').split(/(?=[\x01\x02])/)) {
      if (part[0] === '\x01') mssp.set((name = part.slice(1)), []);
      else mssp.get(name)!.push(part.slice(1));
    }
    expect(mssp.get('NAME')).to.deep.equal(['mud-server']);
    expect(Number(mssp.get('PLAYERS')![0])).to.be.at.least(1);
    expect(Number(mssp.get('UPTIME')![0])).to.be.within(1_700_000_000, Date.now() / 1000);
    expect(mssp.get('CODEBASE')![0]).to.match(/^mud-server /);
    expect(mssp.get('PORT')).to.deep.equal([String(server.telnet!.port)]);
    expect(mssp.get('WORLDS')).to.include('Emberwick');
    for (const protocol of ['GMCP', 'MCCP', 'MXP', 'UTF-8', 'ANSI']) expect(mssp.get(protocol), protocol).to.deep.equal(['1']);
    expect(mssp.has('HOSTNAME')).to.equal(false);
  });

  it('GMCP: Char.Login logs in as Mudlet does; then Char.StatusVars and Char.Status, Comm.Channel.List, Room.Players and Char.Items follow play', async () => {
    const name = uniqueName('Gil');
    const { username } = await registerGuest(server, name);
    const client = await connect({ gmcp: true });
    expect(await client.gmcpMessage('Char.Login.Default')).to.deep.equal({ type: ['password-credentials'] });
    client.gmcpSend('Char.Login.Credentials', { account: username, password: 'wrong-password-8' });
    expect(await client.gmcpMessage('Char.Login.Result')).to.deep.equal({ success: false, message: 'Invalid username or password' });
    client.gmcpSend('Char.Login.Credentials', { account: username.toUpperCase(), password: GOOD_PASSWORD });
    expect(await client.gmcpMessage('Char.Login.Result', 2)).to.deep.equal({ success: true });
    await client.read(`1. ${name} (Emberwick)`);
    const bert = await newPlayer(server, 'Bert');
    client.line('play 1');
    await client.read('[Exits]:');
    expect(await client.gmcpMessage('Char.StatusVars')).to.deep.equal({ name: 'Name', world: 'World', area: 'Area', room: 'Room' });
    expect(await client.gmcpMessage('Char.Status')).to.deep.equal({ name, world: 'Emberwick', area: 'The Canal Quarter', room: "Lockkeeper's Square" });
    const channels = (await client.gmcpMessage('Comm.Channel.List')) as Array<{ name: string }>;
    expect(channels.map((c) => c.name)).to.deep.equal(['say', 'yell', 'whisper', 'emote', 'tell', 'ooc']);
    expect(await client.gmcpMessage('Room.Players')).to.deep.equal([{ name: bert.name, fullname: bert.name }]);
    expect(await client.gmcpMessage('Char.Items.List')).to.deep.include({ location: 'room', items: [{ id: 'Canal Penny', name: 'Canal Penny' }] });
    await client.until(() => client.gmcp('Char.Items.List').some((l) => (l as { location: string }).location === 'inv'), () => 'the inventory');

    const listed = (list: unknown) => client.gmcp('Char.Items.List').some((l) => JSON.stringify(l) === JSON.stringify(list));
    client.line('get penny');
    await client.read('You picked up the Canal Penny.');
    await client.until(() => listed({ location: 'room', items: [] }) && listed({ location: 'inv', items: [{ id: 'Canal Penny', name: 'Canal Penny' }] }), () => 'the penny carried');
    client.line('drop penny');
    await client.read('You dropped the Canal Penny.');
    await client.until(() => listed({ location: 'room', items: [{ id: 'Canal Penny', name: 'Canal Penny' }] }) && listed({ location: 'inv', items: [] }), () => 'the penny dropped');
    // Another player takes it: one item removed from the room.
    await okCmd(bert, 'get canal penny');
    expect(await client.gmcpMessage('Char.Items.Remove')).to.deep.equal({ location: 'room', item: { id: 'Canal Penny', name: 'Canal Penny' } });
    await okCmd(bert, 'north');
    expect(await client.gmcpMessage('Room.RemovePlayer')).to.equal(bert.name);
    await okCmd(bert, 'south');
    expect(await client.gmcpMessage('Room.AddPlayer')).to.deep.equal({ name: bert.name, fullname: bert.name });
    client.gmcpSend('Char.Items.Room', {});
    await client.until(() => client.gmcp('Char.Items.List').filter((l) => (l as { location: string }).location === 'room').length >= 2, () => 'the room listed again');
    client.line('east');
    await client.read('[Exits]:');
    await client.until(() => client.gmcp('Char.Status').some((s) => (s as { room: string }).room === "Chandler's Row"), () => 'Char.Status in the new room');
  });

  it('MXP: a client that agrees reads exits and items as <send> links, on lines marked secure in locked mode', async () => {
    const { client } = await playing('Max', { accept: [MXP] });
    expect(client.all).to.contain(`${ESC}[7z`);
    client.line('look');
    const look = await client.read('[Exits]:');
    expect(look).to.contain(`${ESC}[1z  - <send href="get Canal Penny|examine Canal Penny" hint="The Canal Penny|get Canal Penny|examine Canal Penny">Canal Penny</send>\r\n`);
    const exits = await client.prompted();
    expect(exits).to.contain(`${ESC}[1z  - <send href="north" hint="Go north to Ropewalk Bridge">north</send>: Ropewalk Bridge\r\n`);
    // The room's name, outside any secure line, is plain text, its apostrophe too.
    expect(look).to.contain("=== Lockkeeper's Square ===");
    // A client that refuses MXP gets no tags.
    const plain = await playing('Nell');
    expect(plain.client.all).not.to.contain('<send');
    expect(plain.client.negotiated()).to.include(`WILL ${MXP}`);
    expect(plain.client.all).not.to.contain(`${ESC}[7z`);
  });

  it("takes over only the telnet sessions a dropped connection left: the account's other session playing the character stays", async () => {
    const { client, name, username } = await playing('Hal');
    const http = await server.post('/login', { username, password: GOOD_PASSWORD });
    await server.post('/characters/select', { session_id: http.body.session_id, character_id: (await server.db('characters').where({ name }).first('id')).id });
    client.socket.destroy();
    const back = await connect();
    await playAs(back, username);
    // The account's web session plays the character too, and stays.
    expect((await server.get(`/status/${http.body.session_id}`)).status).to.equal(200);
    const admin = await sessionFor(server, `adm${Date.now().toString(36)}`, 'admin');
    const rows = (await server.get(`/admin/database/sessions?session_id=${admin}`)).body.sessions.filter((s: { character_name: string | null }) => s.character_name === name);
    expect(rows.map((r: { client_type: string }) => r.client_type).sort()).to.deep.equal(['telnet', 'unknown']);
  });
});
