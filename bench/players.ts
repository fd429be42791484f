/**
 * The `players` suite (BENCH_SUITE=players): how many players one instance holds. For each N of
 * BENCH_PLAYERS (default 1000,5000,10000) a fresh server as shipped (`npm start` defaults: info
 * logs to a file, rate limits on; `[events] streams_per_instance` raised to fit) serves a grid
 * world package this suite generates (BENCH_GRID × BENCH_GRID rooms, default 32 × 32, a pebble in
 * every third room), with N logged-in characters spread evenly over it (about 10 a room at
 * 10,000). Every player holds an open `GET /events` stream and sends one command every
 * BENCH_COMMAND_INTERVAL seconds (default 10; evenly spaced, open loop, so a server that falls
 * behind shows as latency): say 40%, move 20%, look 20%, get/drop 10%, who/inventory 10%. After a
 * warm-up it measures BENCH_PLAYERS_SECONDS (default 30): command latency from the scheduled send,
 * say → heard by the others in the room, server RSS and CPU, and streams the server dropped.
 * Then the worst case: BENCH_CROWD players (default 500) in one room, where each say reaches all
 * of them (moves replaced by looks, so they stay). The bounds: command p99 < 100 ms, delivery p99 <
 * 200 ms, RSS < 1.5 GB; the report names the largest N within them.
 *
 * The characters, their accounts and sessions are written straight into the database before the
 * streams open: N logins through bcrypt would take most of an hour, and a login's cost is the hot
 * suite's burst. The server is pinned to core 0 and this process (the load generator) to core 1
 * where taskset exists; the generator reports its own CPU, so a saturated generator shows.
 * The machine's two cores may be shared with other work: expect noise, and compare runs on a
 * quiet machine. BENCH_DATABASE_URL runs it on PostgreSQL (use an empty database).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../src/db/database.ts';
import { toDbTime } from '../src/db/clock.ts';
import { positiveListEnv, positiveNumberEnv } from './env.ts';
import { percentile, round, sleep } from './load.ts';
import { markdownTable } from './markdown.ts';
import { CLIENT_CORE, cpuMs, hasTaskset, pinSelf, restoreAffinity, rssKb, SERVER_CORE, startBenchServer, type BenchServer } from './server-process.ts';
import { openEventStream } from './event-stream-client.ts';

const WORLD_ID = 'grid';
const TARGET_COMMAND_P99_MS = 100;
const TARGET_DELIVERY_P99_MS = 200;
const TARGET_RSS_MB = 1536;
const WARMUP_SECONDS = 5;
/** After the last command, how long answers and deliveries are still counted. */
const DRAIN_MS = 3000;
const OPEN_BATCH = 200;
const AGENT_SOCKETS = 128;
const SEED_BATCH = 500;

type Kind = 'say' | 'move' | 'look' | 'get' | 'drop' | 'who' | 'inventory';
const DIRECTIONS = [
  ['north', 0, -1],
  ['south', 0, 1],
  ['east', 1, 0],
  ['west', -1, 0],
] as const;

export interface PlayersOptions {
  sizes: number[];
  seconds: number;
  intervalSeconds: number;
  grid: number;
  crowd: number;
}

/** NPCs in the grid world (the `npcs` suite): how many, and whether a hostile script runs in a world of its own. */
export interface NpcLoad {
  npcs: number;
  hostile: boolean;
}

const NO_NPCS: NpcLoad = { npcs: 0, hostile: false };

/**
 * Each NPC's script: a timer every 10 s (started at a random moment of the first 10 s, as a
 * builder spreads a crowd's timers) that counts in `state`, and an answer to every player's say
 * in its room.
 */
const NPC_SCRIPT = `function onLoad() { after(1 + random() * 9, "start"); }
function start() { every(10, "tick"); tick(); }
function tick() { state.ticks = (state.ticks || 0) + 1; }
function onSay(actor, text) { if (text.startsWith("bench-say-")) self.say("bench-npc heard " + actor.name); }
`;

/** The hostile script: a busy loop to its CPU limit every second, never suspended (faults_to_suspend is raised for it). */
const HOSTILE_SCRIPT = `function onLoad() { every(1, "spin"); }
function spin() { for (;;) {} }
`;

