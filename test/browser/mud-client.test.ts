/**
 * The telnet door with a real MUD client: TinTin++ under tmux (test/browser/tintin.ts) logs in
 * prompt by prompt (its password unechoed on its screen), says something an HTTP player reads
 * through GET /chat, and plays beside the browser play client in headless Chromium, each seeing
 * the other's says and moves live. And what regulars expect (issue 35): TinTin++ takes MCCP2
 * compression and reads MSSP, logs in by GMCP Char.Login and reads the GMCP packages of play,
 * and shows the door's prompt.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, registerGuest, uniqueName } from '../helpers/players.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { chromiumFor, enter, logLine, openPlay, typeCommand } from './browser.ts';
import { tintinFor, TintinSession } from './tintin.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

describe(`telnet door with a real MUD client (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let tintin: string | undefined;
  const sessions: TintinSession[] = [];

  /** TinTin++ connected, logged in prompt by prompt, playing a new guest's character. */
  const tintinPlayer = async (first: string) => {
    const name = uniqueName(first);
    const { username } = await registerGuest(server, name);
    const client = TintinSession.start(tintin!, server.telnet!.port);
    sessions.push(client);
    await client.waitFor('Username:');
    client.type(username);
    await client.waitFor('Password:');
    client.type(GOOD_PASSWORD);
    await client.waitFor(`1. ${name} (Emberwick)`);
    client.type('play 1');
    await client.waitFor('[Exits]:');
    return { client, name };
  };

  before(async function () {
    tintin = tintinFor(this);
    server = await startTestServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0' } });
  });
  after(async () => {
    for (const session of sessions) session.stop();
    await server?.close();
  });

  it('TinTin++ logs in without showing the password, says what an HTTP player reads through /chat, and hears the answer live', async () => {
    const http = await newPlayer(server, 'Hugo');
    const { client, name } = await tintinPlayer('Tina');
    expect(client.screen()).not.to.contain(GOOD_PASSWORD);
    client.type('say Good evening from TinTin++');
    await client.waitFor('You say: Good evening from TinTin++');
    const chat = await server.get(`/chat/${http.sessionId}`);
    expect(chat.body.chat).to.contain(`${name}: Good evening from TinTin++`);
    await okCmd(http, 'say Evening, wire walker.');
    await client.waitFor(`${http.name} says: Evening, wire walker.`);
  });

  it('TinTin++ speaks MCCP2, MSSP and GMCP with the door: compressed, listed, logged in by Char.Login, the packages of play shown', async () => {
    const name = uniqueName('Gale');
    const { username } = await registerGuest(server, name);
    const client = TintinSession.start(tintin!, server.telnet!.port, [
      // TinTin++ takes MSSP and MCCP2 by itself (it shows what MSSP told with its telnet debug
      // on); GMCP it takes when a script answers for it.
      '#config {debug telnet} {on}',
      '#event {IAC WILL GMCP} {#send {\\xFF\\xFD\\xC9\\};#send {\\xFF\\xFA\\xC9Char.Login.Credentials \\x7B"account": "' + username.toUpperCase() + '", "password": "' + GOOD_PASSWORD + '"\\x7D\\xFF\\xF0\\}}',
      '#event {IAC SB GMCP} {#showme GMCP %0 %2}',
    ]);
    sessions.push(client);
    await client.waitFor('SENT IAC DO MCCP2');
    await client.waitFor('SENT IAC DO MSSP');
    await client.waitFor('VAL mud-server');
    await client.waitFor(`VAL ${server.telnet!.port}`);
    await client.waitFor('GMCP Char.Login.Result Char.Login.Result {"success":true}');
    await client.waitFor(`1. ${name} (Emberwick)`);
    client.type('play 1');
    // (TinTin++ breaks long lines at its width: the starts of the messages are looked for.)
    await client.waitFor(`GMCP Char.Status Char.Status {"name":"${name}","world":"Emberwick","area":"The Canal Quarter"`);
    await client.waitFor('GMCP Comm.Channel.List Comm.Channel.List [{"name":"say","caption":"Say","command":"say"}');
    await client.waitFor('GMCP Char.Items.List Char.Items.List {"location":"room","items":[{"id":"Canal Penny","name":"Canal Penny"}]}');
    // The door's prompt after the room, as TinTin++ shows it.
    await client.waitFor("[Lockkeeper's Square] n e w >");
    client.type('north');
    await client.waitFor('GMCP Room.Info Room.Info {"num":');
    await client.waitFor('[Ropewalk Bridge] s n >');
    client.type('#session');
    await client.waitFor('(mccp 2)');
    client.type('#info mccp');
    await client.waitFor('#INFO MCCP2: TOTAL IN:');
  });

  it('a TinTin++ player and a browser player see each other say and move, live', async function () {
    const browser = await chromiumFor(this);
    try {
      const anna = { name: uniqueName('Anna') };
      const { username } = await registerGuest(server, anna.name);
      const page = await openPlay(browser, server.url);
      page.context.setDefaultTimeout(10_000);
      await enter(page, username, anna.name);
      const { client, name: tina } = await tintinPlayer('Tina');
      await logLine(page, `${tina} steps into the world.`).waitFor();

      client.type('say Hello, browser.');
      const heard = logLine(page, 'Hello, browser.');
      await heard.waitFor();
      expect(await heard.locator('.speaker').textContent()).to.equal(`${tina} says:`);
      await typeCommand(page, 'say Hello, terminal.');
      await client.waitFor(`${anna.name} says: Hello, terminal.`);

      client.type('north');
      await client.waitFor('=== Ropewalk Bridge ===');
      await logLine(page, `${tina} leaves north.`).waitFor();
      await page.page.getByRole('button', { name: 'North to Ropewalk Bridge' }).click();
      await client.waitFor(`${anna.name} arrives from the south.`);
      expect(page.errors).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });
});
