/**
 * Starts `mud-server serve` as a child process on a fresh SQLite file in a work directory,
 * for tools that test the running server from outside (client SDK checks, fuzzing).
 *
 * The server picks a free port (MUD_PORT=0); startFreshServer resolves with the URL from its
 * `Server listening` log line. Rate limits are off (the tools log in many times) and an empty
 * config file stands in for config/server.ini, so a developer's local settings do not leak in.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const repoRoot = path.resolve(import.meta.dirname, '..');

export interface FreshServerOptions {
  /** Directory for the database, policy exports and config; the caller removes it. */
  workDir: string;
  /** Variables on top of the defaults (e.g. MUD_ADMIN_USER/MUD_ADMIN_PASSWORD). */
  env?: NodeJS.ProcessEnv;
}

export interface FreshServer {
  url: string;
  child: ChildProcess;
  /** SIGTERM (graceful shutdown) and wait for the exit; SIGKILL after 15 s. */
  stop(): Promise<void>;
}

interface LogEntry {
  level?: string;
  message?: string;
  url?: string;
}

function parseLine(line: string): LogEntry | undefined {
  try {
    const entry: unknown = JSON.parse(line);
    return typeof entry === 'object' && entry !== null ? entry : undefined;
  } catch {
    return undefined;
  }
}

export function startFreshServer(options: FreshServerOptions): Promise<FreshServer> {
  mkdirSync(options.workDir, { recursive: true });
  const configPath = path.join(options.workDir, 'server.ini');
  writeFileSync(configPath, '');
  const child = spawn(process.execPath, [path.join(repoRoot, 'src/cli.ts'), 'serve'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      MUD_CONFIG: configPath,
      MUD_HOST: '127.0.0.1',
      MUD_PORT: '0',
      MUD_DB_PATH: path.join(options.workDir, 'mud.db'),
      DATABASE_URL: '',
      MUD_POLICY_EXPORTS_ROOT: path.join(options.workDir, 'policy-exports'),
      MUD_RATE_LIMIT_ENABLED: 'false',
      MUD_LOG_LEVEL: 'info',
      ...options.env,
    },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`server exited (${signal ?? code}) before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = parseLine(line);
      if (entry?.message === 'Server listening' && entry.url) resolve({ url: entry.url, child, stop });
      // Access lines would drown the tool's report; what went wrong on the server still shows.
      else if (!entry || entry.level === 'error' || entry.level === 'warn') process.stderr.write(`server: ${line}\n`);
    });
  });
}
