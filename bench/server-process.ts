/**
 * Starts the real server (`node src/cli.ts serve`) as a child process on a throw-away
 * SQLite database, or on PostgreSQL when a url is given, and stops it again.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.resolve(import.meta.dirname, '..');
const READY_TIMEOUT_MS = 30_000;
// Longer than the server's own shutdown timeout (10 s default), so it gets to finish.
const STOP_TIMEOUT_MS = 15_000;

export interface BenchServer {
  url: string;
  database: 'sqlite' | 'postgresql';
  /** The server process's id (for /proc readings). */
  pid: number;
  /** The server's stdout messages (stack frames dropped); at level warn each is a warning or an error. */
  logLines: string[];
  /** SIGTERM, wait for exit (SIGKILL after a timeout), remove the temp dir; safe to call twice. */
  stop(): Promise<void>;
}

/** Asks the OS for a free port. The server logs its url only at level info, which we turn off. */
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface StartOptions {
  /** Pins the server to this CPU core with `taskset -c` (exec'd, so the pid stays the server's); ignored without taskset. */
  cpuCore?: number;
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
  const tempDir = databaseUrl ? undefined : await mkdtemp(path.join(tmpdir(), 'mud-bench-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MUD_HOST: '127.0.0.1',
    MUD_PORT: String(port),
    // Access logs at info would make the benchmark measure logging.
    MUD_LOG_LEVEL: 'warn',
    // Measure the production setting even if a local server.ini turns validation on.
    MUD_SERVER_VALIDATE_RESPONSES: 'false',
    // Login scenarios repeat one account from one address far beyond the abuse limits.
    MUD_RATE_LIMIT_ENABLED: 'false',
    ...extraEnv,
  };
  if (databaseUrl) {
    env.DATABASE_URL = databaseUrl;
  } else {
    // An inherited DATABASE_URL would silently switch the run to PostgreSQL.
    delete env.DATABASE_URL;
    env.MUD_DB_PATH = path.join(tempDir!, 'bench.db');
  }

  const pin = options.cpuCore !== undefined && hasTaskset();
  const [command, args] = pin
    ? ['taskset', ['-c', String(options.cpuCore), process.execPath, 'src/cli.ts', 'serve']]
    : [process.execPath, ['src/cli.ts', 'serve']];
  const child: ChildProcess = spawn(command, args as string[], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // 'close' rather than 'exit': it also waits for the last log lines on the pipes.
  const exited = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
  const logLines: string[] = [];
  const stderrLines: string[] = [];
  // Both pipes must be drained or a chatty server would block on a full pipe.
  createInterface({ input: child.stdout! }).on('line', (line) => {
    // Keep one line per message: knex prints its warnings with stack traces.
    if (!/^\s+at /.test(line)) logLines.push(line);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => stderrLines.push(line));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      if (tempDir) await rm(tempDir, { recursive: true, force: true });
    })();
    return stopping;
  };

  try {
    await waitUntilHealthy(url, running);
    if (!running()) throw new Error('server exited during start-up');
  } catch (err) {
    await stop();
    const output = [...stderrLines, ...logLines].slice(-10).join('\n');
    throw new Error(`${(err as Error).message}${output ? `\n${output}` : ''}`);
  }
  return { url, pid: child.pid!, database: databaseUrl ? 'postgresql' : 'sqlite', logLines, stop };
}

/** Polls /health until it answers 200: the server then listens and its database answers. */
async function waitUntilHealthy(url: string, running: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (!running()) throw new Error('server exited during start-up');
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
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
