/**
 * `npm run bench`: starts the real server on a fresh database, measures every scenario of
 * bench/scenarios.ts with autocannon, prints a Markdown table and a JSON block on stdout
 * (progress goes to stderr) and writes the JSON to bench/results/latest.json.
 *
 * Environment: BENCH_DURATION (seconds per scenario, default 10), BENCH_CONNECTIONS
 * (default 50), BENCH_DATABASE_URL (postgres://…; default is a temp SQLite file).
 * The `events` suite (bench/events.ts) holds open event streams instead: BENCH_STREAMS,
 * BENCH_SAY_RATE and BENCH_SAY_SECONDS adjust it.
 * The `hot` suite (bench/hot.ts) measures the polling and command routes against a bare
 * Express hello, on the server as shipped: BENCH_ROUNDS (closed-loop rounds, default 3),
 * BENCH_RATES (offered req/s of the steady-rate steps, comma-separated, default
 * 250,500,1000,1500,2000,2500,3000,4000,5000,6000,8000) and BENCH_STEP_SECONDS (default 3)
 * adjust it; BENCH_DURATION and BENCH_CONNECTIONS apply to its closed loop.
 * The `faults` suite (bench/faults.ts) kills, restarts and starves the server instead:
 * BENCH_FAULT_CLIENTS, BENCH_KILL_AFTER_SECONDS, BENCH_SOAK_SECONDS (default 600),
 * BENCH_SOAK_CLIENTS and BENCH_IDLE_SECONDS adjust it. It runs only when asked for
 * (BENCH_SUITE=faults): it mounts a tmpfs, starts PostgreSQL clusters and soaks for minutes.
 * The `players` suite (bench/players.ts) holds thousands of players with open streams on one
 * instance and reports how many it keeps within bounds; it takes several minutes, so it runs
 * only when named: BENCH_SUITE=players, with BENCH_PLAYERS (comma-separated N, default
 * 1000,5000,10000), BENCH_PLAYERS_SECONDS (default 30), BENCH_COMMAND_INTERVAL (seconds between
 * one player's commands, default 10), BENCH_GRID (default 32) and BENCH_CROWD (default 500).
 * The `npcs` suite (bench/players.ts) runs the players suite's grid with BENCH_PLAYERS players
 * (its first value, default 2000) alone, with BENCH_NPCS scripted NPCs (default 2000), and with
 * a hostile script in another world: BENCH_SUITE=npcs, with the players suite's other variables.
 * The `building` suite (bench/building.ts) times building changes in worlds of growing size:
 * BENCH_SUITE=building, with BENCH_BUILD_ROOMS (comma-separated sizes, default 500,3000,10000),
 * BENCH_BUILD_CHANGES (default 40) and BENCH_ROUNDS (default 3).
 * The `backup` suite (bench/backup.ts) times backup and copy-db on a large database and the
 * server's answers while backups run: BENCH_SUITE=backup, with BENCH_BACKUP_ACCOUNTS (default
 * 10000), BENCH_BACKUP_CHAT (default 100000), BENCH_BACKUP_RATE (default 50),
 * BENCH_BACKUP_SECONDS (default 10) and BENCH_ROUNDS (default 3); copy-db's PostgreSQL end is
 * a new database on BENCH_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres).
 * The `hostile` suite (bench/hostile.ts) runs builders' hostile scripts one at a time beside a
 * victim world's 1 s timer and reports /health, the timer's gaps, CPU and memory against bounds
 * (exits non-zero past them): BENCH_SUITE=hostile, with BENCH_HOSTILE_SECONDS (per repro, default
 * 20), BENCH_ROUNDS (default 3) and BENCH_HOSTILE_REPROS (keys, comma-separated; default all).
 * BENCH_SUITE=platform|game|axis|events|hot|faults|players|npcs|building|backup|hostile runs one suite;
 * unset, all but faults, players, npcs, building, backup and hostile.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type autocannon from 'autocannon';
import { positiveListEnv, positiveNumberEnv } from './env.ts';
import { measure, round, WARMUP_SECONDS, type RequestSpec } from './load.ts';
import { markdownTable } from './markdown.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';
import { startBenchServer, type BenchServer } from './server-process.ts';
import { worldsWithAxisEngine } from './game-world.ts';
import { eventsTable, runEventsSuite, type EventsResult } from './events.ts';
import { hotTables, runHotSuite, type HotResult } from './hot.ts';
import { faultsTable, runFaultsSuite, type FaultsResult } from './faults.ts';
import { npcsOptionsFromEnv, npcsTable, playersOptionsFromEnv, playersTable, runNpcsSuite, runPlayersSuite, type NpcsResult, type PlayersResult } from './players.ts';
import { buildingTable, runBuildingSuite, type BuildingResult } from './building.ts';
import { backupTable, runBackupSuite, type BackupResult } from './backup.ts';
import { hostileTable, runHostileSuite, type HostileResult } from './hostile.ts';

const RESULTS_FILE = path.join(import.meta.dirname, 'results', 'latest.json');

interface RouteResult {
  route: string;
  method: string;
  path: string;
  requestsPerSecondMean: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMeanMs: number;
  latencyMaxMs: number;
  /** Completed requests during the measurement (warm-up excluded). */
  requests: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Concurrent connections of this measurement. */
  connections?: number;
  /** Warning/error messages the server logged while this scenario ran (setup and warm-up included). */
  serverLogLines: number;
}

