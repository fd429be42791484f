/**
 * The `hostile` suite (BENCH_SUITE=hostile): builders' scripts cannot slow or stop a world
 * (docs/decisions.md, "Scripts"). A fresh server as shipped (rate limits on, info logs to a file,
 * metrics open) serves two package worlds this suite writes: `victim`, whose one NPC counts in its
 * `state` on a 1 s timer, and `arena`, where a builder (a worldbuilder account) builds each repro
 * through the building API and players trigger its hooks over POST /command. Throughout, this
 * process polls GET /health at 50/s (open loop) and reads the victim's count from `script_state`
 * every 100 ms. One at a time, each repro runs BENCH_HOSTILE_SECONDS (default 20):
 *  - baseline: the victim alone;
 *  - fan-out: a room echoing 20 lines to every say and an NPC answering every line alike, one say a second;
 *  - crowd: 600 NPCs whose onSay is busy about 3 ms, in one room, 5 says a second;
 *  - save storm: a deeply nested script (3,000 functions) and a legitimate 30 KB one saved in
 *    turn, one after another, build limit raised (100,000 a minute) and then as shipped (429s
 *    counted, Retry-After honoured);
 *  - long timers: `every(2592000)` and `every(1e300)` in onLoad, saved again every 2 s;
 *  - scripted exits: 10 NPCs opening and closing an exit on a 1 s timer;
 *  - slow loader: 150 NPCs whose onLoad is busy 40 ms, loaded by stopping and starting the server
 *    on the same database (measured from the restarted server's first healthy answer; the save
 *    storm as shipped runs after it, on that server).
 * Reported per repro: /health p50/p99 and p99 over the bare Express hello's p99 (bench/hello-server.ts,
 * same Node and core, same rate, measured in the same round), the victim's firings per second and
 * its worst gap (from the start, between firings, to the end), server CPU and RSS, failed script
 * runs by outcome (/metrics) and the rows of script_errors, chat_messages and world_changes written.
 * Bounds (checked on the medians over BENCH_ROUNDS rounds, default 3): /health p99 < 100 ms, worst
 * gap ≤ 2.5 s, RSS ≤ 2× its level before the repro's setup; in every round: no save answered 500
 * (the legitimate one 200 or 429), both long timers recorded as errors and none kept.
 * BENCH_HOSTILE_REPROS (comma-separated keys) runs some only. Each round gets a fresh SQLite file
 * or, with BENCH_DATABASE_URL, a fresh database on that PostgreSQL server. The server is pinned to
 * core 0 and this process to core 1 where taskset exists.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../src/db/database.ts';
import { positiveNumberEnv } from './env.ts';
import { openLoop, percentile, round, sleep, type OpenLoopResult, type RequestSpec } from './load.ts';
import { markdownTable } from './markdown.ts';
import { scriptTotals, seedPlayers } from './players.ts';
import { CLIENT_CORE, cpuMs, hasTaskset, newDatabase, pinSelf, restoreAffinity, rssKb, SERVER_CORE, startBenchServer, startHelloServer, type BenchServer } from './server-process.ts';

const ARENA = 'arena';
const VICTIM = 'victim';
const VICTIM_OWNER = 'npc:ticker';
const HEALTH_RATE = 50;
const HELLO_SECONDS = 10;
const VICTIM_POLL_MS = 100;
const RSS_SAMPLE_MS = 250;
const SETUP_CONCURRENCY = 8;
const RAISED_BUILD_LIMIT = '100000';
const TARGET_HEALTH_P99_MS = 100;
const TARGET_GAP_S = 2.5;
const TARGET_RSS_FACTOR = 2;

const VICTIM_SCRIPT = 'function onLoad(){ every(1, "tick"); }\nfunction tick(){ state.n = (state.n||0)+1; }\n';
const FANOUT_ROOM_SCRIPT = 'function onSay(actor, t) { for (let i = 0; i < 20; i++) room.echo("echo " + i + " " + t.slice(0, 40)); }';
const FANOUT_NPC_SCRIPT = FANOUT_ROOM_SCRIPT.replace('room.echo', 'self.say');
const CROWD_SCRIPT = 'function onSay(actor, t) { const until = Date.now() + 3; while (Date.now() < until) {} }';
const DEEP_SCRIPT = 'function a(){'.repeat(3000) + '}'.repeat(3000);
/** A builder's ordinary large script: a 30 KB table of answers. */
const LEGIT_SCRIPT = (() => {
  const entries: string[] = [];
  let size = 0;
  for (let i = 0; size < 30_000; i++) {
    const line = `  word${i}: "Answer ${i}: the ferry leaves at dawn, the toll is a penny and the ferryman is deaf.",`;
    entries.push(line);
    size += line.length + 1;
  }
  return `const answers = {\n${entries.join('\n')}\n};\nfunction onSay(actor, text) { const a = answers[text.trim()]; if (a) self.say(a); }\n`;
})();
const MONTHLY_SCRIPT = 'function onLoad(){ every(2592000, "monthly"); }\nfunction monthly(){}';
const NEVER_SCRIPT = 'function onLoad(){ every(1e300, "never"); }\nfunction never(){}';
const SLOW_LOAD_SCRIPT = 'function onLoad(){ const until = Date.now() + 40; while (Date.now() < until) {} state.loads = (state.loads||0)+1; state.at = Date.now(); }';
const EXIT_SCRIPT = 'function onLoad(){ every(1, "flip"); }\nfunction flip(){ if (state.open) room.closeExit("north"); else room.openExit("north", "yard"); state.open = !state.open; }';

