/**
 * The reference server's own play and admin web clients, unchanged, against this server (issue
 * 36; README, "Keeping the reference's web clients"): served exactly as the README says, the
 * shells pre-rendered by scripts/reference-shells.ts and nginx on deploy/nginx/reference-clients.conf
 * (test/helpers/nginx.ts), and driven in headless Chromium (test/browser/browser.ts).
 *
 * The play client: a wrong password, login, the world list with its invite lock, a character
 * generated, entering the world, look, a walk there and back, say heard by a second player both
 * ways, who, logout. The admin client: the dashboard, users with a character tombstoned,
 * characters, tombstones, sessions with a kick by the row's session_id, worlds with a character
 * kicked, connections, locations, chat, tables, schema, the superuser page; and no listing it
 * read shows a session token. Every request the pages make that answers 4xx or 5xx, or fails,
 * fails the test unless the step expects it (the wrong password's 401, a kicked page's polls).
 *
 * The clients are test material kept beside the checkout, never in it: where they are absent
 * the tests are skipped, saying so (a reason CI accepts, test/helpers/needs.ts).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, GOOD_PASSWORD, login } from '../helpers/accounts.ts';
import { newPlayer, type Player } from '../helpers/players.ts';
import { freePort } from '../helpers/free-port.ts';
import { needs, NO_REFERENCE_CLIENTS, skipBecause } from '../helpers/needs.ts';
import { NGINX, NGINX_REMEDY, startNginx, writeNginxConf } from '../helpers/nginx.ts';
import { chromiumFor, DESKTOP } from './browser.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where the reference's clients are kept, beside the checkout (never copied into it). */
const CLIENT = path.resolve(ROOT, '..', 'shared', 'reference', 'reference-client');
const CONF = path.join(ROOT, 'deploy', 'nginx', 'reference-clients.conf');
const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

/** A look of this world's own, which must win over the reference world's. */
const OWN_LOOK = 'body { --spire-look: 1; }\n';