interface BenchReport {
  date: string;
  node: string;
  database: 'sqlite' | 'postgresql';
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  routes: RouteResult[];
  /** The `events` suite (open event streams), when it ran. */
  events?: EventsResult;
  /** The `hot` suite (hot routes against a bare Express hello), when it ran. */
  hot?: HotResult;
  /** The `faults` suite (kill -9, PostgreSQL restart, disk full, soak), when it ran. */
  faults?: FaultsResult;
  /** The `players` suite (capacity of one instance), when it ran. */
  players?: PlayersResult;
  /** The `npcs` suite (players with NPCs and a hostile script), when it ran. */
  npcs?: NpcsResult;
  /** The `building` suite (a building change as the world grows), when it ran. */
  building?: BuildingResult;
  /** The `backup` suite (backup and copy-db on a large database), when it ran. */
  backup?: BackupResult;
  /** The `hostile` suite (builders' hostile scripts beside a victim world), when it ran. */
  hostile?: HostileResult;
  /** The first server log messages (warnings and errors), to see what went wrong under load. */
  serverLog: string[];
}

/** Scenarios that share one server, started with `env` (plus what `prepare` adds, undone by its cleanup). */
interface Suite {
  name: string;
  env: Record<string, string>;
  scenarios: readonly Scenario[];
  prepare?: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>;
}

const log = (message: string): void => {
  process.stderr.write(`bench: ${message}\n`);
};

function toRouteResult(scenario: Scenario, request: RequestSpec, r: autocannon.Result, serverLogLines: number): RouteResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    route: scenario.name,
    method: request.method,
    path: request.path,
    requestsPerSecondMean: round(r.requests.mean, 1),
    latencyP50Ms: round(r.latency.p50),
    latencyP99Ms: round(r.latency.p99),
    latencyMeanMs: round(r.latency.mean),
    latencyMaxMs: round(r.latency.max),
    requests: r.requests.total,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes,
    serverLogLines,
  };
}