const HEALTH: RequestSpec = { method: 'GET', path: '/health' };
const HELLO: RequestSpec = { method: 'GET', path: '/' };

const log = (message: string): void => {
  process.stderr.write(`bench: hostile: ${message}\n`);
};

type BuildLimit = 'raised' | 'shipped';

/** One round's server and what the repros build with. */
interface Ctx {
  server: BenchServer;
  databaseUrl: string | undefined;
  sqlitePath: string | undefined;
  worldsRoot: string;
  buildLimit: BuildLimit;
  builder: string;
  db: Knex;
  agent: http.Agent;
  serverLog: string[];
}

interface Finished {
  notes: Record<string, number>;
  /** Broken bounds of this round (correctness; the numeric bounds are checked on the medians). */
  failures: string[];
}

interface Running {
  /** What runs while measured, until `until` settles. */
  drive?(ctx: Ctx, until: Promise<void>): Promise<void>;
  /** After the measurement: the repro's own figures and broken bounds. */
  finish?(ctx: Ctx): Promise<Finished>;
  /** Undoes what would disturb the next repros (not measured). */
  cleanup?(ctx: Ctx): Promise<void>;
}

interface Repro {
  key: string;
  title: string;
  /** The build limit the measurement runs under. */
  buildLimit: BuildLimit;
  /** Stop and start the server on the same database between the setup and the measurement. */
  restart?: boolean;
  prepare(ctx: Ctx): Promise<Running>;
}

interface ApiAnswer {
  status: number;
  body: any;
  retryAfter: number | null;
}

async function api(ctx: Ctx, method: string, route: string, body?: unknown, headers: Record<string, string> = {}, token = ctx.builder): Promise<ApiAnswer> {
  const res = await fetch(new URL(`/api/worlds/${ARENA}${route}`, ctx.server.url), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: kept as text.
  }
  const retry = Number(res.headers.get('retry-after'));
  return { status: res.status, body: parsed, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null };
}

/** A setup call that must succeed. */
async function build(ctx: Ctx, method: string, route: string, body?: unknown, headers?: Record<string, string>, token = ctx.builder): Promise<any> {
  const answer = await api(ctx, method, route, body, headers, token);
  if (answer.status < 200 || answer.status > 299) throw new Error(`${method} ${route} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`);
  return answer.body;
}

let rooms = 0;
async function newRoom(ctx: Ctx, name: string, script?: string): Promise<string> {
  const made = await build(ctx, 'POST', '/rooms', { name: `${name} ${++rooms}`, description: 'Built by the hostile bench.' });
  if (script) await build(ctx, 'PATCH', `/rooms/${made.id}`, { version: made.version, script });
  return made.id as string;
}

/** NPCs `ids` in `roomId`, each with `script`, a few at a time. */
async function newNpcs(ctx: Ctx, ids: string[], roomId: string, script: string): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++]!;
      await build(ctx, 'POST', '/npcs', { id, name: id.replace(/_/g, ' '), description: 'A bench NPC.', room_id: roomId, script });
    }
  };
  await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, worker));
}

/** A session of a new account whose character stands in `roomId` of the arena. */
async function newAccount(ctx: Ctx, roomId: string, role: 'player' | 'worldbuilder'): Promise<string> {
  const [player] = await seedPlayers(ctx.server, ctx.databaseUrl, [[0, 0]], { worldId: ARENA, roomId, role });
  return player!.token;
}

/** `command` from the session at `rate` per second until `until`; its answers. */
function commands(ctx: Ctx, token: string, command: string, rate: number, until: Promise<void>): Promise<OpenLoopResult> {
  const spec: RequestSpec = { method: 'POST', path: '/command', body: { command }, headers: { authorization: `Bearer ${token}` } };
  return openLoop(ctx.server.url, ctx.agent, () => spec, rate, until);
}

