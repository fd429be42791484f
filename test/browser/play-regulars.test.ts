/**
 * The play client's rough edges of issue 35, each seen in headless Chromium against the real
 * server: presence that is live (a closed tab is link-dead in the room, the Online list and the
 * staff view), names typed in part and completed so, the room changing around the player, the
 * Build panel (a stale save kept, history and revert, an exit to an existing room, an item's
 * description, removing an exit asked first and warned of), the keyboard (Enter on an exit,
 * Tab with nothing to complete), the staff view (fits its dialog, no Kick on one's own session,
 * one word for a ban), the small ones (times on movement lines, tells apart from OOC, Drop,
 * `who` naming the viewer, one password rule a line), and axe-core on every screen at zero
 * violations.
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName } from '../helpers/players.ts';
import { bearer, createUser, GOOD_PASSWORD, login } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';
import { accessibilityViolations, chromiumFor, DESKTOP, enter, logLine, openPlay, PHONE, typeCommand, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const SQUARE = '/api/worlds/emberwick/rooms/lockkeepers_square';

describe(`play client for regulars (${DB_NAME})`, function () {
  this.timeout(90_000);
  let server: TestServer;
  let browser: Browser;
  const open: PlayPage[] = [];

  const play = async (viewport = DESKTOP): Promise<PlayPage> => {
    const page = await openPlay(browser, server.url, viewport);
    page.context.setDefaultTimeout(10_000);
    open.push(page);
    return page;
  };
  const guest = async (first: string) => {
    const name = uniqueName(first);
    return { name, ...(await registerGuest(server, name)) };
  };
  /** An account of `role` with a character in Emberwick, playing in a page. */
  const staffPlaying = async (role: 'admin' | 'worldbuilder' | 'superuser', viewport = DESKTOP) => {
    const username = `${role.slice(0, 5)}${Date.now().toString(36)}`;
    await createUser(server, username, role);
    const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(await login(server, username)));
    expect(created.status, created.text).to.equal(200);
    const page = await play(viewport);
    await enter(page, username, created.body.character_name);
    return { page, username, name: created.body.character_name as string };
  };
  const expectClean = () => {
    for (const { errors, dialogs } of open) {
      expect(errors, 'page errors').to.deep.equal([]);
      expect(dialogs, 'browser dialogs').to.deep.equal([]);
    }
  };

  before(async function () {
    server = await startTestServer();
    browser = await chromiumFor(this);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((page) => page.context.close()));
    await resetGame(server);
  });

  it('axe-core finds nothing on any screen: login, new account, guest, lobby, game at desktop and phone size, ask, Admin, Build, session ended', async () => {
    const a = await play();
    expect(await accessibilityViolations(a), 'login').to.deep.equal([]);
    await a.page.getByRole('tab', { name: 'New account' }).click();
    expect(await accessibilityViolations(a), 'new account').to.deep.equal([]);
    await a.page.getByRole('tab', { name: 'Play as guest' }).click();
    expect(await accessibilityViolations(a), 'guest').to.deep.equal([]);

    const { page: staff, username: root } = await staffPlaying('superuser');
    await okCmd(await newPlayer(server, 'Bert'), 'say Hello there');
    await logLine(staff, 'Hello there').waitFor();
    expect(await accessibilityViolations(staff), 'game').to.deep.equal([]);
    await staff.page.getByRole('button', { name: 'Admin' }).click();
    const admin = staff.page.getByRole('dialog', { name: 'Administration' });
    await admin.locator('table').first().waitFor();
    expect(await accessibilityViolations(staff, 'dialog.admin'), 'Admin').to.deep.equal([]);
    await admin.getByRole('button', { name: 'Close' }).click();
    await staff.page.getByRole('button', { name: 'Build' }).click();
    const build = staff.page.getByRole('dialog', { name: 'Build' });
    await build.getByText(/lockkeepers_square · zone canal_quarter/).waitFor();
    expect(await accessibilityViolations(staff, 'dialog.build'), 'Build').to.deep.equal([]);
    await build.getByRole('button', { name: 'Remove the exit north' }).click();
    const asked = staff.page.getByRole('dialog', { name: 'Remove the exit north?' });
    await asked.waitFor();
    expect(await accessibilityViolations(staff, 'dialog.ask'), 'ask').to.deep.equal([]);
    await asked.getByRole('button', { name: 'Cancel' }).click();
    await build.getByRole('button', { name: 'Close' }).click();

    const phoneGuest = await guest('Pia');
    const phone = await play(PHONE);
    await enter(phone, phoneGuest.username, phoneGuest.name);
    expect(await accessibilityViolations(phone), 'game on a phone').to.deep.equal([]);
    await phone.page.getByRole('button', { name: 'Characters' }).click();
    await phone.page.getByRole('button', { name: `Play as ${phoneGuest.name}` }).waitFor();
    expect(await accessibilityViolations(phone), 'lobby').to.deep.equal([]);
    await phone.page.getByRole('button', { name: `Play as ${phoneGuest.name}` }).click();
    await phone.page.locator('.connection[data-state="live"]').waitFor();
    const admin2 = await login(server, root);
    const row = (await server.get(`/admin/database/sessions?session_id=${admin2}`)).body.sessions.find((s: { username: string }) => s.username === phoneGuest.username);
    await server.post('/admin/session/kick', { session_id: admin2, target_session_id: String(row.id) });
    await phone.page.getByRole('button', { name: 'Log in again' }).waitFor();
    expect(await accessibilityViolations(phone), 'session ended').to.deep.equal([]);
    expectClean();
  });

  it('presence is live: a closed tab is link-dead in the room, the Online list and the staff view, and back when it plays again', async () => {
    const { page: watcher } = await staffPlaying('admin');
    const bert = await guest('Bert');
    const tab = await play();
    await enter(tab, bert.username, bert.name);
    const inRoom = watcher.page.locator('.room .things li', { hasText: bert.name });
    const onlineRow = watcher.page.locator('.side .names li', { hasText: bert.name });
    await inRoom.waitFor();
    expect(await inRoom.textContent()).not.to.contain('link-dead');
    await tab.context.close();
    await inRoom.filter({ hasText: '(link-dead)' }).waitFor();
    await onlineRow.and(watcher.page.locator('li.linkdead')).waitFor();
    await watcher.page.getByRole('button', { name: 'Admin' }).click();
    const admin = watcher.page.getByRole('dialog', { name: 'Administration' });
    const userRow = admin.locator('tr', { has: watcher.page.getByRole('rowheader', { name: bert.username, exact: true }) });
    await userRow.filter({ hasText: 'Link-dead (emberwick)' }).waitFor();
    expect(await userRow.textContent()).not.to.contain('Playing');

    const back = await play();
    await enter(back, bert.username, bert.name);
    await userRow.filter({ hasText: 'Playing (emberwick)' }).waitFor();
    await admin.getByRole('button', { name: 'Close' }).click();
    await eventually(async () => expect(await inRoom.textContent()).not.to.contain('link-dead'), 10_000);
    expect(await watcher.page.locator('.side .names li.linkdead').count()).to.equal(0);
    expectClean();
  });

  it('names: a word or start of an item is enough, and Tab completes it after exa and look; Tab with nothing to complete stays', async () => {
    const anna = await guest('Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    const command = a.page.locator('#command');
    for (const verb of ['exa', 'look', 'get']) {
      await command.fill(`${verb} pen`);
      await command.press('Tab');
      expect(await command.inputValue(), verb).to.equal(`${verb} Canal Penny`);
    }
    await command.fill('exa zzz');
    await command.press('Tab');
    expect(await a.page.evaluate('document.activeElement && document.activeElement.id')).to.equal('command');
    await a.page.locator('#command-hint', { hasText: 'Nothing to complete.' }).waitFor();
    await typeCommand(a, 'examine penny');
    await logLine(a, '[Canal Penny]').waitFor();
    await typeCommand(a, 'get pen');
    await logLine(a, 'You picked up the Canal Penny.').waitFor();
    // The inventory offers Drop.
    await a.page.getByRole('button', { name: 'Drop Canal Penny' }).click();
    await logLine(a, 'You dropped the Canal Penny.').waitFor();
    expectClean();
  });

  it('keyboard: Enter on an exit button moves and leaves the focus on the exits of the new room', async () => {
    const anna = await guest('Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    const north = a.page.getByRole('button', { name: 'North to Ropewalk Bridge' });
    await north.focus();
    await north.press('Enter');
    await a.page.locator('#room-name', { hasText: 'Ropewalk Bridge' }).waitFor();
    await eventually(async () => expect(await a.page.evaluate('document.activeElement && document.activeElement.className')).to.equal('exit'), 5000);
    await a.page.keyboard.press('Enter');
    await a.page.locator('#room-name', { hasText: /Lockkeeper's Square|The Foundry Gate|Foundry/ }).waitFor();
    expectClean();
  });

  it('builders change the room the player stands in: the log says so, with the room as it is now', async () => {
    const anna = await guest('Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    const mason = `mason${Date.now().toString(36)}`;
    await createUser(server, mason, 'worldbuilder');
    const token = await login(server, mason);
    const before = await server.get(SQUARE, bearer(token));
    const changed = await server.request('PATCH', SQUARE, { version: before.body.version, description: 'Fresh tar gleams on the lock gates.' }, bearer(token));
    expect(changed.status, changed.text).to.equal(200);
    try {
      await logLine(a, 'The room changes around you.').waitFor();
      await a.page.locator('.log .room-entry', { hasText: 'Fresh tar gleams on the lock gates.' }).waitFor();
    } finally {
      await server.request('POST', `${SQUARE}/revert`, { version: changed.body.version }, bearer(token));
    }
    expectClean();
  });

  it('the Build panel keeps a stale edit and saves over it, shows history and reverts, links an existing room, describes items, asks before removing an exit and warns of unreachable rooms', async () => {
    const { page: builder, username } = await staffPlaying('worldbuilder');
    const token = await login(server, username);
    await builder.page.getByRole('button', { name: 'Build' }).click();
    const dialog = builder.page.getByRole('dialog', { name: 'Build' });
    await dialog.getByText(/lockkeepers_square · zone canal_quarter · version \d+/).waitFor();
    const version = (await server.get(SQUARE, bearer(token))).body.version as number;

    // Someone saves meanwhile: the builder's typing stays, the panel says what changed, and saves over it.
    await dialog.getByRole('textbox', { name: 'Room description' }).fill('My careful new description.');
    const theirs = await server.request('PATCH', SQUARE, { version, name: 'Their Square' }, bearer(token));
    expect(theirs.status, theirs.text).to.equal(200);
    await dialog.getByRole('button', { name: 'Save room' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'the name is now "Their Square"' }).waitFor();
    expect(await dialog.getByRole('textbox', { name: 'Room description' }).inputValue()).to.equal('My careful new description.');
    await dialog.getByRole('button', { name: 'Save mine over it' }).click();
    await dialog.getByText('Room saved.').waitFor();
    expect((await server.get(SQUARE, bearer(token))).body.description).to.equal('My careful new description.');

    // History, and back to the package's room.
    await dialog.getByRole('button', { name: 'Show changes' }).click();
    await dialog.locator('.history li', { hasText: 'room.update' }).first().waitFor();
    expect(await dialog.locator('.history li').count()).to.be.at.least(2);
    await dialog.getByRole('button', { name: "Revert to the package's room" }).click();
    await builder.page.getByRole('dialog', { name: /^Revert / }).getByRole('button', { name: 'Revert' }).click();
    await dialog.getByText('The room is as its package has it again.').waitFor();
    expect((await server.get(SQUARE, bearer(token))).body.name).to.equal("Lockkeeper's Square");

    // An exit to a room that exists already, both ways.
    await dialog.getByRole('combobox', { name: 'Way out' }).selectOption('down');
    await dialog.getByRole('combobox', { name: 'To the room' }).selectOption('pattern_loft');
    await dialog.getByRole('button', { name: 'Add exit' }).click();
    await dialog.getByText(/An exit down leads to .*\(up leads back\)\./).waitFor();
    expect((await server.get(SQUARE, bearer(token))).body.exits.down).to.equal('pattern_loft');

    // An item's description.
    await dialog.getByRole('button', { name: 'Describe Canal Penny' }).click();
    const describe = builder.page.getByRole('dialog', { name: 'Describe Canal Penny' });
    await describe.getByRole('textbox', { name: 'Description' }).fill('A penny worn smooth by a thousand tolls.');
    await describe.getByRole('button', { name: 'Save description' }).click();
    await dialog.getByText('Canal Penny is described anew.').waitFor();
    await eventually(async () => expect(await okCmd(await newPlayer(server, 'Eve'), 'examine penny')).to.equal('[Canal Penny]\nA penny worn smooth by a thousand tolls.'), 5000);

    // Removing an exit asks first (the way back goes too), and says which rooms no walk reaches then.
    await dialog.getByRole('button', { name: 'Remove the exit east' }).click();
    const asked = builder.page.getByRole('dialog', { name: 'Remove the exit east?' });
    await asked.getByText(/the way back \(west from chandlers_row\)/).waitFor();
    await asked.getByRole('button', { name: 'Cancel' }).click();
    expect((await server.get(SQUARE, bearer(token))).body.exits.east).to.equal('chandlers_row');
    await dialog.getByRole('button', { name: 'Remove the exit east' }).click();
    await builder.page.getByRole('dialog', { name: 'Remove the exit east?' }).getByRole('button', { name: 'Remove exit' }).click();
    await dialog.getByText(/The exit east is gone\. Warning: no walk from the world's spawn reaches .*chandlers_row/).waitFor();
    await server.request('POST', `${SQUARE}/revert`, { version: (await server.get(SQUARE, bearer(token))).body.version }, bearer(token));
    await server.request('POST', '/api/worlds/emberwick/rooms/chandlers_row/revert', { version: (await server.get('/api/worlds/emberwick/rooms/chandlers_row', bearer(token))).body.version }, bearer(token));
    await server.request('POST', '/api/worlds/emberwick/rooms/pattern_loft/revert', { version: (await server.get('/api/worlds/emberwick/rooms/pattern_loft', bearer(token))).body.version }, bearer(token));
    expectClean();
  });

  it('the staff view fits its dialog at 1920 px, offers no Kick on its own session; a banned player reads one word for it', async () => {
    const username = `root${Date.now().toString(36)}`;
    await createUser(server, username, 'superuser');
    const wide = await openPlay(browser, server.url, { width: 1920, height: 1080 });
    wide.context.setDefaultTimeout(10_000);
    open.push(wide);
    await wide.page.getByRole('textbox', { name: 'Username' }).fill(username);
    await wide.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await wide.page.getByRole('button', { name: 'Log in' }).click();
    const mara = await guest('Mara');
    await login(server, mara.username);
    await wide.page.getByRole('button', { name: 'Admin' }).click();
    const admin = wide.page.getByRole('dialog', { name: 'Administration' });
    await admin.getByRole('button', { name: `Reset password of ${mara.username}` }).waitFor();
    const fits = await wide.page.evaluate(`[...document.querySelectorAll('dialog.admin .table-wrap')].every((w) => w.scrollWidth <= w.clientWidth)`);
    expect(fits, 'every table fits its dialog').to.equal(true);
    const box = await admin.getByRole('button', { name: `Reset password of ${mara.username}` }).boundingBox();
    const dialogBox = await admin.boundingBox();
    expect(box!.x + box!.width).to.be.at.most(dialogBox!.x + dialogBox!.width);
    const mine = admin.locator('tr', { has: wide.page.getByRole('cell', { name: username, exact: true }) });
    await mine.first().waitFor();
    for (const row of await mine.all()) expect(await row.getByRole('button', { name: /^Kick/ }).count(), 'no Kick on the own session').to.equal(0);
    await admin.getByRole('button', { name: new RegExp(`^Kick session \\d+ of ${mara.username}$`) }).waitFor();

    // Banned while playing: the end of the session and the next login say it alike.
    const player = await play();
    await enter(player, mara.username, mara.name);
    await admin.getByRole('button', { name: `Ban ${mara.username}` }).click();
    await wide.page.getByRole('dialog', { name: `Ban ${mara.username}?` }).getByRole('button', { name: 'Ban', exact: true }).click();
    await player.page.getByText('Your account has been banned: it is deactivated, and cannot log in until staff unban it.').waitFor();
    await player.page.getByRole('button', { name: 'Log in again' }).click();
    await player.page.getByRole('textbox', { name: 'Username' }).fill(mara.username);
    await player.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await player.page.getByRole('button', { name: 'Log in' }).click();
    await player.page.getByText('Account is deactivated: it is banned, and cannot log in until staff unban it.').waitFor();
    expectClean();
  });

  it('small ones: times on movement lines, tells unlike OOC, who names the viewer, one password rule a line with its full stop', async () => {
    const anna = await guest('Anna');
    const a = await play();
    await enter(a, anna.username, anna.name);
    const bert = await newPlayer(server, 'Bert', 'ropewalk_bridge');
    await okCmd(bert, 'south');
    const arrival = logLine(a, `${bert.name} arrives from the north.`);
    await arrival.waitFor();
    expect(await arrival.locator('time').count(), 'the arrival has its time').to.equal(1);
    await okCmd(bert, `tell ${anna.name} psst`);
    await okCmd(bert, 'ooc brb');
    const tell = logLine(a, 'psst');
    const ooc = logLine(a, 'brb');
    await ooc.waitFor();
    // How a line looks (page script: the tests compile without the DOM's types).
    const look = (text: string) =>
      a.page.evaluate(
        `(() => { const li = [...document.querySelectorAll('.log li')].find((l) => l.textContent.includes(${JSON.stringify(text)})); return getComputedStyle(li).borderLeftColor + ' ' + getComputedStyle(li.querySelector('.speaker')).color; })()`,
      );
    await tell.waitFor();
    expect(await look('psst')).not.to.equal(await look('brb'));
    await typeCommand(a, 'who');
    await logLine(a, `(and you, ${anna.name})`).waitFor();

    const b = await play();
    await b.page.getByRole('tab', { name: 'Play as guest' }).click();
    await b.page.getByRole('textbox', { name: 'Character name' }).fill(uniqueName('Gwen'));
    await b.page.getByRole('textbox', { name: 'Password', exact: true }).fill('abcd1');
    await b.page.getByRole('textbox', { name: 'Repeat the password' }).fill('abcd1');
    await b.page.getByRole('button', { name: 'Play as guest' }).click();
    const error = b.page.locator('.form-error:visible');
    await error.waitFor();
    const rules = (await error.innerText()).split('\n');
    expect(rules.length, (await error.innerText())).to.be.at.least(2);
    for (const rule of rules) expect(rule).to.match(/\.$/);
    expectClean();
  });
});
