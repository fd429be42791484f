/**
 * Populates a bench server with logged-in characters spread over the demo world, once per
 * server: guest registration, login and selection, then a few steps along a walk.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postJson } from './load.ts';

export interface BenchPlayer {
  sessionId: string;
  /** True for characters left at the world's spawn room. */
  atSpawn: boolean;
}

const PLAYERS = 200;
const PARALLEL = 10;
const PASSWORD = 'Quiet-Lantern-42';
/** From the spawn: each character takes the first `i % WALK.length` steps. */
const WALK = ['north', 'north', 'north', 'up', 'down', 'west', 'down'];
const populated = new Map<string, Promise<BenchPlayer[]>>();

/** Names are letters only; a per-run token keeps reruns on one database apart. */
function letters(n: number, width: number): string {
  let text = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / 26)) text = String.fromCharCode(97 + (n % 26)) + text;
  return text;
}

async function createPlayer(baseUrl: string, run: string, index: number): Promise<BenchPlayer> {
  const name = `Bench ${run}${letters(index, 3)}`;
  const reg = (await postJson(baseUrl, '/register-guest', { password: PASSWORD, password_confirm: PASSWORD, character_name: name })) as {
    username: string;
    character_id: number;
  };
  const login = (await postJson(baseUrl, '/login', { username: reg.username, password: PASSWORD })) as { session_id: string };
  await postJson(baseUrl, '/characters/select', { session_id: login.session_id, character_id: reg.character_id });
  const steps = index % (WALK.length + 1);
  for (const command of WALK.slice(0, steps)) await postJson(baseUrl, '/command', { session_id: login.session_id, command });
  return { sessionId: login.session_id, atSpawn: steps === 0 };
}

export function populate(baseUrl: string): Promise<BenchPlayer[]> {
  let players = populated.get(baseUrl);
  if (!players) {
    players = (async () => {
      process.stderr.write(`bench: creating ${PLAYERS} characters …\n`);
      const run = letters(randomBytes(4).readUInt32BE(), 4);
      const result: BenchPlayer[] = [];
      for (let start = 0; start < PLAYERS; start += PARALLEL) {
        const batch = Array.from({ length: Math.min(PARALLEL, PLAYERS - start) }, (_, i) => createPlayer(baseUrl, run, start + i));
        result.push(...(await Promise.all(batch)));
      }
      return result;
    })();
    populated.set(baseUrl, players);
  }
  return players;
}

/**
 * A temp copy of the shipped worlds with the demo world's axis engine switched on (it ships
 * off), for measuring chat with its per-interaction transaction. Returns the MUD_WORLDS_ROOT
 * to use and a function that removes the copy.
 */
export async function worldsWithAxisEngine(): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'mud-bench-worlds-'));
  await cp(path.resolve(import.meta.dirname, '..', 'worlds'), root, { recursive: true });
  const file = path.join(root, 'emberwick', 'world.json');
  const world = JSON.parse(await readFile(file, 'utf8'));
  world.axis_engine = { ...world.axis_engine, enabled: true };
  await writeFile(file, JSON.stringify(world, null, 2));
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}
