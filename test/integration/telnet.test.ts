/**
 * The telnet door against the real server, through raw sockets (test/helpers/telnet-client.ts):
 * negotiation, login with the password unechoed, the character menu, play with events arriving
 * while idle and GMCP, the social channels, the connection counting as connected, the session
 * as an ordinary one (listed, kicked), quit, hostile input, TLS, and the limits (shared login
 * limit, command throttle, connection caps, timeouts).
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { TelnetClient, type ClientOptions } from '../helpers/telnet-client.ts';
import { GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName } from '../helpers/players.ts';
import { CHARSET, DO, ECHO, GMCP, IAC, NAWS, subnegotiation, TTYPE, WILL, WONT } from '../../src/telnet/protocol.ts';
import { tlsCredentials } from '../../src/telnet/server.ts';
import { ConfigError } from '../../src/config/config.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const ESC = '\x1b';

describe(`telnet door (${DB_NAME})`, function () {
  this.timeout(30_000);
  let server: TestServer;
  let certDir: string;
  const clients: TelnetClient[] = [];

  const connect = async (options: ClientOptions = {}, target = server): Promise<TelnetClient> => {
    const client = await TelnetClient.connect(options.tls ? target.telnet!.tlsPort! : target.telnet!.port, options);
    clients.push(client);
    await client.read('Username: ');
    return client;
  };

  /** A guest character and a telnet connection playing it. */
  const playing = async (first: string, options: ClientOptions = {}, target = server) => {
    const name = uniqueName(first);
    const { username } = await registerGuest(target, name);
    const client = await connect(options, target);
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    client.line('play 1');
    await client.read('[Exits]:');
    return { client, name, username };
  };

  before(async () => {
    certDir = mkdtempSync(path.join(tmpdir(), 'mud-telnet-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem')], { stdio: 'ignore' });
    server = await startTestServer({
      env: {
        MUD_TELNET_ENABLED: 'true',
        MUD_TELNET_PORT: '0',
        MUD_TELNET_TLS_PORT: '0',
        MUD_TELNET_TLS_CERT: path.join(certDir, 'cert.pem'),
        MUD_TELNET_TLS_KEY: path.join(certDir, 'key.pem'),
        MUD_TELNET_MAX_CONNECTIONS_PER_ADDRESS: '8',
      },
    });
  });
  after(async () => {
    await server?.close();
    rmSync(certDir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await resetGame(server);
  });

  it('negotiates: offers GMCP and CHARSET, asks NAWS and TTYPE, refuses the rest, answers CHARSET and honours width and MTTS', async () => {
    const client = await connect({ width: 40, terminalTypes: ['TESTCLIENT', 'XTERM', 'MTTS 0'] });
    await client.waitForNegotiation(WILL, GMCP);
    expect(client.negotiated().slice(0, 4)).to.deep.equal([`WILL ${GMCP}`, `WILL ${CHARSET}`, `DO ${NAWS}`, `DO ${TTYPE}`]);
    const before = client.negotiations.length;
    client.send(Buffer.of(IAC, DO, 99, IAC, WILL, 98, IAC, DO, ECHO));
    await client.waitForNegotiation(WONT, ECHO, before);
    expect(client.negotiated().slice(before)).to.deep.equal(['WONT 99', 'DONT 98', `WONT ${ECHO}`]);
    // The client offers its character sets: UTF-8 is taken.
    client.send(Buffer.of(IAC, WILL, CHARSET));
    client.send(subnegotiation(CHARSET, Buffer.from('\x01;ISO-8859-1;UTF-8', 'latin1')));
    await client.until(() => client.subnegotiations.some((s) => s.option === CHARSET && s.data[0] === 2), () => 'CHARSET ACCEPTED');
    expect(client.subnegotiations.find((s) => s.option === CHARSET && s.data[0] === 2)!.data.subarray(1).toString()).to.equal('UTF-8');
    // TTYPE asked three times (MTTS), and MTTS without the ANSI bit means no colour.
    await client.until(() => client.subnegotiations.filter((s) => s.option === TTYPE).length === 3, () => 'three TTYPE SENDs');
    client.line('help');
    const help = await client.read('quit');
    expect(help).not.to.contain(ESC);
    for (const line of help.split('\r\n')) expect([...line].length, line).to.be.at.most(40);
  });

  it('logs in prompt by prompt with the password unechoed, lists the characters numbered with their worlds', async () => {
    const name = uniqueName('Pia');
    const { username } = await registerGuest(server, name);
    const client = await connect();
    client.line(username);
    await client.read('Password: ');
    const willEcho = client.negotiations.find((n) => n.verb === WILL && n.option === ECHO);
    expect(willEcho, 'IAC WILL ECHO before the password prompt').to.not.equal(undefined);
    expect(client.all.slice(willEcho!.at)).to.match(/^Password: $/);
    client.line('not-the-password-1');
    expect(await client.read('Username: ')).to.contain('Invalid username or password');
    await client.waitForNegotiation(WONT, ECHO);
    client.line(username);
    await client.read('Password: ');
    client.line(GOOD_PASSWORD);
    const menu = await client.read('or quit.');
    expect(menu).to.contain(`Logged in as ${username}.`);
    expect(menu).to.contain(`1. ${name} (Emberwick)`);
    expect(client.all).not.to.contain(GOOD_PASSWORD);
    expect(client.all).not.to.contain('not-the-password-1');
  });

  it('plays: GMCP Char.Name and Room.Info, events while idle, says read over HTTP, Room.Info after a move', async () => {
    const bert = await newPlayer(server, 'Bert');
    const { client, name } = await playing('Tilda', { gmcp: ['Char 1', 'Room 1', 'Comm.Channel 1'] });
    expect(await client.gmcpMessage('Char.Name')).to.deep.equal({ name, fullname: name });
    const spawn = (await client.gmcpMessage('Room.Info')) as { num: number; name: string; area: string; exits: Record<string, number> };
    expect(spawn).to.include({ name: "Lockkeeper's Square", area: 'The Canal Quarter' });
    expect(Object.keys(spawn.exits).sort()).to.deep.equal(['e', 'n', 'w']);

    // Idle, the telnet player reads what happens around it.
    await okCmd(bert, 'say Evening, <friend> & all');
    expect(await client.read('& all')).to.contain(`${bert.name} says: Evening, <friend> & all`);
    expect(await client.gmcpMessage('Comm.Channel.Text')).to.deep.equal({ channel: 'say', talker: bert.name, text: `${bert.name} says: Evening, <friend> & all` });
    await okCmd(bert, 'yell Mind the gate!');
    expect(await client.read('Mind the gate!')).to.contain(`${ESC}[1;31m${bert.name} yells: Mind the gate!`);

    client.line("say Hello from the wire, it's late");
    expect(await client.read("it's late")).to.contain("You say: Hello from the wire, it's late");
    const chat = await server.get(`/chat/${bert.sessionId}`);
    expect(chat.body.messages.map((m: { sender: string; text: string }) => `${m.sender}: ${m.text}`)).to.include(`${name}: Hello from the wire, it&#x27;s late`);

    client.line('north');
    expect(await client.read('[Exits]:')).to.contain('Ropewalk Bridge');
    const moved = (await client.gmcpMessage('Room.Info', 2)) as { num: number; name: string; exits: Record<string, number> };
    expect(moved.name).to.equal('Ropewalk Bridge');
    expect(moved.exits.s).to.equal(spawn.num);
    expect(moved.num).to.equal(spawn.exits.n);
    // The room is shown once: by the command's answer, not again by its event.
    await okCmd(bert, 'north');
    await client.read(`${bert.name} arrives from the south.`);
    expect(client.all.split('=== Ropewalk Bridge ===').length - 1).to.equal(1);
  });

  it("shows the room again when builders change it while the player stands there", async () => {
    const { client } = await playing('Maud');
    const mason = await sessionFor(server, 'tarrer', 'worldbuilder');
    const room = '/api/worlds/emberwick/rooms/lockkeepers_square';
    const before = await server.get(room, { authorization: `Bearer ${mason}` });
    const changed = await server.request('PATCH', room, { version: before.body.version, description: 'Fresh tar gleams on the lock gates.' }, { authorization: `Bearer ${mason}` });
    expect(changed.status, changed.text).to.equal(200);
    try {
      expect(await client.read('[Exits]:')).to.contain('Fresh tar gleams on the lock gates.');
    } finally {
      const reverted = await server.request('POST', `${room}/revert`, { version: changed.body.version }, { authorization: `Bearer ${mason}` });
      expect(reverted.status, reverted.text).to.equal(200);
    }
  });

  it('an open connection keeps its character connected (never link-dead); emote, tell and ooc read as lines of their own colour', async () => {
    const bert = await newPlayer(server, 'Bert');
    const { client, name } = await playing('Tess');
    const admin = await sessionFor(server, `adm${Date.now().toString(36)}`, 'admin');
    const row = async () => (await server.get(`/admin/database/sessions?session_id=${admin}`)).body.sessions.find((s: { character_name: string | null }) => s.character_name === name);
    await eventually(async () => expect(await row()).to.include({ open_streams: 1, connected: true }), 5000);
    server.clock.advance(61_000);
    await server.services.streams.renewLeases();
    expect(await okCmd(bert, 'who')).to.equal(`Active players:\n - ${name}`);

    await okCmd(bert, ':tips his hat');
    expect(await client.read('tips his hat.')).to.contain(`${ESC}[33m${bert.name} tips his hat.`);
    await okCmd(bert, `tell ${name} psst`);
    expect(await client.read('psst')).to.contain(`${ESC}[1;35m${bert.name} tells you: psst`);
    await okCmd(bert, 'ooc brb');
    expect(await client.read('brb')).to.contain(`${ESC}[32m${bert.name} (OOC): brb`);
  });

  it('is an ordinary session: client type telnet, listed for admins; a kick ends the connection with the reason', async () => {
    const { client, name } = await playing('Kit');
    const admin = await sessionFor(server, `adm${Date.now().toString(36)}`, 'admin');
    const listing = await server.get(`/admin/database/sessions?session_id=${admin}`);
    const row = listing.body.sessions.find((s: { character_name: string | null }) => s.character_name === name);
    expect(row.client_type).to.equal('telnet');
    const kick = await server.post('/admin/session/kick', { session_id: admin, target_session_id: String(row.id) });
    expect(kick.body.success, kick.text).to.equal(true);
    expect(await client.read('ended your session.')).to.contain('An administrator ended your session.');
    await client.closed;
  });

  it('quit logs the session out and closes; the character leaves the world for the others', async () => {
    const bert = await newPlayer(server, 'Bert');
    const { client, name } = await playing('Quin');
    expect((await server.get(`/status/${bert.sessionId}`)).body.active_players).to.include(name);
    client.line('quit');
    await client.read('Goodbye.');
    await client.closed;
    // The session is logged out just after the connection closes.
    await eventually(async () => expect((await server.get(`/status/${bert.sessionId}`)).body.active_players).not.to.include(name), 5000);
  });

  it('hostile input: IAC inside and across lines, junk bytes and over-long lines neither crash nor reach the game; others play on', async () => {
    const bert = await newPlayer(server, 'Bert');
    const { client } = await playing('Ivo');
    // IAC NOP inside a line and a negotiation split across packets vanish from the text.
    client.send(Buffer.concat([Buffer.from('say he'), Buffer.of(IAC, 241), Buffer.from('llo '), Buffer.of(IAC)]));
    client.send(Buffer.concat([Buffer.of(WILL, 98), Buffer.from('wor'), Buffer.of(IAC, IAC), Buffer.from('ld\r\n')]));
    await client.read('You say: hello wor');
    const said = (await server.get(`/chat/${bert.sessionId}`)).body.messages.at(-1);
    expect(said.text).to.equal('hello wor\ufffdld');
    // Junk: control bytes, terminal escapes, invalid UTF-8, an unterminated subnegotiation ended later.
    client.send(Buffer.from([0, 1, 2, 7, 27, 91, 50, 74, 0xc3, 0x28, 0xff, 0xfa, 201, 1, 2, 3, 0xff, 0xf0, 13, 10]));
    client.line('x'.repeat(2001));
    await client.read('longer than 2000 characters and was ignored');
    client.send(Buffer.from(`say ${'y'.repeat(9000)}\r\n`));
    await client.read('longer than 2000 characters and was ignored');
    client.line('say still here');
    await client.read('You say: still here');
    // A flood of lines from one connection does not hold up another player.
    const flooder = await connect();
    flooder.send('nonsense words\r\n'.repeat(5000));
    const other = await playing('Olga');
    other.client.line('say unhindered');
    await other.client.read('You say: unhindered');
    await flooder.until(() => flooder.count("Unknown command 'nonsense'") >= 20, () => '20 answers to the flood');
  });

  it('creates an account, a character in a world, and plays it; a guest plays at once, asked what it needs', async () => {
    const username = `tel${Date.now().toString(36)}`;
    const client = await connect();
    client.line(`create ${username} ${GOOD_PASSWORD}`);
    expect(await client.read('or quit.')).to.contain('You have no characters yet.');
    client.line('new nowhere');
    await client.read("World 'nowhere' not found");
    client.line('new emberwick');
    const created = await client.read('or quit.');
    expect(created).to.match(/Character '.+' created for/);
    client.line('play 1');
    await client.read('[Exits]:');

    const guest = await connect();
    guest.line('guest');
    await guest.read("Your character's name: ");
    const name = uniqueName('Gwen');
    guest.line(name);
    await guest.read('(12 or more characters): ');
    guest.line(GOOD_PASSWORD);
    await guest.read('The password again: ');
    guest.line(GOOD_PASSWORD);
    const entered = await guest.read('[Exits]:');
    expect(entered).to.match(/Temporary guest account created successfully! You can now login as guest_\d{5}\./);
    expect(entered).to.contain(`You play ${name} in Emberwick.`);
    expect(guest.all).not.to.contain(GOOD_PASSWORD);
  });

  it('serves TLS with the configured certificate', async () => {
    const name = uniqueName('Tove');
    const { username } = await registerGuest(server, name);
    const client = await connect({ tls: true });
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    expect(await client.read('or quit.')).to.contain(`1. ${name} (Emberwick)`);
  });

  it('refuses, before start-up opens anything, a certificate without its key or one it cannot read', () => {
    const telnet = { ...server.config.telnet, tlsCert: path.join(certDir, 'cert.pem'), tlsKey: '' };
    expect(() => tlsCredentials(telnet)).to.throw(ConfigError, '[telnet] tls_cert and tls_key go together');
    expect(() => tlsCredentials({ ...telnet, tlsKey: path.join(certDir, 'missing.pem') })).to.throw(ConfigError, /^Cannot read \[telnet\] tls_key .*missing\.pem/);
  });

  describe('limits', () => {
    let limited: TestServer;
    before(async () => {
      limited = await startTestServer({
        env: {
          MUD_TELNET_ENABLED: 'true',
          MUD_TELNET_PORT: '0',
          MUD_TELNET_HOST: '::',
          MUD_TELNET_MAX_CONNECTIONS: '3',
          MUD_TELNET_MAX_CONNECTIONS_PER_ADDRESS: '2',
          MUD_TELNET_LOGIN_TIMEOUT_SECONDS: '1',
          MUD_TELNET_IDLE_TIMEOUT_SECONDS: '2',
          MUD_RATE_LIMIT_ENABLED: 'true',
          MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '3',
          MUD_RATE_LIMIT_COMMAND_PER_SESSION: '3',
        },
      });
    });
    after(async () => {
      await limited?.close();
    });

    it('caps connections per address and in total, and closes a connection that does not log in', async () => {
      const port = limited.telnet!.port;
      const [a, b] = [await TelnetClient.connect(port), await TelnetClient.connect(port)];
      clients.push(a, b);
      const third = await TelnetClient.connect(port);
      clients.push(third);
      await third.read('Too many connections from your address');
      await third.closed;
      const six = await TelnetClient.connect(port, {}, '::1');
      clients.push(six);
      await six.read('Username: ');
      const full = await TelnetClient.connect(port, {}, '::1');
      clients.push(full);
      await full.read('The server is full');
      await a.read('Login timed out.');
      await a.closed;
    });

    it('shares the failed-login count with HTTP: failures over either count for the address, the right password nothing', async () => {
      const { username } = await registerGuest(limited, uniqueName('Lia'));
      expect((await limited.post('/login', { username, password: 'wrong-password-1' })).status).to.equal(401);
      const client = await connect({}, limited);
      client.line(`connect ${username} wrong-password-2`);
      await client.read('Invalid username or password');
      client.line(`connect ${username} ${GOOD_PASSWORD}`);
      await client.read('or quit.');
      client.line('quit');
      await client.closed;
      expect((await limited.post('/login', { username, password: GOOD_PASSWORD })).status).to.equal(200);
      expect((await limited.post('/login', { username, password: 'wrong-password-3' })).status).to.equal(401);
      expect((await limited.post('/login', { username, password: GOOD_PASSWORD })).status).to.equal(429);
      const again = await connect({}, limited);
      again.line(`connect ${username} ${GOOD_PASSWORD}`);
      await again.read(/Too many attempts\. Try again in \d+ seconds\./);
    });

    it('throttles commands as POST /command does, and logs an idle player out', async () => {
      // A new login window for this address: the test before used up its logins.
      limited.clock.advance(61_000);
      const { client } = await playing('Ida', {}, limited);
      for (let i = 0; i < 4; i++) client.line('look');
      await client.read(/Too many commands\. Try again in \d+ seconds\./);
      const telnetSessions = async () => (await limited.db('sessions').where({ client_type: 'telnet' })).length;
      expect(await telnetSessions()).to.equal(1);
      await client.read('You were idle for too long.');
      await client.closed;
      await eventually(async () => expect(await telnetSessions()).to.equal(0), 5000);
    });
  });
});