export interface PlayersRun {
  scenario: string;
  players: number;
  streamsOpened: number;
  commandsPerSecond: number;
  commandsSent: number;
  commandP50Ms: number;
  commandP99Ms: number;
  commandMaxMs: number;
  /** Answers other than 2xx (429 included), and connection errors or commands unanswered at the end. */
  non2xx: number;
  errors: number;
  /** The errors by code (ECONNRESET, …; `unanswered` for commands still open at the end). */
  errorKinds: Record<string, number>;
  deliveriesExpected: number;
  deliveriesReceived: number;
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  /** Server resident memory at the end of the measurement. */
  rssMb: number;
  /** Server CPU during the measurement, in % of one core. */
  serverCpuPercent: number;
  /** Server CPU per command (all work it caused: answers, deliveries, logs, writes), µs. */
  serverCpuPerCommandUs: number;
  /** Streams that ended (an `end` event) or were closed by the server during the run. */
  droppedStreams: number;
  /** This process's CPU in % of one core, and its worst lateness sending a due command. */
  generatorCpuPercent: number;
  generatorLagMaxMs: number;
  /** NPCs in the grid world, and the script runs during the measurement (all worlds), their mean wall time in the sandbox, and those that failed. */
  npcs: number;
  hostile: boolean;
  scriptRunsPerSecond: number;
  scriptRunMeanMs: number;
  scriptRunsFailed: number;
  withinBounds: boolean;
}

export interface PlayersResult {
  database: 'sqlite' | 'postgresql';
  node: string;
  pinned: boolean;
  grid: number;
  commandIntervalSeconds: number;
  seconds: number;
  bounds: { commandP99Ms: number; deliveryP99Ms: number; rssMb: number };
  runs: PlayersRun[];
  /** The largest N of the sizes run whose spread run kept within every bound. */
  largestWithinBounds: number | null;
  serverLogLines: number;
}

const log = (message: string): void => {
  process.stderr.write(`bench: players: ${message}\n`);
};

const roomId = (x: number, y: number): string => `r_${x}_${y}`;

/** A temp worlds root holding the grid world (with `load.npcs` NPCs spread over it) and, for a hostile load, a world with the hostile script. */
async function gridWorld(side: number, load: NpcLoad = NO_NPCS): Promise<{ root: string; remove: () => Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), 'mud-bench-grid-'));
  const dir = path.join(root, WORLD_ID);
  await mkdir(path.join(dir, 'zones'), { recursive: true });
  const centre = Math.floor(side / 2);
  const rooms: Array<{ id: string; name: string; description: string; exits: Record<string, string>; items: string[] }> = [];
  const items = [];
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const exits: Record<string, string> = {};
      for (const [direction, dx, dy] of DIRECTIONS) {
        const nx = x + dx;
        const ny = y + dy;
        if (nx >= 0 && ny >= 0 && nx < side && ny < side) exits[direction] = roomId(nx, ny);
      }
      const pebble = (x + y) % 3 === 0 ? [`pebble_${x}_${y}`] : [];
      for (const id of pebble) items.push({ id, name: 'Pebble', description: 'A smooth grey pebble.' });
      rooms.push({ id: roomId(x, y), name: `Square ${x}-${y}`, description: 'A square of the bench grid.', exits, items: pebble });
    }
  }
  await writeFile(
    path.join(dir, 'world.json'),
    JSON.stringify({
      name: 'Bench Grid',
      description: 'A generated grid for the players bench.',
      default_spawn: { zone: 'grid', room: roomId(centre, centre) },
      zones: ['grid'],
      character_policy: { access_mode: 'open', naming_mode: 'generated', slot_limit_per_account: 10 },
    }),
  );
  const npcs = Array.from({ length: load.npcs }, (_, i) => ({ id: `npc_${i}`, name: `Bench NPC ${letters(i, 4)}`, description: 'A bench NPC.', room: rooms[i % rooms.length]!.id, script: 'scripts/npc.js' }));
  if (npcs.length > 0) {
    await mkdir(path.join(dir, 'scripts'));
    await writeFile(path.join(dir, 'scripts', 'npc.js'), NPC_SCRIPT);
  }
  await writeFile(path.join(dir, 'zones', 'grid.json'), JSON.stringify({ id: 'grid', name: 'Grid', description: 'The grid.', spawn_room: roomId(centre, centre), rooms, items, npcs }));
  if (load.hostile) {
    const hostile = path.join(root, 'hostile');
    await mkdir(path.join(hostile, 'zones'), { recursive: true });
    await mkdir(path.join(hostile, 'scripts'));
    await writeFile(path.join(hostile, 'scripts', 'spin.js'), HOSTILE_SCRIPT);
    await writeFile(path.join(hostile, 'world.json'), JSON.stringify({ name: 'Hostile', description: 'One busy loop.', default_spawn: { zone: 'pit', room: 'pit' }, zones: ['pit'] }));
    const pit = { id: 'pit', name: 'Pit', description: 'A pit.', exits: {}, items: [] };
    const spinner = { id: 'spinner', name: 'Spinner', description: 'It spins.', room: 'pit', script: 'scripts/spin.js' };
    await writeFile(path.join(hostile, 'zones', 'pit.json'), JSON.stringify({ id: 'pit', name: 'Pit', description: 'The pit.', spawn_room: 'pit', rooms: [pit], items: [], npcs: [spinner] }));
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) };
}