const commandNotes = (r: OpenLoopResult): Record<string, number> => ({ 'command p99 ms': r.latencyP99Ms, 'commands non-2xx': r.non2xx, 'command errors': r.errors });

const REPROS: Repro[] = [
  { key: 'baseline', title: 'baseline (victim alone)', buildLimit: 'raised', prepare: async () => ({}) },
  {
    key: 'fanout',
    title: '1. fan-out: 20 echoes + an NPC answering each, 1 say/s',
    buildLimit: 'raised',
    async prepare(ctx) {
      const roomId = await newRoom(ctx, 'Echo Hall', FANOUT_ROOM_SCRIPT);
      await newNpcs(ctx, [`answering_stone_${rooms}`], roomId, FANOUT_NPC_SCRIPT);
      const token = await newAccount(ctx, roomId, 'player');
      let said: OpenLoopResult | undefined;
      return {
        drive: async (c, until) => void (said = await commands(c, token, 'say ping', 1, until)),
        finish: async () => ({ notes: commandNotes(said!), failures: [] }),
      };
    },
  },
  {
    key: 'crowd',
    title: '2. crowd: 600 NPCs busy 3 ms on onSay, 5 says/s',
    buildLimit: 'raised',
    async prepare(ctx) {
      const roomId = await newRoom(ctx, 'Crowded Square');
      await newNpcs(ctx, Array.from({ length: 600 }, (_, i) => `crowd_${rooms}_${i}`), roomId, CROWD_SCRIPT);
      const token = await newAccount(ctx, roomId, 'player');
      let said: OpenLoopResult | undefined;
      return {
        drive: async (c, until) => void (said = await commands(c, token, 'say hello crowd', 5, until)),
        finish: async () => ({ notes: commandNotes(said!), failures: [] }),
      };
    },
  },
  saveStorm('storm', '3. save storm, build limit raised', 'raised'),
  {
    key: 'timers',
    title: '4. long timers: every(2592000) and every(1e300)',
    buildLimit: 'raised',
    async prepare(ctx) {
      const roomId = await newRoom(ctx, 'Clock Room');
      const owners = { [`monthly_timer_${rooms}`]: MONTHLY_SCRIPT, [`never_timer_${rooms}`]: NEVER_SCRIPT };
      for (const [id, script] of Object.entries(owners)) await newNpcs(ctx, [id], roomId, script);
      const saves: Record<string, number> = {};
      return {
        // Saved again every 2 s: each save runs onLoad again.
        async drive(c, until) {
          let stopped = false;
          void until.then(() => (stopped = true));
          while (!stopped) {
            for (const [id, script] of Object.entries(owners)) {
              const status = (await api(c, 'PATCH', `/npcs/${id}`, { script }, { 'if-match': '*' })).status;
              saves[`saves ${status}`] = (saves[`saves ${status}`] ?? 0) + 1;
            }
            await Promise.race([sleep(2000), until]);
          }
        },
        async finish(c) {
          const failures: string[] = [];
          const notes: Record<string, number> = { ...saves };
          for (const id of Object.keys(owners)) {
            const errors = await api(c, 'GET', `/script-errors?owner=npc:${id}`);
            const count = (errors.body?.errors as unknown[] | undefined)?.length ?? 0;
            notes[`${id.replace(/_\d+$/, '')} errors`] = count;
            if (count === 0) failures.push(`${id.replace(/_\d+$/, '')}: no script error recorded`);
            const kept = await c.db('script_timers').where({ world_id: ARENA, owner: `npc:${id}` }).count({ n: '*' }).first();
            if (Number(kept?.n ?? 0) > 0) failures.push(`${id.replace(/_\d+$/, '')}: a timer was kept`);
          }
          return { notes, failures };
        },
      };
    },
  },
  {
    key: 'exits',
    title: '6. scripted exits: 10 NPCs flipping an exit each second',
    buildLimit: 'raised',
    async prepare(ctx) {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const roomId = await newRoom(ctx, 'Gatehouse');
        const id = `gatekeeper_${rooms}`;
        await newNpcs(ctx, [id], roomId, EXIT_SCRIPT);
        ids.push(id);
      }
      return {
        async cleanup(c) {
          for (const id of ids) await build(c, 'DELETE', `/npcs/${id}`, undefined, { 'if-match': '*' });
        },
      };
    },
  },
  {
    key: 'slow',
    title: '5. slow loader: 150 onLoads busy 40 ms, after a restart',
    buildLimit: 'shipped',
    restart: true,
    async prepare(ctx) {
      const roomId = await newRoom(ctx, 'Waiting Room');
      const ids = Array.from({ length: 150 }, (_, i) => `slow_${rooms}_${i}`);
      await newNpcs(ctx, ids, roomId, SLOW_LOAD_SCRIPT);
      const loadedAt = async (db: Knex): Promise<number[]> => {
        const rows = (await db('script_state').where({ world_id: ARENA }).whereIn('owner', ids.map((id) => `npc:${id}`)).select('state')) as Array<{ state: string }>;
        return rows.map((r) => (JSON.parse(r.state) as { at?: number }).at ?? 0);
      };
      // Each NPC's onLoad ran once as it was made, before the restart: what runs after it is the world's start.
      const deadline = performance.now() + 60_000;
      while ((await loadedAt(ctx.db)).filter((at) => at > 0).length < ids.length) {
        if (performance.now() > deadline) throw new Error('the slow loaders did not all load once within 60 s of being made');
        await sleep(200);
      }
      const restartedAfter = Date.now();
      return {
        async finish(c) {
          const again = (await loadedAt(c.db)).filter((at) => at > restartedAfter).length;
          return { notes: { 'onLoads run again after the restart': again }, failures: again < ids.length ? [`only ${again} of ${ids.length} onLoads ran after the restart`] : [] };
        },
      };
    },
  },
  saveStorm('storm429', '3. save storm, build limit as shipped', 'shipped'),
];

