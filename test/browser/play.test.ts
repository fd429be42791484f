/**
 * The play client at /play (web/, built into public/play/): how the server serves it, then
 * the client itself in headless Chromium (test/browser/browser.ts) against the real server:
 * two players seeing each other live, a keyboard-only guest, chat shown as text, a server
 * restart, polling without EventSource, account creation, the staff view, and presence and emotes.
 */
import { describe, it, before, after, beforeEach } from 'mocha';
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName } from '../helpers/players.ts';
import { createUser, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { chromiumFor, enter, logLine, openPlay, typeCommand, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

describe(`play client (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  describe('serving', () => {
    it('GET /play: the page and its files, with a strict Content-Security-Policy', async () => {
      const page = await server.get('/play');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
      expect(page.text).to.contain('<script type="module" src="/play/play.js"></script>');
      const csp = page.headers.get('content-security-policy') ?? '';
      for (const directive of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
        expect(csp).to.contain(directive);
      }
      expect(csp).not.to.contain('unsafe-');
      expect(page.headers.get('x-frame-options')).to.equal('DENY');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      expect((await server.get('/play/')).text).to.equal(page.text);
      const script = await server.get('/play/play.js');
      expect(script.headers.get('content-type')).to.match(/^(text|application)\/javascript/);
      expect(script.headers.get('content-security-policy')).to.equal(csp);
      expect((await server.get('/play/play.css')).headers.get('content-type')).to.match(/^text\/css/);
      expect((await server.get('/play/nothing.js')).status).to.equal(404);
    });

    it('GET / sends browsers to /play; JSON clients keep the service information', async () => {
      const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
      const redirect = await fetch(`${server.url}/`, { headers: { accept: browserAccept }, redirect: 'manual' });
      expect(redirect.status).to.equal(302);
      expect(redirect.headers.get('location')).to.equal('/play');
      for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html']) {
        const info = await server.get('/', accept ? { accept } : {});
        expect(info.status, accept).to.equal(200);
        expect(info.body).to.deep.equal({ message: 'MUD Server API', version: info.body.version });
        expect(info.headers.get('vary'), accept).to.match(/Accept/i);
      }
    });

    it('the client sources never turn text into markup', () => {
      const dir = path.resolve('web');
      for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
        expect(readFileSync(path.join(dir, file), 'utf8'), file).not.to.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
      }
    });
  });

  describe('in Chromium', function () {
    let browser: Browser | undefined;
    const open: PlayPage[] = [];
    const play = async (baseUrl = server.url, init?: string): Promise<PlayPage> => {
      const page = await openPlay(browser!, baseUrl, undefined, init);
      page.context.setDefaultTimeout(10_000);
      open.push(page);
      return page;
    };

    before(async function () {
      browser = await chromiumFor(this);
    });
    after(async () => {
      await browser?.close();
    });
    beforeEach(async () => {
      await Promise.all(open.splice(0).map((page) => page.context.close()));
      await resetGame(server);
    });

    /** No uncaught error, no CSP violation, no dialog on any page of the test. */
    const expectClean = () => {
      for (const { errors, dialogs } of open) {
        expect(errors, 'page errors').to.deep.equal([]);
        expect(dialogs, 'dialogs').to.deep.equal([]);
      }
    };

    const newCharacter = async (baseServer: TestServer, first: string) => {
      const name = uniqueName(first);
      return { name, ...(await registerGuest(baseServer, name)) };
    };

    it('two players: A says and B sees it live; A takes an exit button and B sees the leave', async () => {
      const [anna, bert] = [await newCharacter(server, 'Anna'), await newCharacter(server, 'Bert')];
      const [a, b] = [await play(), await play()];
      await enter(a, anna.username, anna.name);
      await enter(b, bert.username, bert.name);
      await b.page.locator('.room .things li').filter({ hasText: anna.name }).waitFor();

      await typeCommand(a, 'say Good evening, lockkeeper.');
      const heard = logLine(b, 'Good evening, lockkeeper.');
      await heard.waitFor();
      expect(await heard.getAttribute('class')).to.contain('say');
      expect(await heard.locator('.speaker').textContent()).to.equal(`${anna.name} says:`);

      await a.page.getByRole('button', { name: 'North to Ropewalk Bridge' }).click();
      await a.page.locator('#room-name', { hasText: 'Ropewalk Bridge' }).waitFor();
      await logLine(b, `${anna.name} leaves north.`).waitFor();
      await b.page.locator('.room .things li').filter({ hasText: anna.name }).waitFor({ state: 'detached' });
      expect(await b.page.locator('#room-name').textContent()).to.equal("Lockkeeper's Square");
      // A yell carries into the next room, and looks like one.
      await typeCommand(b, 'yell Mind the gate!');
      expect(await logLine(a, 'Mind the gate!').getAttribute('class')).to.contain('yell');
      expectClean();
    });

    it('an emote reads as one line; Characters leaves the world at once; a closed page is link-dead in the room', async () => {
      const [anna, bert] = [await newCharacter(server, 'Anna'), await newCharacter(server, 'Bert')];
      const [a, b] = [await play(), await play()];
      await enter(a, anna.username, anna.name);
      await enter(b, bert.username, bert.name);
      const bertHere = a.page.locator('.room .things li').filter({ hasText: bert.name });
      await bertHere.waitFor();

      await typeCommand(b, ':waves');
      const waved = logLine(a, `${bert.name} waves.`);
      await waved.waitFor();
      expect(await waved.getAttribute('class')).to.contain('emote');
      expect(await waved.locator('.speaker').count()).to.equal(0);

      await b.page.getByRole('button', { name: 'Characters' }).click();
      await logLine(a, `${bert.name} leaves the world.`).waitFor();
      await bertHere.waitFor({ state: 'detached' });
      await b.page.getByRole('button', { name: `Play as ${bert.name}` }).click();
      await b.page.locator('.connection[data-state="live"]').waitFor();
      // Its second arrival (the first was on entering).
      await logLine(a, `${bert.name} steps into the world.`).nth(1).waitFor();
      await bertHere.waitFor();

      await b.context.close();
      open.splice(open.indexOf(b), 1);
      await typeCommand(a, 'look');
      await bertHere.filter({ hasText: '(link-dead)' }).waitFor();
      expectClean();
    });

    it('a guest registers and plays with the keyboard alone: tabs, history, Tab completion', async () => {
      const guest = await play();
      const { page } = guest;
      const name = uniqueName('Wren');
      // The page starts in the username field; the tab list is one Shift+Tab before it.
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      expect(await page.getByRole('tab', { selected: true }).textContent()).to.equal('Play as guest');
      await page.keyboard.press('Tab');
      await page.keyboard.type(name);
      await page.keyboard.press('Tab');
      await page.keyboard.type(GOOD_PASSWORD);
      await page.keyboard.press('Tab');
      await page.keyboard.type(GOOD_PASSWORD);
      await page.keyboard.press('Enter');

      await logLine(guest, /You play as guest account guest_\d{5}/).waitFor();
      await page.locator('.connection[data-state="live"]').waitFor();
      expect(await page.evaluate('document.activeElement.id')).to.equal('command');
      await page.keyboard.type('lo');
      await page.keyboard.press('Tab');
      expect(await page.locator('#command').inputValue()).to.equal('look');
      await page.keyboard.press('Enter');
      // The room was written on entering; look writes it again.
      await page.locator('.log .room-entry', { hasText: "Lockkeeper's Square" }).nth(1).waitFor();
      await page.keyboard.type('get c');
      await page.keyboard.press('Tab');
      expect(await page.locator('#command').inputValue()).to.equal('get Canal Penny');
      await page.keyboard.press('Enter');
      await page.locator('.side .names li', { hasText: 'Canal Penny' }).waitFor();
      await page.keyboard.press('ArrowUp');
      expect(await page.locator('#command').inputValue()).to.equal('get Canal Penny');
      await page.keyboard.press('ArrowUp');
      expect(await page.locator('#command').inputValue()).to.equal('look');
      await page.keyboard.press('Escape');
      await page.keyboard.type('nor');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.locator('#room-name', { hasText: 'Ropewalk Bridge' }).waitFor();
      // With nothing to complete, Tab leaves the command line (focus is never trapped).
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.id')).not.to.equal('command');
      expectClean();
    });

    it('chat is shown as text: markup in a message stays literal and runs nothing', async () => {
      const [anna, bert] = [await newCharacter(server, 'Anna'), await newCharacter(server, 'Bert')];
      const [a, b] = [await play(), await play()];
      await enter(a, anna.username, anna.name);
      await enter(b, bert.username, bert.name);
      const payload = '<img src=x onerror=alert(1)>';
      await typeCommand(a, `say ${payload}`);
      for (const page of [a, b]) {
        const line = page.page.locator('.log .chat .text', { hasText: payload });
        await line.waitFor();
        expect(await line.textContent()).to.equal(payload);
        expect(await page.page.locator('.log img').count()).to.equal(0);
      }
      expectClean();
    });

    it('a server restart: the page says the server is away, reconnects, and shows the chat it missed', async () => {
      const first = await startTestServer();
      let second: TestServer | undefined;
      try {
        const anna = await newCharacter(first, 'Anna');
        const bert = await newPlayer(first, 'Bert');
        const a = await play(first.url);
        await enter(a, anna.username, anna.name);
        await okCmd(bert, 'say before the restart');
        await logLine(a, 'before the restart').waitFor();

        // Until the test lets it, the page finds the server still away (so the say below is missed).
        await a.page.route('**/status/**', (route) => route.abort());
        await first.stop();
        await a.page.getByRole('alert').filter({ hasText: 'The server is away' }).waitFor();
        second = await startTestServer({ shareDatabaseWith: first, env: { MUD_PORT: String(first.port) } });
        await okCmd({ ...bert, server: second }, 'say while you were away');
        await a.page.unroute('**/status/**');

        await logLine(a, 'while you were away').waitFor();
        await a.page.locator('.connection[data-state="live"]').waitFor();
        expect(await a.page.getByRole('alert').filter({ hasText: 'The server is away' }).isHidden()).to.equal(true);
        await okCmd({ ...bert, server: second }, 'say and live again');
        await logLine(a, 'and live again').waitFor();
        expect(await logLine(a, 'before the restart').count(), 'no message twice').to.equal(1);
        expectClean();
      } finally {
        await second?.close();
        await first.close();
      }
    });

    it('without EventSource the page polls GET /chat?after=', async () => {
      const anna = await newCharacter(server, 'Anna');
      const bert = await newPlayer(server, 'Bert');
      const a = await play(server.url, 'delete window.EventSource;');
      await a.page.getByRole('textbox', { name: 'Username' }).fill(anna.username);
      await a.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
      await a.page.getByRole('button', { name: 'Log in' }).click();
      await a.page.getByRole('button', { name: `Play as ${anna.name}` }).click();
      await a.page.locator('.connection[data-state="polling"]').waitFor();
      await okCmd(bert, `whisper ${anna.name} polled, not pushed`);
      const line = logLine(a, 'polled, not pushed');
      await line.waitFor();
      expect(await line.locator('.speaker').textContent()).to.equal(`${bert.name} whispers to you:`);
      expectClean();
    });

    it('a new account sees each world with its access, creates a character and plays it, also after a reload', async () => {
      const { page } = await play();
      const username = `nova${Date.now().toString(36)}`;
      await page.getByRole('tab', { name: 'New account' }).click();
      await page.getByRole('textbox', { name: 'Username' }).fill(username);
      await page.getByRole('textbox', { name: 'Password', exact: true }).fill(GOOD_PASSWORD);
      await page.getByRole('textbox', { name: 'Repeat the password' }).fill(GOOD_PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();

      const emberwick = page.locator('button.world', { hasText: 'Emberwick' });
      const hollow = page.locator('button.world', { hasText: 'Hollow Spire' });
      await page.getByRole('button', { name: 'Create a character' }).waitFor();
      expect(await emberwick.locator('.badge').allTextContents()).to.deep.equal(['Open world', 'You can enter', '0/3 characters']);
      expect(await hollow.locator('.badge').allTextContents()).to.include.members(['Invite only', 'Invitation required']);
      await hollow.click();
      await page.getByText('This world is open by invitation').waitFor();
      await emberwick.click();
      await page.getByRole('button', { name: 'Create a character' }).click();
      const created = page.getByRole('status').filter({ hasText: /Character '.+' created/ });
      await created.waitFor();
      expect(await emberwick.locator('.badge').last().textContent()).to.equal('1/3 characters');
      // Keyboard users land on the new character's Play button.
      await page.keyboard.press('Enter');
      await page.locator('.connection[data-state="live"]').waitFor();
      expect(await page.getByRole('button', { name: 'Admin' }).count(), 'players never see the staff view').to.equal(0);
      // The tab keeps its session: a reload goes straight back into the game.
      await page.reload();
      await page.locator('.connection[data-state="live"]').waitFor();
      await page.locator('#room-name', { hasText: "Lockkeeper's Square" }).waitFor();
      expectClean();
    });

    it('staff: an admin kicks a player, whose page shows its session ended; grants and bans', async () => {
      const warden = `warden${Date.now().toString(36)}`;
      await createUser(server, warden, 'admin');
      const mara = await newCharacter(server, 'Mara');
      const [player, admin] = [await play(), await play()];
      await enter(player, mara.username, mara.name);
      expect(await player.page.getByRole('button', { name: 'Admin' }).count()).to.equal(0);

      await admin.page.getByRole('textbox', { name: 'Username' }).fill(warden);
      await admin.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
      await admin.page.getByRole('button', { name: 'Log in' }).click();
      await admin.page.getByRole('button', { name: 'Admin' }).click();
      const dialog = admin.page.getByRole('dialog', { name: 'Administration' });
      const row = dialog.locator('tr', { has: admin.page.getByRole('rowheader', { name: mara.username, exact: true }) });
      expect(await row.locator('td').nth(1).textContent()).to.match(/^Playing \(emberwick\)$/);

      await dialog.getByRole('button', { name: new RegExp(`^Kick session \\d+ of ${mara.username}$`) }).click();
      await admin.page.getByRole('dialog', { name: `Kick ${mara.name} (${mara.username})?` }).getByRole('button', { name: 'Kick', exact: true }).click();
      await dialog.getByRole('status').filter({ hasText: 'Session disconnected' }).waitFor();
      await player.page.getByRole('heading', { name: 'Session ended' }).waitFor();
      await player.page.getByText('An administrator ended your session.').waitFor();

      await dialog.getByRole('combobox', { name: 'User' }).fill(mara.username);
      await dialog.getByRole('combobox', { name: 'World' }).selectOption('hollow_spire');
      await dialog.getByRole('button', { name: 'Grant access' }).click();
      await dialog.getByRole('status').filter({ hasText: `Granted ${mara.username} access to world 'hollow_spire'` }).waitFor();
      await dialog.getByRole('button', { name: `Ban ${mara.username}` }).click();
      await admin.page.getByRole('dialog', { name: `Ban ${mara.username}?` }).getByRole('button', { name: 'Ban', exact: true }).click();
      await dialog.getByRole('button', { name: `Unban ${mara.username}` }).waitFor();
      expect(await row.locator('td').nth(2).textContent()).to.equal('Banned');
      await dialog.getByRole('button', { name: `Unban ${mara.username}` }).click();
      await dialog.getByRole('button', { name: `Ban ${mara.username}` }).waitFor();
      await admin.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expectClean();
    });
  });
});