async function runScenario(server: BenchServer, scenario: Scenario, defaultConnections: number, seconds: number): Promise<RouteResult> {
  const logBefore = server.logLines.length;
  const connections = scenario.connections ?? defaultConnections;
  const prepared = (await scenario.setup?.(server.url)) ?? {};
  try {
    const request: RequestSpec = { ...scenario, ...prepared.request };
    log(`${scenario.name} warm-up ${WARMUP_SECONDS} s`);
    await measure(server.url, request, connections, WARMUP_SECONDS);
    log(`${scenario.name} ${seconds} s × ${connections} connections`);
    const raw = await measure(server.url, request, connections, seconds);
    const result = { ...toRouteResult(scenario, request, raw, server.logLines.length - logBefore), connections };
    log(
      `${scenario.name} ${result.requestsPerSecondMean} req/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms, ` +
        `${result.errors} errors, ${result.non2xx} non-2xx`,
    );
    return result;
  } finally {
    await prepared.teardown?.();
  }
}

function routesTable(routes: RouteResult[]): string {
  const header = ['route', 'req/s (mean)', 'p50 ms', 'p99 ms', 'errors', 'non-2xx'];
  return markdownTable(header, routes.map((r) => [r.route, r.requestsPerSecondMean, r.latencyP50Ms, r.latencyP99Ms, r.errors, r.non2xx].map(String)));
}

