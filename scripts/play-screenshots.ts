/**
 * `npm run play:screenshots`: plays a short scene on a fresh in-process server (temporary
 * SQLite database) in headless Chromium and saves what the play client shows, at desktop
 * (1280×800) and phone (375×812) size and on the phone with its keyboard open (375×400), as
 * docs/play-desktop.png, docs/play-phone.png and docs/play-phone-keyboard.png, then the staff
 * view as docs/play-admin.png (the README shows them). Needs the browser the browser tests use
 * (test/browser/browser.ts).
 */
import path from 'node:path';
import { startTestServer } from '../test/helpers/test-server.ts';
import { GOOD_PASSWORD } from '../test/helpers/accounts.ts';
import { createUser } from '../test/helpers/accounts.ts';
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
  console.log('Wrote docs/play-desktop.png, docs/play-phone.png, docs/play-phone-keyboard.png and docs/play-admin.png.');
} finally {
  await browser.close();
  await server.close();
}
