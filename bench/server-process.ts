/**
 * Starts the real server (`node src/cli.ts serve`) as a child process on a throw-away
 * SQLite database, or on PostgreSQL when a url is given, and stops it again; likewise the hot
 * suite's bare Express baseline. Also the CPU pinning and /proc readings the suites share.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import knexFactory from 'knex';
import { sleep } from './load.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const READY_TIMEOUT_MS = 30_000;
// Longer than the server's own shutdown timeout (10 s default), so it gets to finish.
const STOP_TIMEOUT_MS = 15_000;

/** A server process started by the bench. */
export interface ChildServer {
  url: string;
  /** The process's id (for /proc readings). */
  pid: number;
  /** The server's stdout messages (stack frames dropped) at level warn or above. */
  logLines: string[];
  /** SIGTERM, wait for exit (SIGKILL after a timeout), remove the temp dir; safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL at once (no graceful shutdown), wait for exit, remove the temp dir. */
  kill(): Promise<void>;
}

export interface BenchServer extends ChildServer {
  database: 'sqlite' | 'postgresql';
  /** The SQLite file (undefined on PostgreSQL), for suites that write their fixtures straight into it. */
  sqlitePath: string | undefined;
}

/** Asks the OS for a free port to hand to the server (which logs its url only at level info). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Where the suites that pin put the server (and a baseline) and the load generator, when taskset exists. */
export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;

export interface StartOptions {
  /** Pins the server to this CPU core with `taskset -c` (exec'd, so the pid stays the server's); ignored without taskset. */
  cpuCore?: number;
  /**
   * `npm start` defaults: info logs and every rate limit on, which the other suites turn off.
   * The access log then goes to a file rather than a pipe this process would have to read on
   * the load generator's core; its warnings and errors reach logLines when the server stops.
   */
  asShipped?: boolean;
  /** The SQLite file to serve (kept when the server stops), instead of a fresh one in the temp dir. */
  sqlitePath?: string;
}

/** True when `taskset` (util-linux) can pin processes here. */
export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
}

export async function startBenchServer(
  databaseUrl: string | undefined,
  extraEnv: Record<string, string> = {},
  options: StartOptions = {},
): Promise<BenchServer> {
  const tempDir = await mkdtemp(path.join(tmpdir(), 'mud-bench-'));
  const port = await freePort();
  const quiet = {
    // Access logs at info would make the benchmark measure logging.
    MUD_LOG_LEVEL: 'warn',
    // Login scenarios repeat one account from one address far beyond the abuse limits.
    MUD_RATE_LIMIT_ENABLED: 'false',
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MUD_HOST: '127.0.0.1',
    MUD_PORT: String(port),
    // Measure the production setting even if a local server.ini turns validation on.
    MUD_SERVER_VALIDATE_RESPONSES: 'false',
    // BENCH_SERVER_NODE_OPTIONS reaches the server only (e.g. --cpu-prof --cpu-prof-dir=…), not npm or this process.
    ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
    ...(options.asShipped ? {} : quiet),
    ...extraEnv,
  };
  if (databaseUrl) {
    env.DATABASE_URL = databaseUrl;
  } else {
    // An inherited DATABASE_URL would silently switch the run to PostgreSQL.
    delete env.DATABASE_URL;
    env.MUD_DB_PATH = options.sqlitePath ?? path.join(tempDir, 'bench.db');
  }
  const server = await startChild({
    args: ['src/cli.ts', 'serve'],
    env,
    url: `http://127.0.0.1:${port}`,
    healthPath: '/health',
    cpuCore: options.cpuCore,
    tempDir,
    logFile: options.asShipped ? path.join(tempDir, 'server.log') : undefined,
  });
  return { ...server, database: databaseUrl ? 'postgresql' : 'sqlite', sqlitePath: env.MUD_DB_PATH };
}

/** The bare Express 5 hello of bench/hello-server.ts, on this process's Node binary. */
export async function startHelloServer(cpuCore?: number): Promise<ChildServer> {
  const port = await freePort();
  return startChild({
    args: ['bench/hello-server.ts'],
    env: { ...process.env, HELLO_PORT: String(port) },
    url: `http://127.0.0.1:${port}`,
    healthPath: '/',
    cpuCore,
  });
}