/** Repro 3: the deep script and the legitimate 30 KB one saved in turn, one after another, by a builder of its own. */
function saveStorm(key: string, title: string, buildLimit: BuildLimit): Repro {
  return {
    key,
    title,
    buildLimit,
    async prepare(ctx) {
      // An account of its own, for its setup too: the shipped limit counts per account (across
      // restarts), and the other repros' setups spent the first builder's.
      const token = await newAccount(ctx, 'hall', 'worldbuilder');
      const roomId = (await build(ctx, 'POST', '/rooms', { name: `Scriptorium ${++rooms}`, description: 'Built by the hostile bench.' }, undefined, token)).id as string;
      const id = `scribe_${rooms}`;
      await build(ctx, 'POST', '/npcs', { id, name: 'scribe', description: 'A bench NPC.', room_id: roomId, script: 'function onSay(actor, text) {}' }, undefined, token);
      const statuses = { legit: {} as Record<string, number>, deep: {} as Record<string, number> };
      return {
        async drive(c, until) {
          let stopped = false;
          void until.then(() => (stopped = true));
          for (let i = 0; !stopped; i++) {
            const kind = i % 2 === 0 ? 'deep' : 'legit';
            const answer = await api(c, 'PATCH', `/npcs/${id}`, { script: kind === 'deep' ? DEEP_SCRIPT : LEGIT_SCRIPT }, { 'if-match': '*' }, token);
            statuses[kind][answer.status] = (statuses[kind][answer.status] ?? 0) + 1;
            // As fast as the limit lets: a refused save waits as long as the server asks.
            if (answer.status === 429) await Promise.race([sleep((answer.retryAfter ?? 1) * 1000), until]);
          }
        },
        async finish() {
          const notes: Record<string, number> = {};
          for (const [kind, byStatus] of Object.entries(statuses)) for (const [status, n] of Object.entries(byStatus)) notes[`${kind} ${status}`] = n;
          const failures: string[] = [];
          const legitOther = Object.keys(statuses.legit).filter((s) => s !== '200' && s !== '429');
          if (legitOther.length > 0) failures.push(`legitimate save answered ${legitOther.join(', ')}`);
          if (statuses.deep['500']) failures.push(`deep script save answered 500 (${statuses.deep['500']}×)`);
          return { notes, failures };
        },
      };
    },
  };
}

