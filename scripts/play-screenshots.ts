/**
 * `npm run play:screenshots`: plays a short scene on a fresh in-process server (temporary
 * SQLite database) in headless Chromium and saves what the play client shows, at desktop
 * (1280×800) and phone (375×812) size and on the phone with its keyboard open (375×400), as
 * docs/play-desktop.png, docs/play-phone.png and docs/play-phone-keyboard.png, then the staff
 * view as docs/play-admin.png; then the demo world's living scene, the Sooty Heron's taproom
 * with Maud the Barkeep and the Heron Yard behind it, as docs/play-npcs-taproom.png and
 * docs/play-npcs-yard.png, and a worldbuilder's Build panel at Maud's script, refused naming
 * its line, as docs/play-build-npcs.png (the README shows them). Needs the browser the browser
 * tests use (test/browser/browser.ts).
 */
import path from 'node:path';
import { startTestServer } from '../test/helpers/test-server.ts';
import { GOOD_PASSWORD } from '../test/helpers/accounts.ts';
import { bearer, createUser, login } from '../test/helpers/accounts.ts';
import { loginAs, okCmd, registerGuest, selectCharacter, type Player } from '../test/helpers/players.ts';
import { DESKTOP, PHONE, launchChromium, openPlay } from '../test/browser/browser.ts';

const DOCS = path.join(import.meta.dirname, '..', 'docs');