export interface Player {
  index: number;
  token: string;
  x: number;
  y: number;
  holding: boolean;
  ended: boolean;
  closed: boolean;
  request?: http.ClientRequest;
}

/** Letters only (character names allow no digits). */
function letters(n: number, width: number): string {
  let text = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / 26)) text = String.fromCharCode(97 + (n % 26)) + text;
  return text;
}

/**
 * Writes `count` accounts, characters and sessions at the given places straight into the server's
 * database; `at` puts them all in one room of another world instead, with another role (the
 * hostile suite's players and builders).
 */
export async function seedPlayers(
  server: BenchServer,
  databaseUrl: string | undefined,
  places: Array<[number, number]>,
  at?: { worldId: string; roomId: string; role: 'player' | 'worldbuilder' },
): Promise<Player[]> {
  const db: Knex = knexFactory(knexConfig({ sqlitePath: server.sqlitePath ?? '', url: databaseUrl ?? '' }));
  try {
    const tag = letters(randomBytes(3).readUIntBE(0, 3), 5);
    const now = new Date();
    const stamp = toDbTime(now);
    const expires = toDbTime(new Date(now.getTime() + 8 * 3_600_000));
    const players: Player[] = places.map(([x, y], index) => ({ index, token: randomUUID(), x, y, holding: false, ended: false, closed: false }));
    await db.transaction(async (trx) => {
      for (let start = 0; start < players.length; start += SEED_BATCH) {
        const batch = players.slice(start, start + SEED_BATCH);
        const userIds: number[] = [];
        for (const p of batch) {
          const username = `b${tag}${p.index}`;
          // No password can match '!': these accounts only ever play through the sessions below.
          const [row] = await trx('users').insert({ username, username_key: username.toLowerCase(), password_hash: '!', role: at?.role ?? 'player', is_guest: false, account_origin: 'system', created_at: stamp }, 'id');
          userIds.push(Number(typeof row === 'object' ? (row as { id: number }).id : row));
        }
        const characterIds: number[] = [];
        for (const [i, p] of batch.entries()) {
          const name = `Bench ${tag} ${letters(p.index, 4)}`;
          const [row] = await trx('characters').insert(
            { user_id: userIds[i], name, name_key: name.toLowerCase(), world_id: at?.worldId ?? WORLD_ID, room_id: at?.roomId ?? roomId(p.x, p.y), is_guest_created: false, created_at: stamp, updated_at: stamp, state_seed: 0 },
            'id',
          );
          characterIds.push(Number(typeof row === 'object' ? (row as { id: number }).id : row));
        }
        await trx('sessions').insert(
          batch.map((p, i) => ({
            token_hash: createHash('sha256').update(p.token).digest('hex'),
            user_id: userIds[i],
            character_id: characterIds[i],
            world_id: at?.worldId ?? WORLD_ID,
            client_type: 'bench',
            created_at: stamp,
            last_activity: stamp,
            expires_at: expires,
          })),
        );
      }
    });
    return players;
  } finally {
    await db.destroy();
  }
}

const NO_RUNS = { runs: 0, failed: 0, seconds: 0, byOutcome: {} };

/** The script runs so far (all outcomes, and by outcome), those that failed, and their wall time in seconds, from the server's /metrics. */
export async function scriptTotals(baseUrl: URL): Promise<{ runs: number; failed: number; seconds: number; byOutcome: Record<string, number> }> {
  const text = await (await fetch(new URL('/metrics', baseUrl))).text();
  let runs = 0;
  let failed = 0;
  const byOutcome: Record<string, number> = {};
  for (const m of text.matchAll(/^mud_script_runs_total\{outcome="([^"]+)"\} (\S+)$/gm)) {
    runs += Number(m[2]);
    byOutcome[m[1]!] = Number(m[2]);
    if (m[1] !== 'ok') failed += Number(m[2]);
  }
  const seconds = Number(/^mud_script_run_seconds_total (\S+)$/m.exec(text)?.[1] ?? 0);
  return { runs, failed, seconds, byOutcome };
}