/** The package worlds: the victim's one ticking NPC, and the arena's hall and yard where the repros are built. */
async function writeWorlds(): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'mud-bench-hostile-'));
  const world = async (id: string, name: string, rooms: Array<{ id: string; name: string }>, npcs: Array<{ id: string; name: string; room: string; script: string; source: string }>): Promise<void> => {
    const dir = path.join(root, id);
    await mkdir(path.join(dir, 'zones'), { recursive: true });
    await mkdir(path.join(dir, 'scripts'));
    for (const npc of npcs) await writeFile(path.join(dir, npc.script), npc.source);
    await writeFile(
      path.join(dir, 'world.json'),
      JSON.stringify({ name, description: `The hostile bench's ${id}.`, default_spawn: { zone: id, room: rooms[0]!.id }, zones: [id], character_policy: { access_mode: 'open', naming_mode: 'generated', slot_limit_per_account: 10 } }),
    );
    await writeFile(
      path.join(dir, 'zones', `${id}.json`),
      JSON.stringify({
        id,
        name,
        description: `The ${id}.`,
        spawn_room: rooms[0]!.id,
        rooms: rooms.map((r) => ({ ...r, description: 'Bare boards.', exits: {}, items: [] })),
        items: [],
        npcs: npcs.map(({ id: npcId, name: npcName, room, script }) => ({ id: npcId, name: npcName, description: 'It keeps time.', room, script })),
      }),
    );
  };
  await world(VICTIM, 'Victim', [{ id: 'clock_room', name: 'Clock Room' }], [{ id: 'ticker', name: 'Ticker', room: 'clock_room', script: 'scripts/ticker.js', source: VICTIM_SCRIPT }]);
  await world(ARENA, 'Arena', [{ id: 'hall', name: 'Hall' }, { id: 'yard', name: 'Yard' }], []);
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

function startServer(databaseUrl: string | undefined, sqlitePath: string | undefined, worldsRoot: string, limit: BuildLimit): Promise<BenchServer> {
  return startBenchServer(
    databaseUrl,
    {
      MUD_WORLDS_ROOT: worldsRoot,
      MUD_DEFAULT_WORLD_ID: ARENA,
      // Failed runs by outcome come from /metrics.
      MUD_METRICS_MODE: 'open',
      ...(limit === 'raised' ? { MUD_RATE_LIMIT_BUILD_PER_ACCOUNT: RAISED_BUILD_LIMIT } : {}),
    },
    { cpuCore: hasTaskset() ? SERVER_CORE : undefined, asShipped: true, sqlitePath },
  );
}

async function restart(ctx: Ctx, limit: BuildLimit): Promise<void> {
  log(`restarting the server on the same database (build limit ${limit})`);
  await ctx.server.stop();
  ctx.serverLog.push(...ctx.server.logLines);
  ctx.server = await startServer(ctx.databaseUrl, ctx.sqlitePath, ctx.worldsRoot, limit);
  ctx.buildLimit = limit;
}

async function victimCount(db: Knex): Promise<number> {
  const row = (await db('script_state').where({ world_id: VICTIM, owner: VICTIM_OWNER }).first('state')) as { state: string } | undefined;
  return row ? ((JSON.parse(row.state) as { n?: number }).n ?? 0) : 0;
}

/** The victim's firings per second until `until`, and its worst gap: from the start to the first firing seen, between firings, from the last to the end. */
async function watchVictim(db: Knex, until: Promise<void>): Promise<{ firingsPerSecond: number; worstGapS: number }> {
  let stopped = false;
  void until.then(() => (stopped = true));
  const start = performance.now();
  const first = await victimCount(db);
  let last = first;
  let lastAt = start;
  let worst = 0;
  while (!stopped) {
    await sleep(VICTIM_POLL_MS);
    const n = await victimCount(db).catch(() => last);
    if (n !== last) {
      const now = performance.now();
      worst = Math.max(worst, now - lastAt);
      last = n;
      lastAt = now;
    }
  }
  const end = performance.now();
  worst = Math.max(worst, end - lastAt);
  return { firingsPerSecond: round((last - first) / ((end - start) / 1000), 2), worstGapS: round(worst / 1000, 2) };
}

async function maxRssKb(pid: number, until: Promise<void>): Promise<number> {
  let stopped = false;
  void until.then(() => (stopped = true));
  let max = rssKb(pid);
  while (!stopped) {
    await sleep(RSS_SAMPLE_MS);
    max = Math.max(max, rssKb(pid));
  }
  return max;
}

const TABLES = ['chat_messages', 'world_changes', 'script_errors'] as const;
/** Rows written since, as ids (the tables are pruned, so counts would undercount). */
async function maxIds(db: Knex): Promise<Record<(typeof TABLES)[number], number>> {
  const ids = {} as Record<(typeof TABLES)[number], number>;
  for (const table of TABLES) ids[table] = Number((await db(table).max({ m: 'id' }).first())?.m ?? 0);
  return ids;
}

/** script_errors rows after `afterId`, by kind. */
async function errorsSince(db: Knex, afterId: number): Promise<Record<string, number>> {
  const rows = (await db('script_errors').where('id', '>', afterId).groupBy('world_id', 'kind').select('world_id', 'kind').count({ n: '*' })) as Array<{ world_id: string; kind: string; n: number | string }>;
  return Object.fromEntries(rows.map((r) => [`${r.world_id === VICTIM ? 'victim:' : ''}${r.kind}`, Number(r.n)]));
}

