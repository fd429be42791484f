/**
 * Headless Chromium for the play client's tests and screenshots: Debian's `chromium` package
 * (`.ci/run` installs it) driven by playwright-core, which downloads no browser of its own.
 * `MUD_CHROMIUM` names another binary.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Context } from 'mocha';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { needs } from '../helpers/needs.ts';

export const CHROMIUM = process.env.MUD_CHROMIUM ?? '/usr/bin/chromium';
const INSTALL = 'apt-get install chromium, or set MUD_CHROMIUM';

/** The browser, or undefined with the reason printed when there is none (for the scripts). */
export async function launchChromium(): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    console.log(`no Chromium at ${CHROMIUM} (${INSTALL})`);
    return undefined;
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/**
 * The browser for a test (in its `before` or `it`): without one the test is skipped, saying so,
 * and fails under CI (test/helpers/needs.ts), so the tests never go quietly missing there.
 */
export async function chromiumFor(ctx: Context): Promise<Browser> {
  needs(ctx, `Chromium at ${CHROMIUM}`, existsSync(CHROMIUM), INSTALL);
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 812 };

export interface PlayPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught errors and console errors (a CSP violation is one). */
  errors: string[];
  /** Texts of dialogs (alert, confirm) the page opened; none should ever open. */
  dialogs: string[];
}

/**
 * A fresh browser context (own storage) on `${baseUrl}/play`, recording errors and dialogs.
 * `init` runs in the page before its scripts (e.g. to take EventSource away); `timezoneId` is
 * the viewer's time zone.
 */
export async function openPlay(browser: Browser, baseUrl: string, viewport = DESKTOP, init?: string, timezoneId = 'UTC'): Promise<PlayPage> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1, locale: 'en-GB', timezoneId });
  const page = await context.newPage();
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !isExpectedNetworkError(message.text())) errors.push(message.text());
  });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  if (init) await page.addInitScript(init);
  await page.goto(`${baseUrl}/play`);
  return { page, context, errors, dialogs };
}

/** Logs in through the page and plays the character (a guest registered through the API). */
export async function enter({ page }: PlayPage, username: string, character: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Username' }).fill(username);
  await page.getByRole('textbox', { name: 'Password' }).fill(GOOD_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: `Play as ${character}` }).click();
  await page.locator('.connection[data-state="live"]').waitFor();
  await page.locator('#room-name').filter({ hasText: /\S/ }).waitFor();
}

/** Types a command into the page's command line and sends it. */
export async function typeCommand({ page }: PlayPage, command: string): Promise<void> {
  await page.locator('#command').fill(command);
  await page.locator('#command').press('Enter');
}

/** The page's log lines that show `text`. */
export function logLine({ page }: PlayPage, text: string | RegExp) {
  return page.locator('.log li').filter({ hasText: text });
}

/** axe-core's engine, injected into the page by the tests themselves (no CDN, no inline script tag the page's CSP would refuse). */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * What axe-core finds wrong on the page as it is now (every rule of its default set), one line
 * per violated rule with the elements it found; `within` narrows the check to an element (a
 * dialog). Evaluated through the browser's protocol, which the page's CSP does not apply to.
 */
export async function accessibilityViolations({ page }: PlayPage, within?: string): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE);
  const context = within === undefined ? 'document' : `document.querySelector(${JSON.stringify(within)})`;
  const found = (await page.evaluate(
    `axe.run(${context}, { resultTypes: ['violations'] }).then((r) => JSON.stringify(r.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }))))`,
  )) as string;
  return (JSON.parse(found) as Array<{ id: string; help: string; nodes: string[] }>).map((v) => `${v.id}: ${v.help} (${v.nodes.join('; ')})`);
}

/** Failed requests while a test stops the server, and answers the page handles (401 after a kick). */
function isExpectedNetworkError(text: string): boolean {
  return /Failed to load resource|net::ERR_|EventSource/.test(text);
}
