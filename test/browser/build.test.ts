/**
 * The play client's Build panel in headless Chromium against the real server: a worldbuilder
 * renames and describes the room it stands in, digs a room, adds and removes an item, all
 * through the building API, while a player in the same room sees every change live; players
 * never see the panel.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, login } from '../helpers/accounts.ts';
import { registerGuest, uniqueName } from '../helpers/players.ts';
import { chromiumFor, enter, openPlay, type PlayPage } from './browser.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

/** A worldbuilder account with a character in emberwick; its username and character name. */
async function worldbuilder(server: TestServer, username: string): Promise<{ username: string; name: string }> {
  await createUser(server, username, 'worldbuilder');
  const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(await login(server, username)));
  if (created.status !== 200) throw new Error(created.text);
  return { username, name: created.body.character_name };
}

describe(`play client: the Build panel (${DB_NAME})`, function () {
  this.timeout(60_000);
  let server: TestServer;
  let browser: Browser | undefined;
  const shots = mkdtempSync(path.join(tmpdir(), 'mud-build-shots-'));
  const pages: PlayPage[] = [];
  before(async function () {
    server = await startTestServer();
    browser = await chromiumFor(this);
  });
  after(async () => {
    await Promise.all(pages.map((p) => p.context.close()));
    await browser?.close();
    await server?.close();
    rmSync(shots, { recursive: true, force: true });
  });

  it('a worldbuilder edits, digs and furnishes the room; a player there sees it live and has no Build button', async () => {
    const mason = await worldbuilder(server, 'mason');
    const guestName = uniqueName('Onlooker');
    const guest = await registerGuest(server, guestName);
    const [builder, player] = [await openPlay(browser!, server.url), await openPlay(browser!, server.url)];
    pages.push(builder, player);
    builder.context.setDefaultTimeout(10_000);
    player.context.setDefaultTimeout(10_000);
    await enter(builder, mason.username, mason.name);
    await enter(player, guest.username, guestName);
    expect(await player.page.getByRole('button', { name: 'Build' }).count(), 'players never see the Build panel').to.equal(0);

    await builder.page.getByRole('button', { name: 'Build' }).click();
    const dialog = builder.page.getByRole('dialog', { name: 'Build' });
    await dialog.getByText('lockkeepers_square · zone canal_quarter · version 1').waitFor();

    await dialog.getByRole('textbox', { name: 'Room name', exact: true }).fill("Lockkeeper's Plaza");
    await dialog.getByRole('textbox', { name: 'Room description' }).fill('A cobbled plaza where the canal locks meet; a new stair leads down.');
    await dialog.getByRole('button', { name: 'Save room' }).click();
    await dialog.getByText('Room saved.').waitFor();
    await player.page.locator('#room-name', { hasText: "Lockkeeper's Plaza" }).waitFor();
    await builder.page.locator('#room-name', { hasText: "Lockkeeper's Plaza" }).waitFor();

    await dialog.getByRole('combobox', { name: 'Direction' }).selectOption('down');
    await dialog.getByRole('textbox', { name: 'New room name' }).fill('Lamplit Cellar');
    await dialog.getByRole('button', { name: 'Dig' }).click();
    await dialog.getByText('You dig down to Lamplit Cellar (up leads back).').waitFor();
    await player.page.getByRole('button', { name: 'Down to Lamplit Cellar' }).waitFor();

    await dialog.getByRole('textbox', { name: 'Item name' }).fill('Dusty Lantern');
    await dialog.getByRole('textbox', { name: 'Item description' }).fill('A tin lantern furred with dust.');
    await dialog.getByRole('button', { name: 'Add item' }).click();
    await dialog.getByText('Dusty Lantern lies here now.').waitFor();
    await player.page.locator('.room .things li').filter({ hasText: 'Dusty Lantern' }).waitFor();
    await dialog.getByRole('button', { name: 'Remove Dusty Lantern' }).waitFor();
    await builder.page.screenshot({ path: path.join(shots, 'build.png') });

    await dialog.getByRole('button', { name: 'Remove Dusty Lantern' }).click();
    await dialog.getByText('Dusty Lantern is gone.').waitFor();
    await player.page.locator('.room .things li').filter({ hasText: 'Dusty Lantern' }).waitFor({ state: 'detached' });

    // A change made meanwhile elsewhere: the panel's stale save is refused with the server's words.
    const stale = await server.request('PATCH', '/api/worlds/emberwick/rooms/lockkeepers_square', { version: 3, name: 'Elsewhere' }, bearer(await login(server, 'mason')));
    expect(stale.status, stale.text).to.equal(200);
    await dialog.getByRole('button', { name: 'Save room' }).click();
    await dialog.getByText("Room 'lockkeepers_square' is at version 4, not 3 as sent; read it again").waitFor();
    await dialog.getByText('lockkeepers_square · zone canal_quarter · version 4').waitFor();

    for (const { errors, dialogs } of pages) {
      expect(errors, 'page errors').to.deep.equal([]);
      expect(dialogs, 'dialogs').to.deep.equal([]);
    }
  });
});