export interface HostileSample {
  healthP50Ms: number;
  healthP99Ms: number;
  healthMaxMs: number;
  healthErrors: number;
  healthNon2xx: number;
  /** /health p99 over the round's bare hello p99. */
  ratioToHelloP99: number;
  firingsPerSecond: number;
  worstGapS: number;
  serverCpuPercent: number;
  rssBeforeMb: number;
  rssMaxMb: number;
  /** Script runs that did not end ok, by outcome (the error kind, or budget, shed, changed). */
  failedRuns: Record<string, number>;
  /** Rows of script_errors written, by kind (a victim's prefixed `victim:`); the newest 200 a world are kept, so past that they undercount. */
  errorsByKind: Record<string, number>;
  chatRows: number;
  worldChangeRows: number;
  notes: Record<string, number>;
  failures: string[];
}

async function measure(ctx: Ctx, repro: Repro, seconds: number, helloP99: number): Promise<HostileSample> {
  if (!repro.restart && repro.buildLimit !== ctx.buildLimit) await restart(ctx, repro.buildLimit);
  const rssBefore = rssKb(ctx.server.pid);
  log(`${repro.key}: setting up`);
  const running = await repro.prepare(ctx);
  if (repro.restart) await restart(ctx, repro.buildLimit);
  const { server, db } = ctx;
  const baseUrl = new URL(server.url);
  const before = { cpu: cpuMs(server.pid), scripts: await scriptTotals(baseUrl), ids: await maxIds(db), at: performance.now() };
  log(`${repro.key}: ${seconds} s measured`);
  const until = sleep(seconds * 1000);
  const victim = watchVictim(db, until);
  const rss = maxRssKb(server.pid, until);
  const health = openLoop(server.url, ctx.agent, () => HEALTH, HEALTH_RATE, until);
  const driving = running.drive?.(ctx, until);
  await until;
  const cpu = cpuMs(server.pid) - before.cpu;
  const wallMs = performance.now() - before.at;
  const [healthResult, victimResult, rssMax] = await Promise.all([health, victim, rss, driving]);
  const scripts = await scriptTotals(baseUrl);
  const ids = await maxIds(db);
  const finished = (await running.finish?.(ctx)) ?? { notes: {}, failures: [] };
  await running.cleanup?.(ctx);
  const failedRuns: Record<string, number> = {};
  for (const [outcome, n] of Object.entries(scripts.byOutcome)) {
    const delta = n - (before.scripts.byOutcome[outcome] ?? 0);
    if (outcome !== 'ok' && delta > 0) failedRuns[outcome] = delta;
  }
  const sample: HostileSample = {
    healthP50Ms: healthResult.latencyP50Ms,
    healthP99Ms: healthResult.latencyP99Ms,
    healthMaxMs: healthResult.latencyMaxMs,
    healthErrors: healthResult.errors,
    healthNon2xx: healthResult.non2xx,
    ratioToHelloP99: round(healthResult.latencyP99Ms / helloP99, 1),
    firingsPerSecond: victimResult.firingsPerSecond,
    worstGapS: victimResult.worstGapS,
    serverCpuPercent: round((cpu / wallMs) * 100, 1),
    rssBeforeMb: round(rssBefore / 1024, 1),
    rssMaxMb: round(rssMax / 1024, 1),
    failedRuns,
    errorsByKind: await errorsSince(db, before.ids.script_errors),
    chatRows: ids.chat_messages - before.ids.chat_messages,
    worldChangeRows: ids.world_changes - before.ids.world_changes,
    notes: finished.notes,
    failures: finished.failures,
  };
  log(
    `${repro.key}: /health p50 ${sample.healthP50Ms} / p99 ${sample.healthP99Ms} ms (${sample.ratioToHelloP99}× hello), victim ${sample.firingsPerSecond}/s, worst gap ${sample.worstGapS} s, ` +
      `CPU ${sample.serverCpuPercent}%, RSS ${sample.rssBeforeMb} → ${sample.rssMaxMb} MB, failed runs ${JSON.stringify(failedRuns)}, errors ${JSON.stringify(sample.errorsByKind)}, rows chat ${sample.chatRows} / changes ${sample.worldChangeRows}` +
      `${Object.keys(sample.notes).length > 0 ? `, ${JSON.stringify(sample.notes)}` : ''}${sample.failures.length > 0 ? `; BROKEN: ${sample.failures.join('; ')}` : ''}`,
  );
  return sample;
}

export interface HostileRow {
  key: string;
  title: string;
  /** Medians over the rounds. */
  median: Omit<HostileSample, 'failures'>;
  /** Bounds broken: by the medians, or in any round for the correctness checks. */
  failures: string[];
  rounds: HostileSample[];
}

