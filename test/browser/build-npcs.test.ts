/**
 * NPCs and scripts in the play client, in headless Chromium against the real server: a
 * worldbuilder creates an NPC in the Build panel, its script is refused naming the line (the
 * caret on it) and saves once fixed, a stale version keeps the typed script, the NPC stands in
 * the room panel and answers a say in the log marked as an NPC's, the room's own script echoes
 * marked as the room's, a thrown error shows in the script errors on Refresh, a deleted NPC
 * leaves the room panel, and a package NPC changed online is reverted to its package.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, login } from '../helpers/accounts.ts';
import { newPlayer, okCmd } from '../helpers/players.ts';
import { chromiumFor, enter, logLine, openPlay, typeCommand, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

/** Line 3 lacks its closing parenthesis. */
const BROKEN = ['function onSay(actor, text) {', '  if (/fare/i.test(text)) self.say("Two pennies, " + actor.name + ".");', '  if (/boom/i.test(text)) throw new Error("the kettle burst";', '}'].join('\n');
const FIXED = BROKEN.replace('burst";', 'burst");');
const ROOM_SCRIPT = ['function onCommand(actor, verb, args) {', '  if (verb !== "ring") return false;', '  room.echo("The gate bell clangs over the water.");', '  return true;', '}'].join('\n');

