/**
 * `node scripts/build-screenshot.ts`: a worldbuilder's Build panel in the play client, on a
 * fresh in-process server (temporary SQLite database) in headless Chromium, saved as
 * docs/play-build.png (the README shows it). Needs the browser the browser tests use
 * (test/browser/browser.ts).
 */
import path from 'node:path';
import { startTestServer } from '../test/helpers/test-server.ts';
import { bearer, createUser, GOOD_PASSWORD, login } from '../test/helpers/accounts.ts';
import { DESKTOP, launchChromium, openPlay } from '../test/browser/browser.ts';

const DOCS = path.join(import.meta.dirname, '..', 'docs');

const browser = await launchChromium();
if (!browser) process.exit(1);
const server = await startTestServer({ env: { MUD_LOG_LEVEL: 'warn' } });
try {
  await createUser(server, 'mason', 'worldbuilder');
  const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(await login(server, 'mason')));
  const { page } = await openPlay(browser, server.url, DESKTOP);
  await page.getByRole('textbox', { name: 'Username' }).fill('mason');
  await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: `Play as ${created.body.character_name}` }).click();
  await page.locator('.connection[data-state="live"]').waitFor();
  await page.getByRole('button', { name: 'Build' }).click();
  const dialog = page.getByRole('dialog', { name: 'Build' });
  await dialog.getByText('version 1').waitFor();
  await dialog.getByRole('textbox', { name: 'Room description' }).fill('A cobbled square where the canal locks meet. A new stair leads down into the dark.');
  await dialog.getByRole('button', { name: 'Save room' }).click();
  await dialog.getByText('Room saved.').waitFor();
  await dialog.getByRole('combobox', { name: 'Direction' }).selectOption('down');
  await dialog.getByRole('textbox', { name: 'New room name' }).fill('Lamplit Cellar');
  await dialog.getByRole('button', { name: 'Dig' }).click();
  await dialog.getByText('You dig down').waitFor();
  await dialog.getByRole('textbox', { name: 'Item name' }).fill('Dusty Lantern');
  await dialog.getByRole('button', { name: 'Add item' }).click();
  await dialog.getByRole('button', { name: 'Remove Dusty Lantern' }).waitFor();
  await dialog.evaluate((element) => element.scrollTo(0, 0));
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(DOCS, 'play-build.png') });
  console.log('Wrote docs/play-build.png.');
} finally {
  await browser.close();
  await server.close();
}
