/**
 * Populates a bench server with logged-in characters spread over the demo world, once per
 * server: guest registration, login and selection, then a few steps along a walk. Each player
 * connects from an address of its own where the OS allows it, so a server with its
 * per-address limits on (the hot suite) sees 200 clients, not one client registering 200 times.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postJson } from './load.ts';

export interface BenchPlayer {
  sessionId: string;
  username: string;
  /** The player's client address, or undefined where only 127.0.0.1 can be used. */
  address: string | undefined;
  /** True for characters left at the world's spawn room. */
  atSpawn: boolean;
}

export const BENCH_PASSWORD = 'Quiet-Lantern-42';

const PLAYERS = 200;
const PARALLEL = 10;
/** From the spawn: each character takes the first `i % WALK.length` steps. */
const WALK = ['north', 'north', 'north', 'up', 'down', 'west', 'down'];
const populated = new Map<string, Promise<BenchPlayer[]>>();

/** Names are letters only; a per-run token keeps reruns on one database apart. */
function letters(n: number, width: number): string {
  let text = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / 26)) text = String.fromCharCode(97 + (n % 26)) + text;
  return text;
}

/** True when this machine routes 127.0.0.0/8 to loopback (Linux does; macOS has only 127.0.0.1). */
export function canUseLoopbackRange(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(0, '127.1.0.1', () => probe.close(() => resolve(true)));
  });
}

/** 127.1.x.y, one per player, avoiding .0 and .255. */
const playerAddress = (index: number): string => `127.1.${Math.floor(index / 250)}.${(index % 250) + 1}`;

async function createPlayer(baseUrl: string, run: string, index: number, address: string | undefined): Promise<BenchPlayer> {
  const post = (route: string, body: unknown): Promise<unknown> => postJson(baseUrl, route, body, { localAddress: address });
  const name = `Bench ${run}${letters(index, 3)}`;
  const reg = (await post('/register-guest', { password: BENCH_PASSWORD, password_confirm: BENCH_PASSWORD, character_name: name })) as {
    username: string;
    character_id: number;
  };
  const login = (await post('/login', { username: reg.username, password: BENCH_PASSWORD })) as { session_id: string };
  await post('/characters/select', { session_id: login.session_id, character_id: reg.character_id });
  const steps = index % (WALK.length + 1);
  for (const command of WALK.slice(0, steps)) await post('/command', { session_id: login.session_id, command });
  return { sessionId: login.session_id, username: reg.username, address, atSpawn: steps === 0 };
}

export function populate(baseUrl: string): Promise<BenchPlayer[]> {
  let players = populated.get(baseUrl);
  if (!players) {
    players = (async () => {
      process.stderr.write(`bench: creating ${PLAYERS} characters …\n`);
      const run = letters(randomBytes(4).readUInt32BE(), 4);
      const ownAddresses = await canUseLoopbackRange();
      const result: BenchPlayer[] = [];
      for (let start = 0; start < PLAYERS; start += PARALLEL) {
        const batch = Array.from({ length: Math.min(PARALLEL, PLAYERS - start) }, (_, i) =>
          createPlayer(baseUrl, run, start + i, ownAddresses ? playerAddress(start + i) : undefined),
        );
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