class Run {
  measuring = false;
  readonly commandLatencies: number[] = [];
  readonly deliveryLatencies: number[] = [];
  /** Say number → when it was due and who said it (only says sent while measuring). */
  readonly says = new Map<number, { due: number; speaker: number }>();
  deliveriesExpected = 0;
  deliveriesReceived = 0;
  dropped = 0;
  non2xx = 0;
  readonly errorKinds: Record<string, number> = {};
  sent = 0;
  lagMax = 0;
  /** Players per room, as the generator has seen their moves succeed. */
  readonly occupancy = new Map<string, number>();

  get errors(): number {
    return Object.values(this.errorKinds).reduce((a, b) => a + b, 0);
  }

  error(kind: string, n = 1): void {
    this.errorKinds[kind] = (this.errorKinds[kind] ?? 0) + n;
  }

  place(p: Player, delta: number): void {
    const key = roomId(p.x, p.y);
    this.occupancy.set(key, (this.occupancy.get(key) ?? 0) + delta);
  }
}

/** One stream per player; only chat and end frames are read. */
async function openStream(run: Run, baseUrl: URL, player: Player): Promise<void> {
  player.request = await openEventStream(baseUrl, player.token, {
    onFrame: (frame, at) => {
      if (frame.includes('\nevent: end\n')) {
        player.ended = true;
        if (run.measuring) run.dropped++;
        return;
      }
      const say = /"text":"bench-say-(\d+) /.exec(frame);
      if (!say) return;
      const record = run.says.get(Number(say[1]));
      if (!record || record.speaker === player.index) return;
      run.deliveriesReceived++;
      run.deliveryLatencies.push(at - record.due);
    },
    onClose: () => {
      player.closed = true;
      if (run.measuring && !player.ended) run.dropped++;
    },
  });
}

function pick(player: Player, crowd: boolean): [Kind, string] {
  const r = Math.random() * 100;
  if (r < 40) return ['say', ''];
  if (r < 60) {
    if (crowd) return ['look', 'look'];
    const [direction] = DIRECTIONS[Math.floor(Math.random() * DIRECTIONS.length)]!;
    return ['move', direction];
  }
  if (r < 80) return ['look', 'look'];
  if (r < 90) return player.holding ? ['drop', 'drop pebble'] : ['get', 'get pebble'];
  return r < 95 ? ['who', 'who'] : ['inventory', 'inventory'];
}