describe(`play client: NPCs and scripts in the Build panel (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let browser: Browser | undefined;
  const pages: PlayPage[] = [];
  before(async function () {
    server = await startTestServer();
    browser = await chromiumFor(this);
  });
  after(async () => {
    await Promise.all(pages.map((p) => p.context.close()));
    await browser?.close();
    await server?.close();
  });

  it('a worldbuilder scripts an NPC and the room; the NPC answers marked as an NPC, the room as the world, errors are listed', async () => {
    await createUser(server, 'puppeteer', 'worldbuilder');
    const token = await login(server, 'puppeteer');
    const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(token));
    expect(created.status, created.text).to.equal(200);
    const builder = await openPlay(browser!, server.url);
    pages.push(builder);
    builder.context.setDefaultTimeout(10_000);
    const { page } = builder;
    await enter(builder, 'puppeteer', created.body.character_name);
    expect(await page.locator('.room .npcs li').count(), 'no NPC stands in the spawn room').to.equal(0);

    await page.getByRole('button', { name: 'Build' }).click();
    const dialog = page.getByRole('dialog', { name: 'Build' });
    await dialog.getByText('No NPC stands here.').waitFor();
    await dialog.getByRole('textbox', { name: 'NPC name' }).fill('Old Tam');
    await dialog.getByRole('textbox', { name: 'NPC description' }).fill('A bent old lockkeeper with a brass key on a string.');
    await dialog.getByRole('button', { name: 'Create NPC' }).click();
    await dialog.getByText('Old Tam stands here now: write its script below.').waitFor();
    // Behind the panel the room already shows it, from its arrival event.
    await page.locator('.room .npcs li').filter({ hasText: 'Old Tam' }).waitFor();
    await logLine(builder, 'Old Tam appears.').waitFor();

    const tam = dialog.locator('.npc-editors li').filter({ hasText: 'Old Tam' });
    const script = tam.getByRole('textbox', { name: 'Script', exact: true });
    expect(await page.evaluate('document.activeElement.id'), 'the new NPC opens at its script').to.equal(await script.getAttribute('id'));
    await script.fill(BROKEN);
    await tam.getByRole('button', { name: 'Save NPC' }).click();
    await tam.getByText('The script does not compile (line 3): SyntaxError').waitFor();
    expect(await page.evaluate('document.activeElement.id')).to.equal(await script.getAttribute('id'));
    const selected = await page.evaluate('(area => area.value.slice(area.selectionStart, area.selectionEnd))(document.activeElement)');
    expect(selected, 'the caret marks the line named').to.equal(BROKEN.split('\n')[2]);
    await tam.getByText('old_tam · version 1 · no script').waitFor();

    await script.fill(FIXED);
    await tam.getByRole('button', { name: 'Save NPC' }).click();
    await tam.getByText('Old Tam saved.').waitFor();
    await tam.getByText("old_tam · version 2 · a builder's script").waitFor();

    // Changed meanwhile elsewhere: the save is refused with the server's words, the typed script
    // stays, and saving again replaces the newer version with it.
    const elsewhere = await server.request('PATCH', '/api/worlds/emberwick/npcs/old_tam', { version: 2, description: 'Changed in another window.' }, bearer(token));
    expect(elsewhere.status, elsewhere.text).to.equal(200);
    const edited = FIXED.replace('Two pennies', 'Three pennies');
    await script.fill(edited);
    await tam.getByRole('button', { name: 'Save NPC' }).click();
    await tam.getByText("NPC 'old_tam' is at version 3, not 2 as sent; read it again. What you typed is kept: save again to replace that version with it.").waitFor();
    await tam.getByText('old_tam · version 3').waitFor();
    expect(await script.inputValue()).to.equal(edited);
    expect(await tam.getByRole('textbox', { name: 'Description', exact: true }).inputValue(), 'a field left alone shows the newer version').to.equal('Changed in another window.');
    await tam.getByRole('button', { name: 'Save NPC' }).click();
    await tam.getByText('old_tam · version 4').waitFor();

    const roomScript = dialog.getByRole('textbox', { name: 'Room script' });
    await roomScript.fill(ROOM_SCRIPT);
    await dialog.getByRole('button', { name: 'Save script' }).click();
    await dialog.getByText('Room script saved.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: 'Examine Old Tam' }).click();
    await logLine(builder, 'Changed in another window.').waitFor();
    await typeCommand(builder, 'say What is the fare?');
    const answer = logLine(builder, `Three pennies, ${created.body.character_name}.`);
    await answer.waitFor();
    expect(await answer.getAttribute('class')).to.equal('line chat say from-npc');
    expect(await answer.locator('.badge').textContent()).to.equal('NPC');
    expect(await answer.locator('.speaker').textContent()).to.equal('Old Tam says:');
    const mine = logLine(builder, 'What is the fare?');
    expect(await mine.getAttribute('class'), "the builder's own words are not marked").to.equal('line chat say');

    await typeCommand(builder, 'ring bell');
    const echo = logLine(builder, 'The gate bell clangs over the water.');
    await echo.waitFor();
    expect(await echo.getAttribute('class')).to.equal('line chat emote from-world');
    expect(await echo.locator('.badge').textContent(), "the room's mark, not an NPC's").to.equal('Room');

    // Someone else sets the script off; the panel's Refresh shows what it threw, and where.
    await page.getByRole('button', { name: 'Build' }).click();
    await dialog.getByText('No script errors.').waitFor();
    await okCmd(await newPlayer(server, 'Bystander', 'lockkeepers_square'), 'say boom');
    await dialog.getByRole('button', { name: 'Refresh the script errors' }).click();
    const row = dialog.locator('.script-errors tbody tr').first();
    await row.filter({ hasText: 'the kettle burst' }).waitFor();
    expect((await row.locator('td').allTextContents()).slice(1)).to.deep.equal(['npc:old_tam', 'onSay', '3', 'thrown Error: the kettle burst']);

    await tam.locator('summary').click();
    await tam.getByRole('button', { name: 'Delete Old Tam' }).click();
    await page.getByRole('dialog', { name: 'Delete Old Tam?' }).getByRole('button', { name: 'Delete' }).click();
    await dialog.getByText('Old Tam is gone.').waitFor();
    await dialog.getByText('No NPC stands here.').waitFor();
    await page.locator('.room .npcs li').filter({ hasText: 'Old Tam' }).waitFor({ state: 'detached' });
    expect(await page.getByRole('heading', { name: 'Also here' }).isVisible(), 'no NPC heading in a room without NPCs').to.equal(false);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // A package NPC changed online goes back to its package's words.
    await typeCommand(builder, 'east');
    await typeCommand(builder, 'east');
    await page.locator('.room .npcs li').filter({ hasText: 'Maud the Barkeep' }).waitFor();
    await page.getByRole('button', { name: 'Build' }).click();
    const maud = dialog.locator('.npc-editors li').filter({ hasText: 'Maud the Barkeep' });
    await maud.locator('summary').click();
    const description = maud.getByRole('textbox', { name: 'Description', exact: true });
    const packaged = await description.inputValue();
    expect(await maud.getByRole('button', { name: 'Revert to the package' }).isVisible(), 'nothing to revert yet').to.equal(false);
    await description.fill('A barkeep who has seen everything twice.');
    await maud.getByRole('button', { name: 'Save NPC' }).click();
    await maud.getByText('maud · version 2 · script scripts/maud.js').waitFor();
    await maud.getByRole('button', { name: 'Revert to the package' }).click();
    await maud.getByText('Maud the Barkeep is as its package has it again.').waitFor();
    expect(await description.inputValue()).to.equal(packaged);
    await maud.getByText('maud · version 3').waitFor();

    expect(builder.errors, 'page errors').to.deep.equal([]);
    expect(builder.dialogs, 'dialogs').to.deep.equal([]);
  });
});