async function main(): Promise<void> {
  const durationSeconds = positiveNumberEnv('BENCH_DURATION', 10, false);
  const connections = positiveNumberEnv('BENCH_CONNECTIONS', 50, true);
  const databaseUrl = process.env.BENCH_DATABASE_URL?.trim() || undefined;
  const hotOptions = {
    connections,
    seconds: durationSeconds,
    rounds: positiveNumberEnv('BENCH_ROUNDS', 3, true),
    rates: positiveListEnv('BENCH_RATES', [250, 500, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 8000]),
    stepSeconds: positiveNumberEnv('BENCH_STEP_SECONDS', 3, false),
  };

  const report: BenchReport = {
    date: new Date().toISOString(),
    node: process.version,
    database: databaseUrl ? 'postgresql' : 'sqlite',
    connections,
    durationSeconds,
    warmupSeconds: WARMUP_SECONDS,
    routes: [],
    serverLog: [],
  };
  // The game suites get their own server with bcrypt at its floor, so creating their 200
  // characters takes seconds; the game routes themselves never hash.
  const suites: Suite[] = [
    { name: 'platform and accounts', env: {}, scenarios: SCENARIOS.filter((s) => s.suite === undefined) },
    { name: 'game', env: { MUD_BCRYPT_ROUNDS: '10' }, scenarios: SCENARIOS.filter((s) => s.suite === 'game') },
    {
      name: 'axis',
      env: { MUD_BCRYPT_ROUNDS: '10' },
      scenarios: SCENARIOS.filter((s) => s.suite === 'axis'),
      async prepare() {
        const worlds = await worldsWithAxisEngine();
        return { env: { MUD_WORLDS_ROOT: worlds.root }, cleanup: worlds.remove };
      },
    },
  ];
  // BENCH_SUITE=game (or "platform", "axis") runs one suite only, for quicker comparisons.
  const only = process.env.BENCH_SUITE?.trim();
  // Suites that run only when named, alone.
  const alone = only === 'players' || only === 'npcs' || only === 'building' || only === 'backup' || only === 'hostile';
  for (const suite of suites) {
    if (alone) break;
    if (suite.scenarios.length === 0 || (only && !suite.name.startsWith(only))) continue;
    const prepared = await suite.prepare?.();
    log(`starting server for the ${suite.name} suite (${databaseUrl ? 'PostgreSQL from BENCH_DATABASE_URL' : 'temp SQLite database'})`);
    let server: BenchServer;
    try {
      server = await startBenchServer(databaseUrl, { ...suite.env, ...prepared?.env });
    } catch (err) {
      await prepared?.cleanup();
      throw err;
    }
    const stopAll = async (): Promise<void> => {
      await server.stop();
      await prepared?.cleanup();
    };
    // Ctrl+C or a kill must not leave the server running or a temp dir behind.
    const onSignal = (signal: NodeJS.Signals): void => {
      log(`${signal} received, stopping server`);
      void stopAll().finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      log(`server ready at ${server.url}`);
      for (const scenario of suite.scenarios) {
        report.routes.push(await runScenario(server, scenario, connections, durationSeconds));
      }
    } finally {
      log('stopping server');
      await stopAll();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      report.serverLog.push(...server.logLines.slice(0, 20 - report.serverLog.length));
      if (server.logLines.length > 0) log(`the server logged ${server.logLines.length} warning/error message(s); see serverLog in the JSON`);
    }
  }

  // Event streams: their own server, pinned, with a short poll measurement (BENCH_DURATION caps it at 5 s).
  if (!alone && (!only || 'events'.startsWith(only))) {
    log(`starting server for the events suite (${databaseUrl ? 'PostgreSQL from BENCH_DATABASE_URL' : 'temp SQLite database'})`);
    const { result, serverLog } = await runEventsSuite(databaseUrl, Math.min(connections, 10), Math.min(durationSeconds, 5));
    report.events = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
    if (result.serverLogLines > 0) log(`the server logged ${result.serverLogLines} warning/error message(s); see serverLog in the JSON`);
  }

  if (only === 'building') {
    const { result, serverLog } = await runBuildingSuite(databaseUrl);
    report.building = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
  }

  if (only === 'backup') {
    const { result, serverLog } = await runBackupSuite(databaseUrl);
    report.backup = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
  }

  if (only === 'hostile') {
    const { result, serverLog } = await runHostileSuite(databaseUrl);
    report.hostile = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
    if (result.serverLogLines > 0) log(`the server logged ${result.serverLogLines} warning/error message(s); see serverLog in the JSON`);
  }

  if (only === 'players') {
    const { result, serverLog } = await runPlayersSuite(databaseUrl, playersOptionsFromEnv());
    report.players = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
    if (result.serverLogLines > 0) log(`the server logged ${result.serverLogLines} warning/error message(s); see serverLog in the JSON`);
  }

  if (only === 'npcs') {
    const { result, serverLog } = await runNpcsSuite(databaseUrl, npcsOptionsFromEnv());
    report.npcs = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
    if (result.serverLogLines > 0) log(`the server logged ${result.serverLogLines} warning/error message(s); see serverLog in the JSON`);
  }

  if (!alone && (!only || 'hot'.startsWith(only))) {
    const { result, serverLog } = await runHotSuite(databaseUrl, hotOptions);
    report.hot = result;
    report.serverLog.push(...serverLog.slice(0, 20 - report.serverLog.length));
    if (result.serverLogLines > 0) log(`the server logged ${result.serverLogLines} warning/error message(s); see serverLog in the JSON`);
  }

  // Faults only when asked for by name: minutes of soak, a tmpfs mount, throw-away clusters.
  if (only === 'faults') report.faults = await runFaultsSuite();

  await mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  const tables = [
    ...(report.routes.length > 0 ? [routesTable(report.routes)] : []),
    ...(report.events ? [eventsTable(report.events)] : []),
    ...(report.hot ? [hotTables(report.hot)] : []),
    ...(report.faults ? [faultsTable(report.faults)] : []),
    ...(report.players ? [playersTable(report.players)] : []),
    ...(report.npcs ? [npcsTable(report.npcs)] : []),
    ...(report.building ? [buildingTable(report.building)] : []),
    ...(report.backup ? [backupTable(report.backup)] : []),
    ...(report.hostile ? [hostileTable(report.hostile)] : []),
  ];
  process.stdout.write(`${tables.join('\n\n')}\n\n\`\`\`json\n${JSON.stringify(report, null, 2)}\n\`\`\`\n`);
  log(`results written to ${path.relative(process.cwd(), RESULTS_FILE)}`);
  // Out of bounds is a failed bench, named repro by repro.
  if (report.hostile && report.hostile.failures.length > 0) {
    for (const failure of report.hostile.failures) log(`hostile bound broken: ${failure}`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