interface ChildSpec {
  /** Arguments of the Node binary, run in the repository root. */
  args: string[];
  env: NodeJS.ProcessEnv;
  url: string;
  /** Answers 200 once the server is ready. */
  healthPath: string;
  cpuCore?: number;
  /** Removed on stop. */
  tempDir?: string;
  /** Takes stdout instead of a pipe (see StartOptions.asShipped). */
  logFile?: string;
}

async function startChild(spec: ChildSpec): Promise<ChildServer> {
  const pin = spec.cpuCore !== undefined && hasTaskset();
  const [command, args] = pin ? ['taskset', ['-c', String(spec.cpuCore), process.execPath, ...spec.args]] : [process.execPath, spec.args];
  const logFd = spec.logFile ? openSync(spec.logFile, 'w') : undefined;
  const child: ChildProcess = spawn(command, args as string[], { cwd: ROOT, env: spec.env, stdio: ['ignore', logFd ?? 'pipe', 'pipe'] });
  if (logFd !== undefined) closeSync(logFd);
  // 'close' rather than 'exit': it also waits for the last log lines on the pipes.
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
  const logLines: string[] = [];
  const stderrLines: string[] = [];
  // Both pipes must be drained or a chatty server would block on a full pipe.
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      // Keep one line per message: knex prints its warnings with stack traces.
      if (!/^\s+at /.test(line)) logLines.push(line);
    });
  }
  createInterface({ input: child.stderr! }).on('line', (line) => stderrLines.push(line));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  let stopping: Promise<void> | undefined;
  const end = (signal: NodeJS.Signals): Promise<void> => {
    stopping ??= (async () => {
      if (running()) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      if (spec.logFile) logLines.push(...(await warningsIn(spec.logFile)));
      if (spec.tempDir) await rm(spec.tempDir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const stop = (): Promise<void> => end('SIGTERM');

  try {
    await waitUntilHealthy(`${spec.url}${spec.healthPath}`, running);
    if (!running()) throw new Error('server exited during start-up');
  } catch (err) {
    await stop();
    const output = [...stderrLines, ...logLines].slice(-10).join('\n');
    throw new Error(`${(err as Error).message}${output ? `\n${output}` : ''}`);
  }
  return { url: spec.url, pid: child.pid!, logLines, stop, kill: () => end('SIGKILL') };
}

/** The messages of an info-level log file above info, stack frames dropped. */
async function warningsIn(file: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line.trim() && !/^\s+at /.test(line) && !/"level":"(info|debug)"/.test(line)) lines.push(line);
  }
  return lines;
}

/** Polls `url` (the real server's /health) until it answers 200: the server then listens and its database answers. */
async function waitUntilHealthy(url: string, running: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (!running()) throw new Error('server exited during start-up');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`server not healthy after ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

/** Sets this process's CPU affinity (all threads); returns the previous mask to restore, or undefined. */
export function pinSelf(core: number): string | undefined {
  try {
    const before = /:\s*([0-9a-f]+)\s*$/i.exec(execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' }).trim())?.[1];
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { stdio: 'ignore' });
    return before;
  } catch {
    return undefined;
  }
}

export function restoreAffinity(mask: string): void {
  try {
    execFileSync('taskset', ['-a', '-p', mask, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // Best effort.
  }
}

let clockTicks: number | undefined;
/** utime + stime of a process (all its threads), in milliseconds. */
export function cpuMs(pid: number): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** Resident memory of a process, in KB. */
export function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]);
}

/** A new PostgreSQL database on `base`'s server for one bench round, and how to drop it. */
export async function newDatabase(base: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `mud_bench_${randomBytes(5).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  await admin.raw('CREATE DATABASE ??', [name]).finally(() => admin.destroy());
  return {
    url: Object.assign(new URL(base), { pathname: `/${name}` }).href,
    drop: async () => {
      const again = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
      await again.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]).finally(() => again.destroy());
    },
  };
}