/** Sends every player's commands at its rate until `until`, open loop. */
async function drive(run: Run, baseUrl: URL, players: Player[], intervalSeconds: number, crowd: boolean, untilMs: number, sayCounter: { next: number }): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: AGENT_SOCKETS });
  const inFlight = new Set<http.ClientRequest>();
  const order = [...players].sort(() => Math.random() - 0.5);
  const spacing = (intervalSeconds * 1000) / order.length;
  const t0 = performance.now();
  let i = 0;
  const send = (player: Player, due: number): void => {
    const [kind, command] = pick(player, crowd);
    let text = command;
    if (kind === 'say') {
      const n = sayCounter.next++;
      text = `say bench-say-${n} a fine evening`;
      if (run.measuring) {
        run.says.set(n, { due, speaker: player.index });
        run.deliveriesExpected += Math.max(0, (run.occupancy.get(roomId(player.x, player.y)) ?? 1) - 1);
      }
    }
    const measured = run.measuring;
    if (measured) run.sent++;
    const body = JSON.stringify({ command: text });
    const req = http.request(
      { agent, host: baseUrl.hostname, port: baseUrl.port, method: 'POST', path: '/command', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${player.token}` } },
      (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (answer += chunk));
        res.on('end', () => {
          if (!inFlight.delete(req)) return;
          const ok = res.statusCode === 200;
          if (measured) {
            run.commandLatencies.push(performance.now() - due);
            if (!ok) run.non2xx++;
          }
          if (!ok || !answer.startsWith('{"success":true')) return;
          if (kind === 'move') {
            const [, dx, dy] = DIRECTIONS.find(([d]) => d === command)!;
            run.place(player, -1);
            player.x += dx;
            player.y += dy;
            run.place(player, 1);
          } else if (kind === 'get') player.holding = true;
          else if (kind === 'drop') player.holding = false;
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (inFlight.delete(req) && measured) run.error(err.code ?? err.message);
    });
    inFlight.add(req);
    req.end(body);
  };
  while (performance.now() < untilMs) {
    const now = performance.now();
    while (t0 + i * spacing <= now) {
      const due = t0 + i * spacing;
      run.lagMax = Math.max(run.lagMax, run.measuring ? now - due : 0);
      send(order[i % order.length]!, due);
      i++;
    }
    await sleep(Math.max(0, Math.min(untilMs - performance.now(), t0 + i * spacing - performance.now())));
  }
  const end = performance.now();
  while (inFlight.size > 0 && performance.now() - end < DRAIN_MS) await sleep(5);
  if (run.measuring && inFlight.size > 0) run.error('unanswered', inFlight.size);
  for (const req of inFlight) req.destroy();
  agent.destroy();
}

async function runOne(
  databaseUrl: string | undefined,
  options: PlayersOptions,
  worldsRoot: string,
  scenario: string,
  places: Array<[number, number]>,
  crowd: boolean,
  serverLog: string[],
  /** The npcs suite's load; null for the players suite (no NPCs, no metrics). */
  load: NpcLoad | null = null,
): Promise<PlayersRun> {
  const n = places.length;
  log(`${scenario}: starting the server`);
  const server = await startBenchServer(
    databaseUrl,
    {
      MUD_WORLDS_ROOT: worldsRoot,
      MUD_DEFAULT_WORLD_ID: WORLD_ID,
      MUD_EVENTS_STREAMS_PER_INSTANCE: String(Math.max(5000, n + 100)),
      // Every player's stream comes from the generator's one address.
      MUD_EVENTS_STREAMS_PER_ADDRESS: String(Math.max(50, n + 100)),
      // The npcs suite reads the script runs from /metrics (in all its runs, alike); each NPC holds
      // a timer (past the default 200 a world); the hostile script keeps running however often it fails.
      ...(load ? { MUD_METRICS_MODE: 'open', MUD_SCRIPTS_TIMERS_PER_WORLD: String(Math.max(200, 2 * load.npcs)), MUD_SCRIPTS_FAULTS_TO_SUSPEND: '1000' } : {}),
    },
    { cpuCore: hasTaskset() ? SERVER_CORE : undefined, asShipped: true },
  );
  const run = new Run();
  const players: Player[] = [];
  try {
    if (load && load.npcs > 0) {
      // Every NPC's onLoad has run once the world's clock is held: only then is the load steady.
      log(`${scenario}: waiting for the ${load.npcs} NPCs' scripts to load`);
      const deadline = performance.now() + 300_000;
      while ((await scriptTotals(new URL(server.url))).runs < load.npcs) {
        if (performance.now() > deadline) throw new Error('the NPCs did not load within 300 s');
        await sleep(500);
      }
    }
    log(`${scenario}: writing ${n} characters and sessions`);
    players.push(...(await seedPlayers(server, databaseUrl, places)));
    for (const p of players) run.place(p, 1);
    log(`${scenario}: opening ${n} event streams`);
    const baseUrl = new URL(server.url);
    let opened = 0;
    for (let start = 0; start < n; start += OPEN_BATCH) {
      const outcomes = await Promise.allSettled(players.slice(start, start + OPEN_BATCH).map((p) => openStream(run, baseUrl, p)));
      opened += outcomes.filter((o) => o.status === 'fulfilled').length;
    }
    if (opened < n) log(`${scenario}: ${n - opened} streams failed to open`);
    const sayCounter = { next: 0 };
    const total = WARMUP_SECONDS + options.seconds;
    log(`${scenario}: ${n} players, one command each per ${options.intervalSeconds} s; warm-up ${WARMUP_SECONDS} s, then ${options.seconds} s measured`);
    const start = performance.now();
    const warmedUp = sleep(WARMUP_SECONDS * 1000).then(async () => {
      run.measuring = true;
      return { cpu: cpuMs(server.pid), own: process.cpuUsage(), at: performance.now(), scripts: load ? await scriptTotals(baseUrl) : NO_RUNS };
    });
    const driving = drive(run, baseUrl, players, options.intervalSeconds, crowd, start + total * 1000, sayCounter);
    const before = await warmedUp;
    await sleep(Math.max(0, start + total * 1000 - performance.now()));
    const cpuAfter = cpuMs(server.pid);
    const ownAfter = process.cpuUsage(before.own);
    const wallMs = performance.now() - before.at;
    const scriptsAfter = load ? await scriptTotals(baseUrl) : NO_RUNS;
    const scriptRuns = scriptsAfter.runs - before.scripts.runs;
    const rss = round(rssKb(server.pid) / 1024, 1);
    await driving;
    await sleep(500);
    run.measuring = false;
    const commands = run.commandLatencies.sort((a, b) => a - b);
    const deliveries = run.deliveryLatencies.sort((a, b) => a - b);
    const serverCpuMs = cpuAfter - before.cpu;
    const result: PlayersRun = {
      scenario,
      players: n,
      streamsOpened: opened,
      commandsPerSecond: round(run.sent / options.seconds, 1),
      commandsSent: run.sent,
      commandP50Ms: round(percentile(commands, 50)),
      commandP99Ms: round(percentile(commands, 99)),
      commandMaxMs: round(commands.at(-1) ?? 0),
      non2xx: run.non2xx,
      errors: run.errors,
      errorKinds: { ...run.errorKinds },
      deliveriesExpected: run.deliveriesExpected,
      deliveriesReceived: run.deliveriesReceived,
      deliveryP50Ms: round(percentile(deliveries, 50)),
      deliveryP99Ms: round(percentile(deliveries, 99)),
      rssMb: rss,
      serverCpuPercent: round((serverCpuMs / wallMs) * 100, 1),
      serverCpuPerCommandUs: round((serverCpuMs * 1000) / Math.max(1, run.sent), 0),
      droppedStreams: run.dropped,
      generatorCpuPercent: round(((ownAfter.user + ownAfter.system) / 1000 / wallMs) * 100, 1),
      generatorLagMaxMs: round(run.lagMax),
      npcs: load?.npcs ?? 0,
      hostile: load?.hostile ?? false,
      scriptRunsPerSecond: round((scriptRuns * 1000) / wallMs, 1),
      scriptRunMeanMs: round(((scriptsAfter.seconds - before.scripts.seconds) * 1000) / Math.max(1, scriptRuns), 3),
      scriptRunsFailed: scriptsAfter.failed - before.scripts.failed,
      withinBounds: false,
    };
    result.withinBounds =
      result.commandP99Ms < TARGET_COMMAND_P99_MS &&
      result.deliveryP99Ms < TARGET_DELIVERY_P99_MS &&
      result.rssMb < TARGET_RSS_MB &&
      result.errors === 0 &&
      result.droppedStreams === 0 &&
      opened === n;
    log(
      `${scenario}: ${result.commandsPerSecond} commands/s${result.errors > 0 ? ` (errors: ${JSON.stringify(result.errorKinds)})` : ''}, p50 ${result.commandP50Ms} / p99 ${result.commandP99Ms} ms, delivery p99 ${result.deliveryP99Ms} ms, ` +
        `${result.serverCpuPercent}% server CPU, ${result.rssMb} MB RSS, ${result.droppedStreams} dropped, generator ${result.generatorCpuPercent}% CPU` +
        (load ? `, ${result.scriptRunsPerSecond} script runs/s of ${result.scriptRunMeanMs} ms (${result.scriptRunsFailed} failed)` : ''),
    );
    return result;
  } finally {
    for (const p of players) p.request?.destroy();
    await server.stop();
    serverLog.push(...server.logLines);
  }
}