const browser = await launchChromium();
if (!browser) process.exit(1);
const server = await startTestServer({ env: { MUD_LOG_LEVEL: 'warn' } });
try {
  /** A character other players see, played through the API. */
  const extra = async (name: string, roomId?: string): Promise<Player> => {
    const { username, characterId } = await registerGuest(server, name);
    if (roomId) await server.db('characters').where({ id: characterId }).update({ room_id: roomId });
    const sessionId = await loginAs(server, username);
    await selectCharacter(server, sessionId, characterId);
    return { server, name, username, characterId, sessionId };
  };
  const mara = await extra('Mara Vell');
  const tobin = await extra('Tobin Reed', 'ropewalk_bridge');
  const wren = await registerGuest(server, 'Wren Ashdown');

  const { page } = await openPlay(browser, server.url, DESKTOP);
  await page.getByRole('textbox', { name: 'Username' }).fill(wren.username);
  await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Play as Wren Ashdown' }).click();
  await page.locator('.connection[data-state="live"]').waitFor();

  const type = async (command: string) => {
    await page.locator('#command').fill(command);
    await page.locator('#command').press('Enter');
    await page.waitForTimeout(300);
  };
  const pause = () => page.waitForTimeout(300);
  await okCmd(mara, 'say Evening. The brass gauge has been twitching since dusk.');
  await pause();
  await type('say Something stirring under the lock gates?');
  await okCmd(tobin, 'south');
  await pause();
  await okCmd(tobin, 'yell The foundry bell is ringing on its own!');
  await pause();
  await type('get canal penny');
  await okCmd(mara, 'whisper Wren Ashdown Meet me at the wharf after dark. Bring the penny.');
  await pause();
  await type('who');
  await page.locator('#command').fill('whisper Mara Vell I will be there');
  await page.waitForTimeout(500);

  await page.screenshot({ path: path.join(DOCS, 'play-desktop.png') });
  await page.setViewportSize(PHONE);
  await page.locator('.log').evaluate((log) => log.scrollTo(0, log.scrollHeight));
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(DOCS, 'play-phone.png') });
  // The on-screen keyboard takes about half the height.
  await page.locator('#command').focus();
  await page.setViewportSize({ width: PHONE.width, height: 400 });
  await page.locator('html.short-screen').waitFor({ state: 'attached' });
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(DOCS, 'play-phone-keyboard.png') });

  await createUser(server, 'warden', 'admin');
  const staff = await openPlay(browser, server.url, DESKTOP);
  await staff.page.getByRole('textbox', { name: 'Username' }).fill('warden');
  await staff.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
  await staff.page.getByRole('button', { name: 'Log in' }).click();
  await staff.page.getByRole('button', { name: 'Admin' }).click();
  // Asked before the ban: the view as it asks.
  await staff.page.getByRole('button', { name: `Ban ${mara.username}` }).click();
  await staff.page.waitForTimeout(300);
  await staff.page.screenshot({ path: path.join(DOCS, 'play-admin.png') });

  // The living scene: Wren walks into the Sooty Heron, where Maud greets her and answers.
  await page.setViewportSize(DESKTOP);
  await page.locator('#command').blur();
  await okCmd(mara, 'east');
  await okCmd(mara, 'east');
  await type('east');
  await type('east');
  await page.locator('.log li.from-npc', { hasText: 'Evening, Wren Ashdown' }).waitFor();
  await okCmd(mara, 'say An ale for each of us, Maud, and the news.');
  await page.locator('.log li.from-npc', { hasText: 'A penny, when you have one, Mara Vell.' }).waitFor();
  await type('say What is this about the old drain?');
  await page.locator('.log li.from-npc', { hasText: 'Pull the chain' }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(DOCS, 'play-npcs-taproom.png') });

  // Out the back: the yard's cat, and the yard's own verb, which its script answers.
  await type('north');
  await page.locator('.room .npcs li', { hasText: 'Smudge the Cat' }).waitFor();
  await page.getByRole('button', { name: 'Examine Smudge the Cat' }).click();
  await page.waitForTimeout(300);
  await type('pull chain');
  await page.locator('.log li.from-world', { hasText: 'hauls on the rusty chain' }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(DOCS, 'play-npcs-yard.png') });

  // A worldbuilder in the taproom opens Maud's script; a slip is refused naming its line.
  await createUser(server, 'mason', 'worldbuilder');
  const builder = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(await login(server, 'mason')));
  await server.db('characters').where({ id: builder.body.character_id }).update({ room_id: 'sooty_heron_taproom' });
  const build = await openPlay(browser, server.url, { width: DESKTOP.width, height: 1000 });
  await build.page.getByRole('textbox', { name: 'Username' }).fill('mason');
  await build.page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
  await build.page.getByRole('button', { name: 'Log in' }).click();
  await build.page.getByRole('button', { name: `Play as ${builder.body.character_name}` }).click();
  await build.page.locator('.connection[data-state="live"]').waitFor();
  await build.page.getByRole('button', { name: 'Build' }).click();
  const dialog = build.page.getByRole('dialog', { name: 'Build' });
  const maud = dialog.locator('.npc-editors li', { hasText: 'Maud the Barkeep' });
  await maud.locator('summary').click();
  const script = maud.getByRole('textbox', { name: 'Script', exact: true });
  const source = await script.inputValue();
  const slip = source.replace('function onSay(actor, text)', 'function onSay(actor, text');
  if (slip === source) throw new Error("Maud's script has no onSay(actor, text) to break");
  await script.fill(slip);
  await maud.getByRole('button', { name: 'Save NPC' }).click();
  await maud.getByText('The script does not compile').waitFor();
  // Maud's editor at the top of the panel, below its header.
  await maud.locator('summary').evaluate((summary) => {
    const panel = summary.closest('dialog')!;
    panel.scrollTo(0, panel.scrollTop + summary.getBoundingClientRect().top - panel.querySelector('header')!.getBoundingClientRect().bottom - 12);
  });
  await build.page.bringToFront();
  await build.page.waitForTimeout(300);
  await build.page.screenshot({ path: path.join(DOCS, 'play-build-npcs.png') });
  console.log('Wrote docs/play-desktop.png, docs/play-phone.png, docs/play-phone-keyboard.png, docs/play-admin.png, docs/play-npcs-taproom.png, docs/play-npcs-yard.png and docs/play-build-npcs.png.');
} finally {
  await browser.close();
  await server.close();
}
