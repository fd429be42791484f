/**
 * Moderation in the play client (web/admin.ts, web/game.ts) in headless Chromium against the
 * real server: a staff announcement in a player's log, and the staff view's open reports (with
 * resolve), mute with a duration and a reason (and unmute), a reason for bans and kicks, and
 * the audit log that records them.
 */
import { describe, it, before, after, beforeEach } from 'mocha';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, registerGuest, resetGame, uniqueName } from '../helpers/players.ts';
import { createUser, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { chromiumFor, enter, logLine, openPlay, typeCommand, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

describe(`play client: moderation (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let browser: Browser | undefined;
  const open: PlayPage[] = [];
  const play = async (): Promise<PlayPage> => {
    const page = await openPlay(browser!, server.url);
    page.context.setDefaultTimeout(10_000);
    open.push(page);
    return page;
  };
  /** No uncaught error, no CSP violation, no browser dialog on any page of the test. */
  const expectClean = () => {
    for (const { errors, dialogs } of open) {
      expect(errors, 'page errors').to.deep.equal([]);
      expect(dialogs, 'dialogs').to.deep.equal([]);
    }
  };
  const logIn = async ({ page }: PlayPage, username: string) => {
    await page.getByRole('textbox', { name: 'Username' }).fill(username);
    await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  };

  before(async function () {
    browser = await chromiumFor(this);
    server = await startTestServer();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await Promise.all(open.splice(0).map((page) => page.context.close()));
    await resetGame(server);
  });

  it('a staff announcement shows in the log as the staff\'s, its text as text', async () => {
    const name = uniqueName('Reader');
    const { username } = await registerGuest(server, name);
    const player = await play();
    await enter(player, username, name);
    const warden = `warden${Date.now().toString(36)}`;
    await createUser(server, warden, 'admin');
    const login = await server.post('/login', { username: warden, password: GOOD_PASSWORD });
    const res = await server.post('/admin/wall', { text: 'Restart in 5 minutes <b>sharp</b>' }, { Authorization: `Bearer ${login.body.session_id}` });
    expect(res.status, res.text).to.equal(200);
    const line = logLine(player, `[Staff announcement] ${warden}: Restart in 5 minutes <b>sharp</b>`);
    await line.waitFor();
    expect(await line.getAttribute('class')).to.contain('announcement');
    expectClean();
  });

  it('staff: open reports with resolve, mute for a while with a reason and unmute, a reason for a kick, and the audit log of it all', async () => {
    const warden = `warden${Date.now().toString(36)}`;
    await createUser(server, warden, 'admin');
    const reporter = await newPlayer(server, 'Witness');
    const name = uniqueName('Rowdy');
    const rowdy = { name, ...(await registerGuest(server, name)) };
    const player = await play();
    await enter(player, rowdy.username, rowdy.name);
    await typeCommand(player, 'say rude words');
    // Stored once the page shows it (its own chat comes back by the stream): the report's chat has it.
    await logLine(player, 'rude words').waitFor();
    await okCmd(reporter, `report ${rowdy.name} says rude words all day`);

    const staff = await play();
    await logIn(staff, warden);
    await staff.page.getByRole('button', { name: 'Admin' }).click();
    const dialog = staff.page.getByRole('dialog', { name: 'Administration' });
    await dialog.getByRole('heading', { name: 'Open reports (1)' }).waitFor();
    const report = dialog.locator('tr', { hasText: 'says rude words all day' });
    expect(await report.locator('td').nth(2).textContent()).to.equal(`${rowdy.name} (${rowdy.username})`);
    await report.getByText(/^Chat before/).click();
    await report.getByText(`${rowdy.name} says: rude words`).waitFor();

    // Mute for an hour, with a reason the player is told.
    await dialog.getByRole('button', { name: `Mute ${rowdy.username}` }).click();
    const ask = staff.page.getByRole('dialog', { name: `Mute ${rowdy.username}?` });
    await ask.getByRole('combobox', { name: 'For' }).selectOption({ label: '1 hour' });
    await ask.getByRole('textbox', { name: 'Reason' }).fill('Rude to everyone');
    await ask.getByRole('button', { name: 'Mute', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: `Muted ${rowdy.username} until` }).waitFor();
    const row = dialog.locator('tr', { has: staff.page.getByRole('rowheader', { name: rowdy.username, exact: true }) });
    await row.getByText(/^Muted until/).waitFor();
    await typeCommand(player, 'say can I still talk');
    await logLine(player, /^You are muted until .* UTC\. Reason: Rude to everyone$/).waitFor();

    // Resolve the report with a note.
    await report.getByRole('button', { name: /^Resolve report \d+$/ }).click();
    const resolve = staff.page.getByRole('dialog', { name: /^Resolve report \d+\?$/ });
    await resolve.getByRole('textbox', { name: 'What was done' }).fill('Muted for an hour');
    await resolve.getByRole('button', { name: 'Resolve', exact: true }).click();
    await dialog.getByRole('heading', { name: 'Open reports (0)' }).waitFor();
    await report.getByText(`Resolved by ${warden}: Muted for an hour`).waitFor();

    await dialog.getByRole('button', { name: `Unmute ${rowdy.username}` }).click();
    await dialog.getByRole('button', { name: `Mute ${rowdy.username}` }).waitFor();

    // A kick with a reason.
    await dialog.getByRole('button', { name: new RegExp(`^Kick session \\d+ of ${rowdy.username}$`) }).click();
    const kick = staff.page.getByRole('dialog', { name: `Kick ${rowdy.name} (${rowdy.username})?` });
    await kick.getByRole('textbox', { name: 'Reason' }).fill('Cool off');
    await kick.getByRole('button', { name: 'Kick', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: 'Session disconnected' }).waitFor();

    // The audit log, newest first.
    const audit = dialog.locator('section', { has: staff.page.getByRole('heading', { name: 'Audit log' }) });
    await audit.locator('tbody tr').filter({ hasText: 'kick' }).waitFor();
    const actions = await audit.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].slice(1, 5).map((td) => td.textContent)));
    expect(actions.slice(0, 4)).to.deep.equal([
      [`${warden} (admin)`, 'kick', rowdy.username, 'Cool off'],
      [`${warden} (admin)`, 'unmute', rowdy.username, '—'],
      [`${warden} (admin)`, 'resolve report', rowdy.username, 'Muted for an hour'],
      [`${warden} (admin)`, 'mute', rowdy.username, 'Rude to everyone'],
    ]);
    await staff.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expectClean();
  });
});