export async function runPlayersSuite(databaseUrl: string | undefined, options: PlayersOptions): Promise<{ result: PlayersResult; serverLog: string[] }> {
  const pinned = hasTaskset();
  const previousMask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  log(pinned ? `server pinned to core ${SERVER_CORE}, load generator to core ${CLIENT_CORE}` : 'taskset not found: nothing pinned');
  const world = await gridWorld(options.grid);
  const serverLog: string[] = [];
  const runs: PlayersRun[] = [];
  try {
    const side = options.grid;
    for (const n of options.sizes) {
      // Evenly over the grid, so each room holds about n / side² players.
      const places = Array.from({ length: n }, (_, i): [number, number] => [i % side, Math.floor(i / side) % side]);
      runs.push(await runOne(databaseUrl, options, world.root, `spread ${n}`, places, false, serverLog));
    }
    const centre = Math.floor(side / 2);
    runs.push(await runOne(databaseUrl, options, world.root, `one room ${options.crowd}`, Array.from({ length: options.crowd }, () => [centre, centre]), true, serverLog));
  } finally {
    await world.remove();
    if (previousMask) restoreAffinity(previousMask);
  }
  const spread = runs.filter((r) => r.scenario.startsWith('spread') && r.withinBounds);
  return {
    result: {
      database: databaseUrl ? 'postgresql' : 'sqlite',
      node: process.version,
      pinned,
      grid: options.grid,
      commandIntervalSeconds: options.intervalSeconds,
      seconds: options.seconds,
      bounds: { commandP99Ms: TARGET_COMMAND_P99_MS, deliveryP99Ms: TARGET_DELIVERY_P99_MS, rssMb: TARGET_RSS_MB },
      runs,
      largestWithinBounds: spread.length > 0 ? Math.max(...spread.map((r) => r.players)) : null,
      serverLogLines: serverLog.length,
    },
    serverLog: serverLog.slice(0, 20),
  };
}