/** deploy/nginx/reference-clients.conf with this test's folders, server and port. */
function frontConf(shells: string, looks: string, serverPort: number, port: number): string {
  let conf = readFileSync(CONF, 'utf8');
  const replace = (from: string, to: string): void => {
    if (!conf.includes(from)) throw new Error(`deploy/nginx/reference-clients.conf no longer has '${from}'`);
    conf = conf.replaceAll(from, to);
  };
  replace('/srv/reference-client', CLIENT);
  replace('/srv/reference-shells', shells);
  replace('/srv/world-looks', looks);
  replace('server 127.0.0.1:8000;', `server 127.0.0.1:${serverPort};`);
  replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`);
  return conf;
}

/** A page of one client, with every answer it got that the test did not expect. */
interface ClientPage {
  page: Page;
  context: BrowserContext;
  /** `METHOD /path status` of each 4xx/5xx answer and failed request nobody allowed, and uncaught errors. */
  unexpected: string[];
  /** Allows answers from now on (the wrong password's 401, polls of a kicked session). */
  allow(rule: (method: string, pathname: string, status: number) => boolean): void;
  /** The next confirm() the page opens must read `text`, and is accepted; any other is refused and unexpected. */
  confirmNext(text: string): void;
  /** The JSON bodies of the /admin/database/ answers the page read, once settled() says they are all in. */
  listings: string[];
  settled(): Promise<unknown>;
}

async function openClient(browser: Browser, url: string): Promise<ClientPage> {
  const context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, locale: 'en-GB', timezoneId: 'UTC' });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const rules: Array<(method: string, pathname: string, status: number) => boolean> = [];
  const pending: Array<Promise<void>> = [];
  let confirming: string | null = null;
  const client: ClientPage = {
    page,
    context,
    unexpected: [],
    allow: (rule) => rules.push(rule),
    confirmNext: (text) => void (confirming = text),
    listings: [],
    settled: () => Promise.all(pending),
  };
  page.on('response', (response: Response) => {
    const { pathname } = new URL(response.url());
    const method = response.request().method();
    if (response.status() >= 400 && !rules.some((rule) => rule(method, pathname, response.status()))) {
      client.unexpected.push(`${method} ${pathname} ${response.status()}`);
    }
    if (pathname.startsWith('/admin/database/')) pending.push(response.text().then((text) => void client.listings.push(text), () => undefined));
  });
  page.on('requestfailed', (request) => {
    const { pathname } = new URL(request.url());
    // A page leaving cancels what it still loads; anything else that fails is a failure.
    if (!/ERR_ABORTED/.test(request.failure()?.errorText ?? '')) client.unexpected.push(`${request.method()} ${pathname} failed: ${request.failure()?.errorText}`);
  });
  page.on('pageerror', (error) => client.unexpected.push(`uncaught: ${error.message}`));
  // The admin client asks before a kick or a tombstone: yes to the one the step expects, no to any other.
  page.on('dialog', (dialog) => {
    if (dialog.message() === confirming) {
      confirming = null;
      void dialog.accept();
      return;
    }
    client.unexpected.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return client;
}

/** The session the play client keeps in the tab. */
async function playSession(client: ClientPage): Promise<{ session_id: string; selected_character_name: string | null }> {
  return JSON.parse((await client.page.evaluate(() => sessionStorage.getItem('pipeworks_play_session'))) ?? 'null');
}

/** Logs in through the play client's form. */
async function playLogin({ page }: ClientPage, username: string, password = GOOD_PASSWORD): Promise<void> {
  await page.locator('#play-account-name').fill(username);
  await page.locator('#play-password').fill(password);
  await page.locator('#play-login-button').click();
}

/** Types a command into the play client's terminal. */
async function playCommand({ page }: ClientPage, command: string): Promise<void> {
  await page.locator('#commandInput').fill(command);
  await page.locator('#commandInput').press('Enter');
}

const output = ({ page }: ClientPage, text: string | RegExp, kind = '.output-text') => page.locator(`#gameOutput ${kind}`).filter({ hasText: text });

describe(`the reference server's web clients in front of this server (${DB_NAME})`, function () {
  // Two clients, three players and the 5-second chat poll, on a busy machine.
  this.timeout(240_000);
  let server: TestServer;
  let browser: Browser | undefined;
  let nginx: ChildProcess | undefined;
  let dir = '';
  let url = '';
  const clients: ClientPage[] = [];
  const accounts = { root: 'ref_root', wren: 'ref_wren', tamsin: 'ref_tamsin' };
  const ids: Record<string, number> = {};
  const tokens: Record<string, string> = {};
  let tamsinCharacter = '';
  let wrenCharacter = { id: 0, name: '' };
  let bystander: Player;

  const open = async (): Promise<ClientPage> => {
    const client = await openClient(browser!, url);
    clients.push(client);
    return client;
  };
  /** Runs a test's steps; when one fails (a wait that times out, say), the answers nobody expected are told with it. */
  const steps = async (work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      const unexpected = clients.flatMap((c) => c.unexpected);
      if (unexpected.length === 0 || !(err instanceof Error)) throw err;
      throw new Error(`${err.message}\n      answers nobody expected so far: ${unexpected.join('; ')}`, { cause: err });
    }
    expect(clients.flatMap((c) => c.unexpected), 'answers nobody expected').to.deep.equal([]);
  };

  before(async function () {
    if (!existsSync(path.join(CLIENT, 'templates', 'play_shell.html'))) {
      console.log(`      (skipped: the reference's web clients are not at ${CLIENT})`);
      skipBecause(this, NO_REFERENCE_CLIENTS);
    }
    needs(this, `nginx at ${NGINX}`, existsSync(NGINX), NGINX_REMEDY);
    browser = await chromiumFor(this);
    server = await startTestServer();
    ids.root = await createUser(server, accounts.root, 'superuser');
    ids.wren = await createUser(server, accounts.wren, 'player');
    ids.tamsin = await createUser(server, accounts.tamsin, 'player');
    // Tamsin already has a character; Wren makes one in the client.
    const created = await server.post('/characters/create', { world_id: 'emberwick' }, bearer(await login(server, accounts.tamsin)));
    expect(created.status, created.text).to.equal(200);
    tamsinCharacter = created.body.character_name;

    dir = mkdtempSync(path.join(tmpdir(), 'mud-reference-clients-'));
    // As the README says: the shells rendered by the script, looks in a folder of their own.
    const shells = path.join(dir, 'shells');
    const rendered = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'reference-shells.ts'), CLIENT, shells], { encoding: 'utf8' });
    expect(rendered.status, rendered.stderr).to.equal(0);
    const looks = path.join(dir, 'looks');
    mkdirSync(path.join(looks, 'css'), { recursive: true });
    writeFileSync(path.join(looks, 'css', 'hollow_spire.css'), OWN_LOOK);
    const port = await freePort();
    writeNginxConf(dir, frontConf(shells, looks, Number(new URL(server.url).port), port));
    url = `http://127.0.0.1:${port}`;
    nginx = await startNginx(dir, async () => (await fetch(`${url}/health`)).status === 200);
  });

  after(async () => {
    for (const client of clients) await client.context.close().catch(() => undefined);
    await browser?.close();
    nginx?.kill('SIGTERM');
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is served as the README says: the shells, the static files, each world’s look, and the API passed through', async () => {
    const play = await fetch(`${url}/play`);
    expect(play.headers.get('content-type')).to.match(/^text\/html/);
    const playText = await play.text();
    expect(playText).to.contain('data-world-id=""').and.not.to.contain('{{').and.not.to.contain('/worlds/');
    const world = await (await fetch(`${url}/play/emberwick/rooms/anywhere`)).text();
    expect(world).to.contain('<body data-world-id="emberwick"').and.to.contain('/web/static/play/css/worlds/emberwick.css?v=');
    const admin = await (await fetch(`${url}/admin/sessions`)).text();
    expect(admin).to.contain('<body data-app-version="').and.to.contain('/web/static/js/app.js?v=');
    const script = await fetch(`${url}/web/static/js/app.js`);
    expect(script.headers.get('content-type')).to.match(/javascript/);
    expect(await script.text()).to.equal(readFileSync(path.join(CLIENT, 'static', 'js', 'app.js'), 'utf8'));
    // A world's own look wins; a world without one wears the reference world's.
    expect(await (await fetch(`${url}/web/static/play/css/worlds/hollow_spire.css`)).text()).to.equal(OWN_LOOK);
    const fallback = readFileSync(path.join(CLIENT, 'static', 'play', 'css', 'worlds', 'pipeworks_web.css'), 'utf8');
    expect(await (await fetch(`${url}/web/static/play/css/worlds/emberwick.css`)).text()).to.equal(fallback);
    expect((await fetch(`${url}/web/static/play/js/worlds/emberwick.js`)).headers.get('content-type')).to.match(/javascript/);
    // Everything else is the server's, unchanged: its JSON, its 404s, the admin API under /admin/.
    expect(await (await fetch(`${url}/health`)).json()).to.include({ status: 'ok' });
    const api = await fetch(`${url}/admin/database/worlds`);
    expect([api.status, await api.json()]).to.deep.equal([401, { detail: 'Invalid or expired session' }]);
    expect((await fetch(`${url}/play/Not a world`)).status).to.equal(404);
  });

  it('the play client: wrong password, login, invite lock, a character generated, look, walk, say heard both ways, who, logout', () => steps(async () => {
    const wren = await open();
    await wren.page.goto(`${url}/play`);
    wren.allow((method, pathname, status) => method === 'POST' && pathname === '/login' && status === 401);
    await playLogin(wren, accounts.wren, 'Wrong-Lantern-42');
    await wren.page.locator('#play-status').filter({ hasText: 'Goblin says: Invalid username or password' }).waitFor();

    await playLogin(wren, accounts.wren);
    await wren.page.locator('[data-play-state="select-world"]').waitFor();
    // The open world is chosen; the invite world is shown, locked.
    await wren.page.locator('#play-character-hint').filter({ hasText: 'No characters are available in emberwick' }).waitFor();
    const worlds: Array<[string | null, string | null, boolean]> = [];
    for (const o of await wren.page.locator('#play-world-select option').all()) worlds.push([await o.getAttribute('value'), await o.textContent(), await o.isDisabled()]);
    expect(worlds, JSON.stringify(worlds)).to.deep.include(['hollow_spire', 'The Hollow Spire (invite-locked)', true]);
    expect(worlds.find(([id]) => id === 'emberwick')?.[2]).to.equal(false);

    await wren.page.locator('#play-create-character').click();
    await wren.page.locator('#play-character-hint').filter({ hasText: /is available\. Select it to enter\./ }).waitFor();
    const option = wren.page.locator('#play-character-select option').first();
    wrenCharacter = { id: Number(await option.getAttribute('value')), name: (await option.textContent())! };
    await wren.page.locator('#play-enter-world').click();
    await wren.page.waitForURL(`${url}/play/emberwick`);
    await wren.page.locator('[data-play-state="in-world"]').waitFor();
    expect(await wren.page.locator('body').getAttribute('data-world-id')).to.equal('emberwick');
    // The first look is the client's own; the world wears the reference world's look.
    await output(wren, "Lockkeeper's Square").first().waitFor();
    const look = 'Array.from(document.styleSheets).filter((s) => (s.href ?? "").includes("/worlds/emberwick.css")).map((s) => s.cssRules.length)';
    expect(await wren.page.evaluate(look)).to.satisfy((rules: number[]) => rules.length === 1 && rules[0]! > 10);
    await playCommand(wren, 'east');
    await output(wren, "Chandler's Row").first().waitFor();
    await playCommand(wren, 'west');
    await output(wren, "Lockkeeper's Square").nth(1).waitFor();

    const tamsin = await open();
    await tamsin.page.goto(`${url}/play`);
    await playLogin(tamsin, accounts.tamsin);
    await tamsin.page.locator('#play-character-hint').filter({ hasText: '1 character(s) available in emberwick' }).waitFor();
    await tamsin.page.locator('#play-enter-world').click();
    await tamsin.page.locator('[data-play-state="in-world"]').waitFor();
    await output(tamsin, "Lockkeeper's Square").first().waitFor();

    // The 5-second chat poll carries each say to the other.
    await playCommand(wren, 'say Evening, all');
    await output(wren, 'You say: Evening, all').waitFor();
    await output(tamsin, `${wrenCharacter.name}: Evening, all`, '.output-chat').waitFor({ timeout: 30_000 });
    await playCommand(tamsin, 'say Well met');
    await output(wren, `${tamsinCharacter}: Well met`, '.output-chat').waitFor({ timeout: 30_000 });
    await playCommand(wren, 'who');
    await output(wren, tamsinCharacter).first().waitFor();

    tokens.tamsin = (await playSession(tamsin)).session_id;
    tokens.wren = (await playSession(wren)).session_id;
    await wren.page.locator('#play-logout-button').click();
    await wren.page.locator('[data-play-state="logged-out"]').waitFor();
    await wren.page.locator('#play-status').filter({ hasText: 'Ready to issue a visitor account.' }).waitFor();
    expect((await server.get(`/status/${tokens.wren}`)).status).to.equal(401);
    expect(await playSession(wren)).to.equal(null);
  }));

  it('the admin client: users (a character tombstoned), characters, tombstones, sessions (a kick), worlds (a character kicked), and its other pages', () => steps(async () => {
    bystander = await newPlayer(server, 'Bystander');
    const tamsin = clients[1]!;
    const admin = await open();
    await admin.page.goto(`${url}/admin`);
    await admin.page.locator('input[name="username"]').fill(accounts.root);
    await admin.page.locator('input[name="password"]').fill(GOOD_PASSWORD);
    await admin.page.getByRole('button', { name: 'Sign in' }).click();
    await admin.page.getByRole('heading', { name: 'Admin Overview' }).waitFor();
    tokens.root = JSON.parse((await admin.page.evaluate(() => sessionStorage.getItem('mud_admin_session')))!).session_id;
    const visit = async (label: string, heading: string | RegExp): Promise<void> => {
      await admin.page.locator('a.nav-link', { hasText: label }).click();
      await admin.page.getByRole('heading', { name: heading }).first().waitFor();
    };
    const toast = (text: string | RegExp) => admin.page.locator('.toast-success', { hasText: text });

    // Users: Wren's character tombstoned from the account's Characters tab.
    await visit('Users', /Users/);
    await admin.page.locator(`tr[data-user-id="${ids.wren}"] td`).first().click();
    await admin.page.locator('.tab-button[data-tab="characters"]').click();
    admin.confirmNext(`Tombstone character "${wrenCharacter.name}"?`);
    await admin.page.locator(`[data-character-action="tombstone"][data-character-id="${wrenCharacter.id}"]`).click();
    await toast(`Character "${wrenCharacter.name}" tombstoned.`).waitFor();
    expect((await server.db('characters').where({ id: wrenCharacter.id }).first()).name).to.equal(`tombstone_${wrenCharacter.id}`);

    // Characters leaves it out (with its room from character_locations); Tombstones shows it.
    await visit('Characters', 'Character Dashboard');
    await admin.page.locator('td', { hasText: tamsinCharacter }).first().waitFor();
    const registry = await admin.page.locator('.dashboard-table-card').textContent();
    expect(registry).to.contain("lockkeepers_square").and.not.to.contain(wrenCharacter.name);
    await admin.page.locator('.axis-score-list, .axis-event-list').first().waitFor();
    await visit('Tombstones', 'Tombstone Dashboard');
    await admin.page.locator('td', { hasText: `tombstone_${wrenCharacter.id}` }).waitFor();

    // Sessions: Tamsin's playing session kicked by the row's session_id, which is its handle.
    await visit('Sessions', 'Sessions');
    const row = admin.page.locator('tr', { hasText: tamsinCharacter });
    const handle = (await row.locator('button[data-action="kick"]').getAttribute('data-session'))!;
    expect(handle).to.match(/^[1-9][0-9]*$/);
    tamsin.allow((_method, pathname, status) => status === 401 && (pathname.startsWith('/chat/') || pathname === '/command'));
    admin.confirmNext(`Kick session ${handle}?`);
    await row.locator('button[data-action="kick"]').click();
    await toast('Session kicked.').waitFor();
    expect((await server.get(`/status/${tokens.tamsin}`)).status).to.equal(401);
    await admin.page.locator('tr', { hasText: tamsinCharacter }).waitFor({ state: 'detached' });
    await playCommand(tamsin, 'look');
    await output(tamsin, 'Error: Invalid or expired session', '.output-error').waitFor();

    // Worlds: the bystander online in emberwick, kicked from there.
    await visit('Worlds', 'World Operations');
    const active = admin.page.locator('tr', { hasText: bystander.name });
    admin.confirmNext(`Kick "${bystander.name}" from the world?`);
    await active.getByRole('button', { name: 'Kick' }).click();
    await toast(`Disconnected 1 session(s) for ${bystander.name}.`).waitFor();
    expect((await server.get(`/status/${bystander.sessionId}`)).status).to.equal(401);

    await visit('Connections', 'Connections');
    await visit('Locations', 'Locations');
    await visit('Chat', 'Chat');
    await admin.page.locator('td', { hasText: 'Evening, all' }).waitFor();
    await visit('Tables', 'Database Browser');
    await admin.page.locator('tr[data-select-table="worlds"]').click();
    await admin.page.locator('.tables-data-cell', { hasText: 'hollow_spire' }).waitFor();
    await visit('Schema', 'Schema');
    await admin.page.locator('.relation-main', { hasText: 'sessions.user_id' }).filter({ hasText: 'users.id' }).waitFor();
    await visit('Controls', 'Superuser');
    await visit('Dashboard', 'Admin Overview');

    expect(await admin.page.locator('.error:not(:empty), .toast-error').count()).to.equal(0);
  }));

  it('no listing the admin client read shows a session token', async () => {
    const admin = clients[2];
    expect(admin, 'the admin client ran').to.not.equal(undefined);
    await admin!.settled();
    expect(admin!.listings.length).to.be.above(10);
    const everything = admin!.listings.join('\n');
    expect(everything).to.contain(`"session_id":"`);
    for (const [who, token] of Object.entries({ ...tokens, bystander: bystander.sessionId })) expect(everything.includes(token), who).to.equal(false);
  });
});