export interface HostileResult {
  database: 'sqlite' | 'postgresql';
  node: string;
  pinned: boolean;
  seconds: number;
  rounds: number;
  healthRate: number;
  helloP99Ms: number;
  bounds: { healthP99Ms: number; worstGapS: number; rssFactor: number };
  rows: HostileRow[];
  /** Every broken bound, named by its repro. */
  failures: string[];
  serverLogLines: number;
}

const median = (values: number[]): number => percentile([...values].sort((a, b) => a - b), 50);

function medianOf(samples: HostileSample[]): Omit<HostileSample, 'failures'> {
  const num = (pick: (s: HostileSample) => number): number => round(median(samples.map(pick)), 2);
  const keyed = (pick: (s: HostileSample) => Record<string, number>): Record<string, number> => {
    const keys = new Set(samples.flatMap((s) => Object.keys(pick(s))));
    return Object.fromEntries([...keys].sort().map((k) => [k, num((s) => pick(s)[k] ?? 0)]));
  };
  return {
    healthP50Ms: num((s) => s.healthP50Ms),
    healthP99Ms: num((s) => s.healthP99Ms),
    healthMaxMs: num((s) => s.healthMaxMs),
    healthErrors: num((s) => s.healthErrors),
    healthNon2xx: num((s) => s.healthNon2xx),
    ratioToHelloP99: num((s) => s.ratioToHelloP99),
    firingsPerSecond: num((s) => s.firingsPerSecond),
    worstGapS: num((s) => s.worstGapS),
    serverCpuPercent: num((s) => s.serverCpuPercent),
    rssBeforeMb: num((s) => s.rssBeforeMb),
    rssMaxMb: num((s) => s.rssMaxMb),
    failedRuns: keyed((s) => s.failedRuns),
    errorsByKind: keyed((s) => s.errorsByKind),
    chatRows: num((s) => s.chatRows),
    worldChangeRows: num((s) => s.worldChangeRows),
    notes: keyed((s) => s.notes),
  };
}

function boundsBroken(m: Omit<HostileSample, 'failures'>): string[] {
  const broken: string[] = [];
  if (m.healthP99Ms >= TARGET_HEALTH_P99_MS) broken.push(`/health p99 ${m.healthP99Ms} ms ≥ ${TARGET_HEALTH_P99_MS} ms`);
  if (m.worstGapS > TARGET_GAP_S) broken.push(`victim timer's worst gap ${m.worstGapS} s > ${TARGET_GAP_S} s`);
  if (m.rssMaxMb > TARGET_RSS_FACTOR * m.rssBeforeMb) broken.push(`RSS ${m.rssMaxMb} MB > ${TARGET_RSS_FACTOR}× ${m.rssBeforeMb} MB`);
  if (m.healthErrors > 0) broken.push(`${m.healthErrors} /health requests failed`);
  return broken;
}