export function playersOptionsFromEnv(): PlayersOptions {
  return {
    sizes: positiveListEnv('BENCH_PLAYERS', [1000, 5000, 10000]).map(Math.round),
    seconds: positiveNumberEnv('BENCH_PLAYERS_SECONDS', 30, false),
    intervalSeconds: positiveNumberEnv('BENCH_COMMAND_INTERVAL', 10, false),
    grid: positiveNumberEnv('BENCH_GRID', 32, true),
    crowd: positiveNumberEnv('BENCH_CROWD', 500, true),
  };
}

/** The suite's results: one row per run, then what the rows mean. */
export function playersTable(r: PlayersResult): string {
  const header = ['players', 'commands/s', 'command p50 / p99 ms', 'say → heard p50 / p99 ms', 'heard / expected', 'server CPU %', 'CPU µs / command', 'RSS MB', 'dropped', 'non-2xx / errors', 'generator CPU % / lag ms', 'within bounds'];
  const rows = r.runs.map((run) => [
    run.scenario,
    String(run.commandsPerSecond),
    `${run.commandP50Ms} / ${run.commandP99Ms}`,
    `${run.deliveryP50Ms} / ${run.deliveryP99Ms}`,
    `${run.deliveriesReceived} / ${run.deliveriesExpected}`,
    String(run.serverCpuPercent),
    String(run.serverCpuPerCommandUs),
    String(run.rssMb),
    String(run.droppedStreams),
    `${run.non2xx} / ${run.errors}`,
    `${run.generatorCpuPercent} / ${run.generatorLagMaxMs}`,
    run.withinBounds ? 'yes' : 'NO',
  ]);
  const notes = [
    `players (${r.database}, Node ${r.node}, ${r.pinned ? 'server on core 0, generator on core 1' : 'not pinned'}): a ${r.grid} × ${r.grid} grid, each player with an open event stream and one command per ${r.commandIntervalSeconds} s (say 40%, move 20%, look 20%, get/drop 10%, who/inventory 10%; the one-room run looks instead of moving), ${r.seconds} s measured after a ${WARMUP_SECONDS} s warm-up.`,
    `Bounds: command p99 < ${r.bounds.commandP99Ms} ms from the scheduled send, say → heard by each other player in the room p99 < ${r.bounds.deliveryP99Ms} ms, RSS < ${r.bounds.rssMb} MB, no stream dropped. Largest N within them: ${r.largestWithinBounds ?? 'none of those run'}.`,
    'A generator near 100% CPU or with a lag of tens of ms measures itself, not the server. Figures on a shared machine are noisy: rerun on a quiet one before comparing.',
  ];
  return `${markdownTable(header, rows)}\n\n${notes.join('\n')}`;
}

export interface NpcsOptions {
  players: number;
  npcs: number;
  seconds: number;
  intervalSeconds: number;
  grid: number;
}

export interface NpcsResult {
  database: 'sqlite' | 'postgresql';
  node: string;
  pinned: boolean;
  grid: number;
  commandIntervalSeconds: number;
  seconds: number;
  bounds: { commandP99Ms: number; deliveryP99Ms: number };
  /** Players alone, with the NPCs, with the NPCs and the hostile world. */
  runs: PlayersRun[];
  /** Server CPU per script run: the CPU the NPCs' run added over players alone, over their runs (ms). */
  cpuPerScriptRunMs: number | null;
  /** Server memory per NPC: the RSS the NPCs' run added over players alone, over the NPCs (KB). */
  memoryPerNpcKb: number | null;
  serverLogLines: number;
}

/**
 * The `npcs` suite (BENCH_SUITE=npcs): the players suite's grid and mix with BENCH_PLAYERS
 * players (its first value; default 2000), three times on fresh servers: players alone, with
 * BENCH_NPCS NPCs (default 2000; two or so a room) whose scripts run every 10 s and answer every
 * say in their rooms, and the same with one hostile script in a world of its own (a busy loop to
 * its CPU limit every second). Bounds as for players alone.
 */
