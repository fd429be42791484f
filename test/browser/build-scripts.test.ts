/**
 * Lines no character spoke, and scripts the server stopped, in the play client in headless
 * Chromium against the real server. An NPC named like the player reads as an NPC's words (its
 * badge, "Dielun Bridgehall says", not "You say"), a room's echo carries the room's badge; the
 * Build panel shows a script suspended after its faults in a row (an NPC's and the room's),
 * names every hook in its hint, and a save runs the script again. axe-core finds nothing in the
 * log nor in the panel.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, okCmd, registerGuest, wroteBehindServer } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';
import { accessibilityViolations, chromiumFor, enter, logLine, openPlay, typeCommand, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';
const ROOM = 'ropewalk_bridge';
const NAME = 'Dielun Bridgehall';
const CONFESSION = ['function onSay(actor, text) {', '  if (!/penny/i.test(text)) return;', '  self.say("It was me who took the penny");', '  self.emote("grins.");', '}'].join('\n');
const GRUMBLER = 'function onSay() { throw new Error("x"); }';
const ROOM_SCRIPT = [
  'function onCommand(actor, verb) {',
  '  if (verb !== "ring") return false;',
  '  room.echo("Dielun Bridgehall took the penny.");',
  '  return true;',
  '}',
  'function onSay(actor, text) { if (/boom/.test(text)) throw new Error("the bridge cracks"); }',
].join('\n');

describe(`play client: NPC speech marked, suspended scripts in the Build panel (${DB_NAME})`, function () {
  this.timeout(90_000);
  let server: TestServer;
  let browser: Browser | undefined;
  let player: PlayPage | undefined;
  before(async function () {
    server = await startTestServer();
    browser = await chromiumFor(this);
  });
  after(async () => {
    await player?.context.close();
    await browser?.close();
    await server?.close();
  });

  it('marks what an NPC and the room say, and shows a suspended script until it is saved again', async () => {
    const builder = await sessionFor(server, 'puppeteer', 'worldbuilder');
    const call = (method: string, path: string, body?: unknown) => server.request(method, path, body, bearer(builder));
    for (const npc of [
      { name: NAME, description: 'A bridge-keeper with quick hands.', room_id: ROOM, script: CONFESSION },
      { name: 'Grumbler', description: 'Always cross.', room_id: ROOM, script: GRUMBLER },
    ]) {
      const made = await call('POST', `${W}/npcs`, npc);
      expect(made.status, made.text).to.equal(201);
    }
    const room = (await call('GET', `${W}/rooms/${ROOM}`)).body;
    const saved = await call('PATCH', `${W}/rooms/${ROOM}`, { version: room.version, script: ROOM_SCRIPT });
    expect(saved.status, saved.text).to.equal(200);

    // A player who took the NPC's name after it was made, a worldbuilder.
    const { username } = await registerGuest(server, NAME);
    await server.db('users').where({ username }).update({ role: 'worldbuilder' });
    await server.db('characters').where({ name: NAME }).update({ room_id: ROOM });
    await wroteBehindServer(server);
    player = await openPlay(browser!, server.url);
    player.context.setDefaultTimeout(10_000);
    const { page } = player;
    await enter(player, username, NAME);

    const other = await newPlayer(server, 'Asker', ROOM);
    await okCmd(other, 'say Who took the penny?');
    // The room's echo below names the penny too, so the NPC confesses again: the first line is this one.
    const confession = logLine(player, 'It was me who took the penny').first();
    await confession.waitFor();
    expect(await confession.getAttribute('class')).to.equal('line chat say from-npc');
    expect(await confession.locator('.badge').textContent()).to.equal('NPC');
    expect(await confession.locator('.speaker').textContent(), 'not the player, who shares the name').to.equal(`${NAME} says:`);
    // Read as one line, by eye and by a screen reader alike: the mark comes first.
    expect(await confession.innerText()).to.match(/^\d\d:\d\d\s*NPC Dielun Bridgehall says: It was me who took the penny$/);
    const grin = logLine(player, `${NAME} grins.`).first();
    await grin.waitFor();
    expect(await grin.locator('.badge').textContent()).to.equal('NPC');

    await typeCommand(player, 'ring');
    const echo = logLine(player, 'Dielun Bridgehall took the penny.');
    await echo.waitFor();
    expect(await echo.getAttribute('class')).to.equal('line chat emote from-world');
    expect(await echo.locator('.badge').textContent()).to.equal('Room');
    expect(await echo.innerText()).to.match(/^\d\d:\d\d\s*Room Dielun Bridgehall took the penny\.$/);
    await typeCommand(player, 'say It was not me, I swear');
    const mine = logLine(player, 'It was not me, I swear');
    await mine.waitFor();
    expect(await mine.getAttribute('class'), "the player's own words carry no mark").to.equal('line chat say');
    expect(await mine.locator('.speaker').textContent()).to.equal('You say:');
    expect(await accessibilityViolations(player, '.log'), 'the log').to.deep.equal([]);
    await page.locator('.log').screenshot({ path: '/tmp/build-scripts-log.png' });

    // Five faults in a row, the default faults_to_suspend: Grumbler throws at every say, the room at a boom.
    for (let i = 0; i < 5; i++) await okCmd(other, `say boom ${i}`);
    await eventually(async () => {
      const errors = (await call('GET', `${W}/script-errors?limit=50`)).body.errors as Array<{ owner: string; kind: string }>;
      const suspended = errors.filter((e) => e.kind === 'suspended').map((e) => e.owner);
      expect(suspended).to.include.members(['npc:grumbler', `room:${ROOM}`]);
    }, 15_000);

    await page.getByRole('button', { name: 'Build' }).click();
    const dialog = page.getByRole('dialog', { name: 'Build' });
    const grumbler = dialog.locator('.npc-editors li').filter({ hasText: 'Grumbler' });
    await grumbler.locator('summary').filter({ hasText: 'Script suspended' }).waitFor();
    const dielun = dialog.locator('.npc-editors li').filter({ hasText: NAME });
    expect(await dielun.locator('.badge.suspended').count(), 'a script that runs is not marked').to.equal(0);
    await grumbler.locator('summary').click();
    const script = grumbler.getByRole('textbox', { name: 'Script', exact: true });
    expect(await script.inputValue()).to.equal(GRUMBLER);
    const note = 'Suspended after faults in a row: save the script again to run it.';
    await grumbler.getByText(note).waitFor();
    expect(await script.getAttribute('aria-describedby'), 'the editor is described by the note').to.equal(await grumbler.locator('p.suspended').getAttribute('id'));
    const roomForm = dialog.locator('form.script-form');
    await roomForm.getByText(note).waitFor();
    // Every hook, the items' too, and timers by name.
    const hint = await roomForm.locator('.hint').textContent();
    for (const hook of ['onLoad()', 'onEnter(actor)', 'onLeave(actor)', 'onSay(actor, text)', 'onCommand(actor, verb, args)', 'onGet(actor)', 'onDrop(actor)', 'every(seconds, "name")', 'after(seconds, "name")']) {
      expect(hint, hook).to.contain(hook);
    }
    expect(await accessibilityViolations(player, 'dialog.build'), 'Build').to.deep.equal([]);
    await page.locator('dialog.build').screenshot({ path: '/tmp/build-scripts-suspended.png' });

    // Saved again, unchanged: each runs again.
    await grumbler.getByRole('button', { name: 'Save NPC' }).click();
    await grumbler.getByText('Grumbler saved.').waitFor();
    await grumbler.getByText(note).waitFor({ state: 'hidden' });
    expect(await grumbler.locator('.badge.suspended').count()).to.equal(0);
    expect(await script.getAttribute('aria-describedby')).to.equal(null);
    expect((await call('GET', `${W}/npcs/grumbler`)).body.script_suspended).to.equal(false);
    await roomForm.getByRole('button', { name: 'Save script' }).click();
    await roomForm.getByText('Room script saved.').waitFor();
    await roomForm.getByText(note).waitFor({ state: 'hidden' });
    expect((await call('GET', `${W}/rooms/${ROOM}`)).body.script_suspended).to.equal(false);

    expect(player.errors, 'page errors').to.deep.equal([]);
    expect(player.dialogs, 'dialogs').to.deep.equal([]);
  });
});