export async function runHostileSuite(databaseUrl: string | undefined): Promise<{ result: HostileResult; serverLog: string[] }> {
  const seconds = positiveNumberEnv('BENCH_HOSTILE_SECONDS', 20, false);
  const roundsWanted = positiveNumberEnv('BENCH_ROUNDS', 3, true);
  const only = process.env.BENCH_HOSTILE_REPROS?.split(',').map((k) => k.trim()).filter(Boolean);
  const repros = only ? REPROS.filter((r) => only.includes(r.key)) : REPROS;
  if (repros.length === 0) throw new Error(`BENCH_HOSTILE_REPROS names none of ${REPROS.map((r) => r.key).join(', ')}`);
  const pinned = hasTaskset();
  const mask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  log(pinned ? `server and bare hello pinned to core ${SERVER_CORE}, load generator to core ${CLIENT_CORE}` : 'taskset not found: nothing pinned');
  const worlds = await writeWorlds();
  const hello = await startHelloServer(pinned ? SERVER_CORE : undefined);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const samples = new Map<string, HostileSample[]>(repros.map((r) => [r.key, []]));
  const helloP99s: number[] = [];
  const serverLog: string[] = [];
  try {
    for (let r = 0; r < roundsWanted; r++) {
      log(`round ${r + 1} of ${roundsWanted}`);
      const pg = databaseUrl ? await newDatabase(databaseUrl) : undefined;
      const dir = await mkdtemp(path.join(tmpdir(), 'mud-bench-hostile-db-'));
      const sqlitePath = pg ? undefined : path.join(dir, 'hostile.db');
      let ctx: Ctx | undefined;
      try {
        const server = await startServer(pg?.url, sqlitePath, worlds.root, 'raised');
        const db = knexFactory(knexConfig({ sqlitePath: sqlitePath ?? '', url: pg?.url ?? '' }));
        ctx = { server, databaseUrl: pg?.url, sqlitePath, worldsRoot: worlds.root, buildLimit: 'raised', builder: '', db, agent, serverLog };
        ctx.builder = await newAccount(ctx, 'hall', 'worldbuilder');
        const deadline = performance.now() + 30_000;
        while ((await victimCount(db)) < 2) {
          if (performance.now() > deadline) throw new Error("the victim's timer did not fire twice within 30 s");
          await sleep(200);
        }
        const helloRun = await openLoop(hello.url, agent, () => HELLO, HEALTH_RATE, sleep(Math.min(seconds, HELLO_SECONDS) * 1000));
        const helloP99 = Math.max(helloRun.latencyP99Ms, 0.01);
        helloP99s.push(helloP99);
        log(`bare hello at ${HEALTH_RATE}/s: p50 ${helloRun.latencyP50Ms} / p99 ${helloRun.latencyP99Ms} ms`);
        for (const repro of repros) samples.get(repro.key)!.push(await measure(ctx, repro, seconds, helloP99));
      } finally {
        if (ctx) {
          await ctx.db.destroy();
          await ctx.server.stop();
          serverLog.push(...ctx.server.logLines);
        }
        await rm(dir, { recursive: true, force: true });
        await pg?.drop();
      }
    }
  } finally {
    agent.destroy();
    await hello.stop();
    await worlds.remove();
    if (mask) restoreAffinity(mask);
  }
  const rows: HostileRow[] = repros.map((repro) => {
    const rounds = samples.get(repro.key)!;
    const m = medianOf(rounds);
    const failures = [...boundsBroken(m), ...new Set(rounds.flatMap((s) => s.failures))];
    return { key: repro.key, title: repro.title, median: m, failures, rounds };
  });
  return {
    result: {
      database: databaseUrl ? 'postgresql' : 'sqlite',
      node: process.version,
      pinned,
      seconds,
      rounds: roundsWanted,
      healthRate: HEALTH_RATE,
      helloP99Ms: round(median(helloP99s), 3),
      bounds: { healthP99Ms: TARGET_HEALTH_P99_MS, worstGapS: TARGET_GAP_S, rssFactor: TARGET_RSS_FACTOR },
      rows,
      failures: rows.flatMap((row) => row.failures.map((f) => `${row.key}: ${f}`)),
      serverLogLines: serverLog.length,
    },
    serverLog: serverLog.slice(0, 20),
  };
}

const listed = (values: Record<string, number>): string =>
  Object.entries(values)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || '–';

export function hostileTable(r: HostileResult): string {
  const header = ['repro', '/health p50 / p99 ms', 'p99 / hello p99', 'victim firings/s', 'worst gap s', 'server CPU %', 'RSS MB before → max', 'failed runs by outcome', 'errors recorded by kind', 'chat rows', 'world_changes rows', 'within bounds'];
  const rows = r.rows.map((row) => {
    const m = row.median;
    return [
      row.title,
      `${m.healthP50Ms} / ${m.healthP99Ms}`,
      String(m.ratioToHelloP99),
      String(m.firingsPerSecond),
      String(m.worstGapS),
      String(m.serverCpuPercent),
      `${m.rssBeforeMb} → ${m.rssMaxMb}`,
      listed(m.failedRuns),
      listed(m.errorsByKind),
      String(m.chatRows),
      String(m.worldChangeRows),
      row.failures.length === 0 ? 'yes' : 'NO',
    ];
  });
  const notes = r.rows.filter((row) => Object.keys(row.median.notes).length > 0).map((row) => `- ${row.key}: ${listed(row.median.notes)}`);
  const text = [
    `hostile (${r.database}, Node ${r.node}, ${r.pinned ? 'server and bare hello on core 0, generator on core 1' : 'not pinned'}): medians of ${r.rounds} round(s) of ${r.seconds} s per repro; GET /health at ${r.healthRate}/s throughout; bare hello p99 at the same rate ${r.helloP99Ms} ms.`,
    `Bounds: /health p99 < ${r.bounds.healthP99Ms} ms, the victim's 1 s timer's worst gap ≤ ${r.bounds.worstGapS} s, RSS ≤ ${r.bounds.rssFactor}× before the repro's setup; no save answered 500; both long timers recorded as errors.`,
    'Per repro (medians; saves by script and status, commands from the players):',
    ...notes,
    r.failures.length > 0 ? `Broken: ${r.failures.join('; ')}.` : 'Every bound held.',
  ];
  return `${markdownTable(header, rows)}\n\n${text.join('\n')}`;
}
