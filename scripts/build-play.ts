/**
 * `npm run play`: builds the play client (web/) into public/play/, which the server serves at
 * /play: web/main.ts and what it imports (openapi-fetch included) bundled by esbuild into one
 * ES module, next to the files of web/static/. The output is committed, so `npm ci && npm
 * start` serves it with no build step; `npm run play:check` (the `--check` flag) writes
 * nothing and exits 1 when a committed file is stale, missing or left over. esbuild is pinned
 * to one version and given relative paths only, so the same sources give the same bytes.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const ROOT = path.join(import.meta.dirname, '..');
const STATIC_DIR = path.join(ROOT, 'web', 'static');
const PLAY_DIR = path.join(ROOT, 'public', 'play');
const BANNER = '// Built by scripts/build-play.ts from web/: edit those sources, then run `npm run play`.';

/** Every file of public/play/ by name, as the sources make it. */
async function buildPlay(): Promise<Map<string, Uint8Array>> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['web/main.ts'],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    charset: 'utf8',
    legalComments: 'eof',
    banner: { js: BANNER },
    outfile: 'play.js',
    write: false,
    logLevel: 'silent',
  });
  const files = new Map<string, Uint8Array>([['play.js', result.outputFiles[0]!.contents]]);
  for (const name of readdirSync(STATIC_DIR).sort()) files.set(name, readFileSync(path.join(STATIC_DIR, name)));
  return files;
}

async function main(): Promise<void> {
  const files = await buildPlay();
  const committed = existsSync(PLAY_DIR) ? readdirSync(PLAY_DIR).sort() : [];
  if (process.argv.includes('--check')) {
    const stale = [...files].filter(([name, bytes]) => !existsSync(path.join(PLAY_DIR, name)) || !readFileSync(path.join(PLAY_DIR, name)).equals(bytes)).map(([name]) => name);
    const extra = committed.filter((name) => !files.has(name));
    if (stale.length > 0 || extra.length > 0) {
      const problems = [...stale.map((name) => `${name} is stale or missing`), ...extra.map((name) => `${name} has no source`)];
      console.error(`public/play/ does not match web/ (${problems.join('; ')}): run \`npm run play\` and commit the result.`);
      process.exit(1);
    }
    console.log(`public/play/ is fresh (${files.size} files).`);
    return;
  }
  mkdirSync(PLAY_DIR, { recursive: true });
  for (const name of committed) if (!files.has(name)) rmSync(path.join(PLAY_DIR, name));
  for (const [name, bytes] of files) writeFileSync(path.join(PLAY_DIR, name), bytes);
  console.log(`Wrote ${[...files.keys()].map((name) => `public/play/${name}`).join(', ')}.`);
}

await main();