export async function runNpcsSuite(databaseUrl: string | undefined, options: NpcsOptions): Promise<{ result: NpcsResult; serverLog: string[] }> {
  const pinned = hasTaskset();
  const previousMask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  log(pinned ? `server pinned to core ${SERVER_CORE}, load generator to core ${CLIENT_CORE}` : 'taskset not found: nothing pinned');
  const side = options.grid;
  const places = Array.from({ length: options.players }, (_, i): [number, number] => [i % side, Math.floor(i / side) % side]);
  const playersOptions: PlayersOptions = { sizes: [options.players], seconds: options.seconds, intervalSeconds: options.intervalSeconds, grid: side, crowd: 0 };
  const serverLog: string[] = [];
  const runs: PlayersRun[] = [];
  try {
    for (const load of [NO_NPCS, { npcs: options.npcs, hostile: false }, { npcs: options.npcs, hostile: true }]) {
      const world = await gridWorld(side, load);
      const scenario = `${options.players} players${load.npcs > 0 ? ` + ${load.npcs} NPCs` : ''}${load.hostile ? ' + hostile world' : ''}`;
      try {
        runs.push(await runOne(databaseUrl, playersOptions, world.root, scenario, places, false, serverLog, load));
      } finally {
        await world.remove();
      }
    }
  } finally {
    if (previousMask) restoreAffinity(previousMask);
  }
  const [alone, withNpcs] = runs;
  const scriptRuns = withNpcs ? (withNpcs.scriptRunsPerSecond * options.seconds) : 0;
  const cpuMsOf = (r: PlayersRun): number => (r.serverCpuPercent / 100) * options.seconds * 1000;
  return {
    result: {
      database: databaseUrl ? 'postgresql' : 'sqlite',
      node: process.version,
      pinned,
      grid: side,
      commandIntervalSeconds: options.intervalSeconds,
      seconds: options.seconds,
      bounds: { commandP99Ms: TARGET_COMMAND_P99_MS, deliveryP99Ms: TARGET_DELIVERY_P99_MS },
      runs,
      cpuPerScriptRunMs: alone && withNpcs && scriptRuns > 0 ? round((cpuMsOf(withNpcs) - cpuMsOf(alone)) / scriptRuns, 3) : null,
      memoryPerNpcKb: alone && withNpcs && options.npcs > 0 ? round(((withNpcs.rssMb - alone.rssMb) * 1024) / options.npcs, 1) : null,
      serverLogLines: serverLog.length,
    },
    serverLog: serverLog.slice(0, 20),
  };
}

export function npcsOptionsFromEnv(): NpcsOptions {
  const players = playersOptionsFromEnv();
  return {
    players: process.env.BENCH_PLAYERS ? players.sizes[0]! : 2000,
    npcs: positiveNumberEnv('BENCH_NPCS', 2000, true),
    seconds: players.seconds,
    intervalSeconds: players.intervalSeconds,
    grid: players.grid,
  };
}

export function npcsTable(r: NpcsResult): string {
  const header = ['run', 'commands/s', 'command p50 / p99 ms', 'say → heard p50 / p99 ms', 'heard / expected', 'script runs/s', 'ms / run (sandbox)', 'failed runs', 'server CPU %', 'RSS MB', 'dropped', 'non-2xx / errors', 'within bounds'];
  const rows = r.runs.map((run) => [
    run.scenario,
    String(run.commandsPerSecond),
    `${run.commandP50Ms} / ${run.commandP99Ms}`,
    `${run.deliveryP50Ms} / ${run.deliveryP99Ms}`,
    `${run.deliveriesReceived} / ${run.deliveriesExpected}`,
    String(run.scriptRunsPerSecond),
    String(run.scriptRunMeanMs),
    String(run.scriptRunsFailed),
    String(run.serverCpuPercent),
    String(run.rssMb),
    String(run.droppedStreams),
    `${run.non2xx} / ${run.errors}`,
    run.withinBounds ? 'yes' : 'NO',
  ]);
  const notes = [
    `npcs (${r.database}, Node ${r.node}, ${r.pinned ? 'server on core 0, generator on core 1' : 'not pinned'}): the players suite's ${r.grid} × ${r.grid} grid and mix, one command per player per ${r.commandIntervalSeconds} s, ${r.seconds} s measured after the NPCs loaded and a ${WARMUP_SECONDS} s warm-up. Each NPC's script counts in its state every 10 s and answers every say in its room; the hostile world's script runs a busy loop to its CPU limit every second.`,
    `Bounds: command p99 < ${r.bounds.commandP99Ms} ms, say → heard p99 < ${r.bounds.deliveryP99Ms} ms (players' says, heard by the other players in the room), no stream dropped.`,
    `Server CPU per script run (the NPCs' run over players alone): ${r.cpuPerScriptRunMs ?? 'n/a'} ms; server memory per NPC: ${r.memoryPerNpcKb ?? 'n/a'} KB. Noisy on a shared machine: compare runs of one sitting.`,
  ];
  return `${markdownTable(header, rows)}\n\n${notes.join('\n')}`;
}
