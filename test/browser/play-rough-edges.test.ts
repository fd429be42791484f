/**
 * The play client's rough edges (issue 23), each seen in headless Chromium against the real
 * server, at phone and desktop size: the keyboard-open phone layout and a log that keeps its
 * newest line, the unread count and the optional sound, readable errors and the input's
 * limit, the log's lines (disconnection, the room on entering, each say once, scrollback
 * after the session ends), the lobby following world grants, the 24-hour note of new
 * accounts, and the staff view (confirmations, own row, roles, passwords, permanence, times).
 */
import { describe, it, before, after, beforeEach } from 'mocha';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName, type Player } from '../helpers/players.ts';
import { bearer, createUser, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';
import { chromiumFor, DESKTOP, enter, logLine, openPlay, typeCommand, type PlayPage } from './browser.ts';
import { COMMAND_MAX_LENGTH, utcDate } from '../../web/text.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const PHONE = { width: 390, height: 844 };
/** The same phone with its on-screen keyboard open. */
const PHONE_KEYBOARD = { width: 390, height: 400 };

/** Counts the beeps the page plays (web/attention.ts makes one oscillator per beep). */
const COUNT_BEEPS = `window.beeps = 0;
const createOscillator = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () { window.beeps++; return createOscillator.call(this); };`;

/** Lets the test say whether the page is hidden (a tab in the background), as the browser would. */
const CONTROL_VISIBILITY = `window.pageHidden = false;
Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => (window.pageHidden ? 'hidden' : 'visible') });
Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => window.pageHidden });`;

async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate(`window.pageHidden = ${hidden}; document.dispatchEvent(new Event('visibilitychange'));`);
}

/** Whether the log shows its newest line (page script: the tests compile without the DOM's types). */
const LOG_AT_NEWEST = `(() => { const log = document.querySelector('.log'); return log.scrollHeight - log.scrollTop - log.clientHeight < 2; })()`;
const logAtNewest = (page: Page) => page.evaluate(LOG_AT_NEWEST);
/**
 * Waits until a page expression is true. Polled from here: waitForFunction polls inside the page
 * with eval, which the play client's Content-Security-Policy (no 'unsafe-eval') refuses.
 */
const until = (page: Page, expression: string) =>
  eventually(async () => expect(await page.evaluate(expression), expression).to.equal(true), 10_000);
const titleIs = (page: Page, title: string) => until(page, `document.title === ${JSON.stringify(title)}`);

