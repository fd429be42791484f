/**
 * `node scripts/reference-shells.ts <reference-client folder> <output folder>`: pre-renders the
 * two HTML shells of the reference server's web clients for a front server (README, "Keeping
 * the reference's web clients"; deploy/nginx/reference-clients.conf serves them):
 *
 * - `admin.html`, the admin client's shell, from `templates/admin_shell.html`;
 * - `play.html`, the play client's shell without a world (`/play`), from `templates/play_shell.html`;
 * - `play-world.html`, the same shell for `/play/<world_id>`: the world id is left to nginx's SSI
 *   (`<!--# echo var="world_id" -->`, HTML-escaped by nginx), so one file serves every world.
 *
 * The templates are Jinja2; only what they use is understood (`{{ name }}`, and `{% if name %}`
 * … `{% endif %}`), and anything else stops the script naming it, so a newer client that needs
 * more is noticed rather than served half-rendered. `asset_version`, the clients' cache-busting
 * token, is a digest of the client's `static/` files, so it changes exactly when they do;
 * `app_version`, shown in the admin header, is this server's version. Nothing of the client is
 * copied: the static files are served from the client's own folder.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { VERSION } from '../src/version.ts';

type Value = { text: string } | { html: string };

/** What nginx puts in place of `{{ world_id }}` for `/play/<world_id>`: the captured id, entity-encoded. */
export const SSI_WORLD_ID = '<!--# echo var="world_id" -->';

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');

/** Renders the Jinja2 subset above; `values` names every variable the template may use (a truthy `if` needs a non-empty one). */
export function renderTemplate(template: string, values: Readonly<Record<string, Value>>, name: string): string {
  const token = /\{\{\s*(\w+)\s*\}\}|\{%-?\s*if\s+(\w+)\s*-?%\}|\{%-?\s*endif\s*-?%\}|\{[{%#]/g;
  const open: boolean[] = [];
  let out = '';
  let at = 0;
  const lineOf = (index: number): number => template.slice(0, index).split('\n').length;
  const value = (variable: string, index: number): Value => {
    const found = values[variable];
    if (found === undefined) throw new Error(`${name}:${lineOf(index)}: unknown variable '${variable}'`);
    return found;
  };
  for (let m = token.exec(template); m !== null; m = token.exec(template)) {
    const shown = open.every(Boolean);
    if (shown) out += template.slice(at, m.index);
    at = m.index + m[0].length;
    if (m[1] !== undefined) {
      const v = value(m[1], m.index);
      if (shown) out += 'html' in v ? v.html : escapeHtml(v.text);
    } else if (m[2] !== undefined) {
      const v = value(m[2], m.index);
      open.push('html' in v ? v.html !== '' : v.text !== '');
    } else if (/^\{%-?\s*endif/.test(m[0])) {
      if (open.pop() === undefined) throw new Error(`${name}:${lineOf(m.index)}: endif without if`);
    } else {
      throw new Error(`${name}:${lineOf(m.index)}: template syntax this renderer does not know: ${template.slice(m.index, m.index + 40).split('\n')[0]}`);
    }
  }
  if (open.length > 0) throw new Error(`${name}: an if is not closed`);
  return out + template.slice(at);
}

/** A digest of every file under `dir` (names and contents, in name order). */
function digestOf(dir: string): string {
  const hash = createHash('sha256');
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(`${path.relative(dir, full)}\n`).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

/** Writes the three shells into `outDir` and returns their paths. */
export function renderShells(clientDir: string, outDir: string): string[] {
  const template = (file: string): string => readFileSync(path.join(clientDir, 'templates', file), 'utf8');
  const asset = { text: digestOf(path.join(clientDir, 'static')) };
  const play = template('play_shell.html');
  const shells: Array<[string, string]> = [
    ['admin.html', renderTemplate(template('admin_shell.html'), { asset_version: asset, app_version: { text: VERSION } }, 'admin_shell.html')],
    ['play.html', renderTemplate(play, { asset_version: asset, world_id: { text: '' } }, 'play_shell.html')],
    ['play-world.html', renderTemplate(play, { asset_version: asset, world_id: { html: SSI_WORLD_ID } }, 'play_shell.html')],
  ];
  mkdirSync(outDir, { recursive: true });
  return shells.map(([file, html]) => {
    const target = path.join(outDir, file);
    writeFileSync(target, html);
    return target;
  });
}

if (import.meta.main) {
  const [clientDir, outDir] = process.argv.slice(2);
  if (!clientDir || !outDir) {
    console.error('usage: node scripts/reference-shells.ts <reference-client folder> <output folder>');
    process.exit(2);
  }
  try {
    for (const file of renderShells(path.resolve(clientDir), path.resolve(outDir))) console.log(`wrote ${file}`);
  } catch (err) {
    console.error(`reference-shells: ${(err as Error).message}`);
    process.exit(1);
  }
}
