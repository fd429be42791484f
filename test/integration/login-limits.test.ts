/**
 * Logins behind a shared address (issue 35): only failed logins count against the address, a
 * name failing again and again stops at its own count (refused before its password is checked)
 * and then costs the address nothing, and a word typed at telnet's `Username:` that is no
 * account's is answered at once without a password prompt or a login attempt; guessing across
 * names still locks the address. Over HTTP and telnet, which count alike.
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { createUser, GOOD_PASSWORD } from '../helpers/accounts.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const WRONG = 'Wrong-Lantern-42';

describe(`logins behind a shared address (${DB_NAME})`, function () {
  this.timeout(30_000);
  let server: TestServer;
  const clients: TelnetClient[] = [];

  before(async () => {
    server = await startTestServer({
      env: {
        MUD_TELNET_ENABLED: 'true',
        MUD_TELNET_PORT: '0',
        MUD_RATE_LIMIT_ENABLED: 'true',
        MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '5',
        MUD_RATE_LIMIT_LOGIN_PER_USERNAME: '2',
      },
    });
    for (const name of ['neighbour', 'noisy']) await createUser(server, name, 'player');
  });
  after(async () => {
    await server?.close();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    // A window of its own for each test.
    server.clock.advance(server.config.rateLimit.windowSeconds * 1000);
  });

  const connect = async (): Promise<TelnetClient> => {
    const client = await TelnetClient.connect(server.telnet!.port);
    clients.push(client);
    await client.read('Username: ');
    return client;
  };
  const httpLogin = (username: string, password: string) => server.post('/login', { username, password });

  it('a word that is no account costs no login: answered at once, without asking for a password', async () => {
    const client = await connect();
    for (const word of ['look', 'who', 'north', 'say hello']) {
      client.line(word);
      await client.read(word === 'say hello' ? "Unknown command 'say'" : `There is no account called '${word}'.`);
      await client.read('Username: ');
    }
    expect(client.all).not.to.contain('Password:');
    // The address has failed nothing: its neighbour logs in, and so does a lone known name.
    for (let i = 0; i < 6; i++) expect((await httpLogin('neighbour', GOOD_PASSWORD)).status, `login ${i}`).to.equal(200);
    client.line('NEIGHBOUR');
    await client.read('Password: ');
    client.line(GOOD_PASSWORD);
    expect(await client.read('or quit.')).to.contain('Logged in as neighbour.');
  });

  it("one client failing one name stops at the name's count; its neighbours log in, over HTTP and telnet", async () => {
    const noisy = await connect();
    for (let i = 0; i < 2; i++) {
      noisy.line(`connect noisy ${WRONG}`);
      await noisy.read('Invalid username or password');
    }
    for (let i = 0; i < 6; i++) {
      noisy.line(`connect noisy ${WRONG}`);
      await noisy.read(/Too many failed attempts\. Try again in \d+ seconds\./);
    }
    expect((await httpLogin('noisy', WRONG)).status).to.equal(429);
    // Even the right password waits at this address, where its name was guessed.
    expect((await httpLogin('noisy', GOOD_PASSWORD)).status).to.equal(429);
    expect((await httpLogin('neighbour', GOOD_PASSWORD)).status).to.equal(200);
    const neighbour = await connect();
    neighbour.line(`connect neighbour ${GOOD_PASSWORD}`);
    expect(await neighbour.read('or quit.')).to.contain('Logged in as neighbour.');
  });

  it('guessing across names still locks the address: past 5 failures every login from it waits', async () => {
    const guesser = await connect();
    for (const name of ['anna', 'bert', 'cora']) {
      guesser.line(`connect ${name} ${WRONG}`);
      await guesser.read('Invalid username or password');
    }
    for (const name of ['dora', 'emil']) expect((await httpLogin(name, WRONG)).status).to.equal(401);
    expect((await httpLogin('neighbour', GOOD_PASSWORD)).status).to.equal(429);
    guesser.line(`connect neighbour ${GOOD_PASSWORD}`);
    await guesser.read(/Too many attempts\. Try again in \d+ seconds\./);
  });
});