describe(`play client: rough edges (${DB_NAME})`, function () {
  this.timeout(90_000);
  let server: TestServer;
  let browser: Browser | undefined;
  const open: PlayPage[] = [];

  const play = async (options: { baseUrl?: string; viewport?: { width: number; height: number }; init?: string; timezoneId?: string } = {}): Promise<PlayPage> => {
    const page = await openPlay(browser!, options.baseUrl ?? server.url, options.viewport ?? DESKTOP, options.init, options.timezoneId);
    page.context.setDefaultTimeout(10_000);
    open.push(page);
    return page;
  };
  const newCharacter = async (target: TestServer, first: string) => {
    const name = uniqueName(first);
    return { name, ...(await registerGuest(target, name)) };
  };
  /** Another player in the same room, played through the API. */
  const neighbour = (target = server) => newPlayer(target, 'Bert', 'lockkeepers_square');
  /** No uncaught error, no CSP violation, no browser dialog on any page of the test. */
  const expectClean = () => {
    for (const { errors, dialogs } of open) {
      expect(errors, 'page errors').to.deep.equal([]);
      expect(dialogs, 'dialogs').to.deep.equal([]);
    }
  };
  const fillLog = async (speaker: Player, lines: number) => {
    for (let i = 1; i <= lines; i++) await okCmd(speaker, `say filler line ${i}`);
  };

  before(async function () {
    server = await startTestServer();
    browser = await chromiumFor(this);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await Promise.all(open.splice(0).map((page) => page.context.close()));
    await resetGame(server);
  });

  it('phone with the keyboard open: the log and the input take the height, the log keeps its newest line', async () => {
    const anna = await newCharacter(server, 'Anna');
    const a = await play({ viewport: PHONE });
    await enter(a, anna.username, anna.name);
    // The room is written into the log on entering, before any command.
    await a.page.locator('.log .room-entry', { hasText: "Lockkeeper's Square" }).waitFor();
    const bert = await neighbour();
    await fillLog(bert, 30);
    await logLine(a, 'filler line 30').waitFor();
    expect(await logAtNewest(a.page)).to.equal(true);
    // The room, the log and the command line share the screen; the page itself does not scroll.
    const boxes = () => Promise.all(['.surroundings', '.log', '#command'].map((selector) => a.page.locator(selector).boundingBox()));
    const [, , tallInput] = await boxes();
    expect(tallInput!.y + tallInput!.height).to.be.at.most(PHONE.height);

    await a.page.locator('#command').focus();
    await a.page.setViewportSize(PHONE_KEYBOARD);
    await a.page.locator('html.short-screen').waitFor({ state: 'attached' });
    const [room, log, input] = await boxes();
    expect(log!.height, 'the log is taller than the room card').to.be.greaterThan(room!.height);
    expect(input!.y + input!.height, 'the command line is above the keyboard').to.be.at.most(PHONE_KEYBOARD.height);
    expect(room!.y + room!.height).to.be.at.most(log!.y);
    await until(a.page, LOG_AT_NEWEST);
    await a.page.screenshot({ path: '/tmp/play-phone-keyboard.png' });

    await okCmd(bert, 'say with the keyboard open');
    await logLine(a, 'with the keyboard open').waitFor();
    expect(await logAtNewest(a.page)).to.equal(true);
    // Keyboard closed: the page is laid out as before.
    await a.page.setViewportSize(PHONE);
    await a.page.locator('html:not(.short-screen)').waitFor({ state: 'attached' });
    expect(await a.page.locator('.side').isVisible()).to.equal(true);
    expectClean();
  });

  it('the stream drops: "Disconnected" in the log, the banner, the log still at its newest line; back again', async () => {
    const first = await startTestServer();
    let second: TestServer | undefined;
    try {
      const anna = await newCharacter(first, 'Anna');
      const a = await play({ baseUrl: first.url, viewport: PHONE_KEYBOARD });
      await enter(a, anna.username, anna.name);
      await fillLog(await neighbour(first), 25);
      await logLine(a, 'filler line 25').waitFor();

      await a.page.route('**/status/**', (route) => route.abort());
      await first.stop();
      await a.page.getByRole('alert').filter({ hasText: 'The server is away' }).waitFor();
      await logLine(a, 'Disconnected. Reconnecting…').waitFor();
      await until(a.page, LOG_AT_NEWEST);
      expect(await logLine(a, 'Disconnected').count(), 'said once').to.equal(1);

      second = await startTestServer({ shareDatabaseWith: first, env: { MUD_PORT: String(first.port) } });
      await a.page.unroute('**/status/**');
      await logLine(a, 'Connected again.').waitFor();
      await a.page.locator('.connection[data-state="live"]').waitFor();
      expect(await logAtNewest(a.page)).to.equal(true);
      expectClean();
    } finally {
      await second?.close();
      await first.close();
    }
  });

  it('each say shows once; a failing one shows what was typed and why', async () => {
    const anna = await newCharacter(server, 'Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    await typeCommand(a, 'say only once, please');
    await a.page.locator('.log .chat', { hasText: 'only once, please' }).waitFor();
    await typeCommand(a, 'look');
    await a.page.locator('.log .echo', { hasText: 'look' }).waitFor();
    expect(await logLine(a, 'only once, please').count()).to.equal(1);
    expect(await a.page.locator('.log .chat .speaker').last().textContent()).to.equal('You say:');
    await typeCommand(a, '/SAY   and with a slash');
    await a.page.locator('.log .chat', { hasText: 'and with a slash' }).waitFor();
    await typeCommand(a, 'look');
    await a.page.locator('.log .echo', { hasText: 'look' }).nth(1).waitFor();
    expect(await logLine(a, 'and with a slash').count()).to.equal(1);
    await typeCommand(a, 'say');
    await logLine(a, 'Say what?').waitFor();
    expect(await a.page.locator('.log .echo').last().textContent()).to.equal('say');
    expectClean();
  });

  it('readable errors: the input has the contract limit; past it the server says which field and rule', async () => {
    const anna = await newCharacter(server, 'Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    expect(await a.page.locator('#command').getAttribute('maxlength')).to.equal(String(COMMAND_MAX_LENGTH));
    // A page without the limit (an older copy) hears the server's plain words.
    await a.page.locator('#command').evaluate((input) => input.removeAttribute('maxlength'));
    await typeCommand(a, `say ${'x'.repeat(COMMAND_MAX_LENGTH)}`);
    await logLine(a, `Invalid request: command: must be at most ${COMMAND_MAX_LENGTH} characters`).waitFor();
    expect(await a.page.locator('.log').textContent()).not.to.match(/request\/|must NOT/);
    expectClean();
  });

  it('hidden tab: unread count in the title; the sound (off by default) beeps for whispers and mentions only', async () => {
    const anna = await newCharacter(server, 'Anna');
    const a = await play({ init: `${COUNT_BEEPS}\n${CONTROL_VISIBILITY}` });
    await enter(a, anna.username, anna.name);
    const bert = await neighbour();
    const title = await a.page.title();
    const sound = a.page.getByRole('checkbox', { name: 'Sound' });
    expect(await sound.isChecked(), 'off by default').to.equal(false);
    await okCmd(bert, `whisper ${anna.name} no sound yet`);
    await logLine(a, 'no sound yet').waitFor();
    expect(await a.page.evaluate('window.beeps')).to.equal(0);
    await sound.check();
    const afterCheck = Number(await a.page.evaluate('window.beeps'));

    await setHidden(a.page, true);
    await okCmd(bert, 'say the weather turns');
    await titleIs(a.page, `(1) ${title}`);
    await okCmd(bert, `whisper ${anna.name} psst`);
    await titleIs(a.page, `(2) ${title}`);
    await okCmd(bert, `say ${anna.name.split(' ')[0]}, look here`);
    await titleIs(a.page, `(3) ${title}`);
    expect(Number(await a.page.evaluate('window.beeps')) - afterCheck, 'a beep for the whisper and the mention').to.equal(2);
    // The player's own words are not news.
    await a.page.locator('#command').fill('say my own words');
    await a.page.locator('#command').press('Enter');
    await logLine(a, 'my own words').waitFor();
    expect(await a.page.title()).to.equal(`(3) ${title}`);

    await setHidden(a.page, false);
    expect(await a.page.title()).to.equal(title);
    await a.page.reload();
    await a.page.locator('.connection[data-state="live"]').waitFor();
    expect(await a.page.getByRole('checkbox', { name: 'Sound' }).isChecked(), 'the setting is kept').to.equal(true);
    expectClean();
  });

  it('the session ends (kick): the log stays to be read, the command line goes', async () => {
    const anna = await newCharacter(server, 'Anna');
    const a = await play({ viewport: PHONE });
    await enter(a, anna.username, anna.name);
    const bert = await neighbour();
    await okCmd(bert, 'say remember this line');
    await logLine(a, 'remember this line').waitFor();
    const kicker = await adminSession(server);
    const sessions = await server.get('/admin/database/sessions', bearer(kicker));
    const target = sessions.body.sessions.find((row: { username: string }) => row.username === anna.username);
    expect((await server.post('/admin/session/kick', { target_session_id: String(target.id) }, bearer(kicker))).body.success).to.equal(true);

    await a.page.getByRole('heading', { name: 'Session ended' }).waitFor();
    await a.page.getByText('An administrator ended your session.').waitFor();
    expect(await logLine(a, 'remember this line').count()).to.equal(1);
    expect(await a.page.locator('#command').count()).to.equal(0);
    await a.page.getByRole('button', { name: 'Log in again' }).click();
    await a.page.getByRole('button', { name: 'Log in' }).waitFor();
    expectClean();
  });

  it('the lobby shows a world access granted meanwhile, without logging in again; new accounts hear they last 24 hours', async () => {
    const { page } = await play({ viewport: PHONE });
    await page.getByRole('tab', { name: 'New account' }).click();
    await page.getByText('New accounts last 24 hours, unless an administrator makes yours permanent.').waitFor();
    await page.getByRole('tab', { name: 'Log in' }).click();

    const anna = await newCharacter(server, 'Anna');
    await page.getByRole('textbox', { name: 'Username' }).fill(anna.username);
    await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    const hollow = page.locator('button.world', { hasText: 'Hollow Spire' });
    await hollow.locator('.badge', { hasText: 'Invitation required' }).waitFor();
    await hollow.click();
    await page.getByText('This world is open by invitation').waitFor();

    const admin = await adminSession(server);
    const granted = await server.post('/admin/user/world-access', { target_username: anna.username, world_id: 'hollow_spire', can_access: true }, bearer(admin));
    expect(granted.status, granted.text).to.equal(200);
    // The player comes back to the tab.
    await page.evaluate(`window.dispatchEvent(new Event('focus'))`);
    await hollow.locator('.badge', { hasText: 'You can enter' }).waitFor();
    await page.getByRole('button', { name: 'Create a character' }).waitFor();
    expectClean();
  });

  it('staff view: asks before ban and kick, no ban on the own row, make permanent, local times', async () => {
    const warden = `warden${Date.now().toString(36)}`;
    await createUser(server, warden, 'admin');
    const mara = await newCharacter(server, 'Mara');
    const staff = await play({ timezoneId: 'Asia/Tokyo' });
    const { page } = staff;
    await page.getByRole('textbox', { name: 'Username' }).fill(warden);
    await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Admin' }).click();
    const dialog = page.getByRole('dialog', { name: 'Administration' });
    const row = (username: string) => dialog.locator('tr', { has: page.getByRole('rowheader', { name: username, exact: true }) });
    await row(mara.username).waitFor();
    expect(await row(warden).getByRole('button').count(), 'nothing to do on the own row').to.equal(0);
    expect(await row(mara.username).getByRole('combobox').count(), 'admins do not change roles').to.equal(0);

    // Times in the viewer's zone (Tokyo, UTC+9), from the listing's UTC stamps.
    const listed = (await server.get('/admin/database/players', bearer(await adminSession(server)))).body.players.find((p: { username: string }) => p.username === mara.username);
    const tokyo = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Tokyo', hour: '2-digit', minute: '2-digit' }).format(utcDate(listed.guest_expires_at));
    expect(await row(mara.username).locator('td').nth(2).textContent()).to.contain(tokyo);

    // Ban: asked first; Cancel does nothing.
    await row(mara.username).getByRole('button', { name: `Ban ${mara.username}` }).click();
    const ask = page.getByRole('dialog', { name: `Ban ${mara.username}?` });
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(Boolean((await server.db('users').where({ username: mara.username }).first()).is_active)).to.equal(true);
    await row(mara.username).getByRole('button', { name: `Ban ${mara.username}` }).click();
    await ask.getByRole('button', { name: 'Ban', exact: true }).click();
    await dialog.getByRole('button', { name: `Unban ${mara.username}` }).waitFor();
    await dialog.getByRole('button', { name: `Unban ${mara.username}` }).click();
    await dialog.getByRole('button', { name: `Ban ${mara.username}` }).waitFor();

    // Make permanent.
    await row(mara.username).getByRole('button', { name: `Make permanent ${mara.username}` }).click();
    await dialog.getByRole('status').filter({ hasText: `${mara.username}'s account is now permanent` }).waitFor();
    // The status comes first, then the table is read again.
    await row(mara.username).locator('td', { hasText: /^Permanent$/ }).waitFor();

    // Kick: asked first.
    const again = await server.post('/login', { username: mara.username, password: GOOD_PASSWORD });
    expect(again.status).to.equal(200);
    await dialog.getByRole('button', { name: 'Refresh' }).click();
    const kick = dialog.getByRole('button', { name: new RegExp(`^Kick session \\d+ of ${mara.username}$`) });
    await kick.waitFor();
    // Which of a player's sessions is live: the Connected column.
    const sessionRow = dialog.locator('tr', { has: page.getByRole('button', { name: new RegExp(`^Kick session \\d+ of ${mara.username}$`) }) });
    expect(await sessionRow.locator('td').nth(4).textContent()).to.match(/^(Yes \((requests|\d+ streams?)\)|No \((link-dead|away)\)|No)$/);
    await kick.click();
    await page.getByRole('dialog', { name: `Kick ${mara.username}?` }).getByRole('button', { name: 'Kick', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: 'Session disconnected' }).waitFor();
    expect((await server.get('/characters', bearer(again.body.session_id))).status).to.equal(401);
    await page.screenshot({ path: '/tmp/play-admin.png' });
    expectClean();
  });

  it('staff view as superuser: role change and password reset', async () => {
    const root = `root${Date.now().toString(36)}`;
    await createUser(server, root, 'superuser');
    await createUser(server, 'rolling', 'player');
    const { page } = await play();
    await page.getByRole('textbox', { name: 'Username' }).fill(root);
    await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Admin' }).click();
    const dialog = page.getByRole('dialog', { name: 'Administration' });
    await dialog.getByRole('combobox', { name: 'Role of rolling' }).selectOption('worldbuilder');
    await page.getByRole('dialog', { name: 'Make rolling a worldbuilder?' }).getByRole('button', { name: 'Change role' }).click();
    await dialog.getByRole('status').filter({ hasText: "Successfully changed rolling's role to worldbuilder" }).waitFor();
    expect((await server.db('users').where({ username: 'rolling' }).first()).role).to.equal('worldbuilder');

    await dialog.getByRole('button', { name: 'Reset password of rolling' }).click();
    const reset = page.getByRole('dialog', { name: 'New password for rolling' });
    await reset.getByLabel('New password').fill('Brass-Otter-Lamp-7');
    await reset.getByRole('button', { name: 'Set password' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Successfully changed password for rolling' }).waitFor();
    expect((await server.post('/login', { username: 'rolling', password: 'Brass-Otter-Lamp-7' })).status).to.equal(200);
    expectClean();
  });
});

let adminCount = 0;
/** A fresh admin's session, through the API. */
async function adminSession(server: TestServer): Promise<string> {
  const username = `staff${++adminCount}${Date.now().toString(36)}`;
  await createUser(server, username, 'admin');
  const res = await server.post('/login', { username, password: GOOD_PASSWORD });
  return res.body.session_id;
}
