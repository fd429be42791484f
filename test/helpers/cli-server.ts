/**
 * `mud-server serve` as an operator runs it: a child process (so a test can signal or kill it)
 * on a throw-away PostgreSQL database of its own (LISTEN/NOTIFY channels are per database, so
 * nothing crosses from other tests), its JSON log lines read from stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'src', 'cli.ts');

export interface LogLine {
  message: string;
  [key: string]: unknown;
}

export interface CliServer {
  child: ChildProcess;
  /** Every JSON line logged so far. */
  lines: LogLine[];
  stderr(): string;
  /** The first line (from `from` on) that matches, waiting up to `timeoutMs` for it. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs?: number, from?: number): Promise<LogLine>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGKILLs the process if it still runs. */
  kill(): void;
}

/** The environment a test server gets: the caller's, less its MUD_* variables and DATABASE_URL. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('MUD_') && name !== 'DATABASE_URL') env[name] = value;
  return env;
}

export interface CliServerOptions {
  /** The process's limit of open descriptors (`ulimit -n`), for tests of what a flood can take. */
  maxOpenFiles?: number;
}

export function startCliServer(args: string[], env: Record<string, string>, options: CliServerOptions = {}): CliServer {
  const command = [process.execPath, CLI, ...args];
  // The shell sets the limit and becomes the server (exec), so the child's pid is the server's.
  const [file, ...argv] = options.maxOpenFiles === undefined ? command : ['/bin/sh', '-c', `ulimit -n ${options.maxOpenFiles} && exec "$@"`, 'sh', ...command];
  const child = spawn(file!, argv, {
    cwd: ROOT,
    env: { ...baseEnv(), MUD_HOST: '127.0.0.1', MUD_PORT: '0', MUD_WORLDS_ROOT: path.join(ROOT, 'worlds'), MUD_BCRYPT_ROUNDS: '4', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let cut: number;
    while ((cut = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        continue;
      }
      for (const wake of waiters) wake();
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  exited.then(() => {
    for (const wake of waiters) wake();
  });
  const waitFor = (match: (line: LogLine) => boolean, timeoutMs = 30_000, from = 0): Promise<LogLine> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = lines.slice(from).find(match);
        if (found) return finish(() => resolve(found));
        if (child.exitCode !== null || child.signalCode !== null) finish(() => reject(new Error(`server exited (${child.exitCode ?? child.signalCode}) first; stderr: ${stderr.slice(-500)}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`no matching log line within ${timeoutMs} ms; last: ${JSON.stringify(lines.slice(-3))}`))), timeoutMs);
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  return {
    child,
    lines,
    stderr: () => stderr,
    waitFor,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Creates a database of its own next to MUD_TEST_DATABASE_URL's; returns its url and a function that drops it. */
export async function throwAwayDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.MUD_TEST_DATABASE_URL;
  if (!base) throw new Error('MUD_TEST_DATABASE_URL is not set');
  const name = `mud_test_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('CREATE DATABASE ??', [name]);
  } finally {
    await admin.destroy();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: async () => {
      const again = knexFactory({ client: 'pg', connection: base, pool: { min: 0, max: 1 } });
      try {
        await again.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
      } finally {
        await again.destroy();
      }
    },
  };
}

/** Instances of `mud-server serve` on one throw-away PostgreSQL database and a reader of it, for tests of several processes. */
export interface Instances {
  reader: Knex;
  /** Every instance started, live or not. */
  servers: CliServer[];
  /** Starts one more instance, serving `worldsRoot`, once it listens. */
  serve(): Promise<CliServer>;
  /** Kills every instance and drops the database. */
  close(): Promise<void>;
}

export async function instancesOn(worldsRoot: string): Promise<Instances> {
  const db = await throwAwayDatabase();
  const reader = knexFactory({ client: 'pg', connection: db.url, pool: { min: 0, max: 2 } });
  const servers: CliServer[] = [];
  return {
    reader,
    servers,
    async serve() {
      const server = startCliServer(['serve'], { DATABASE_URL: db.url, MUD_WORLDS_ROOT: worldsRoot, MUD_LOG_LEVEL: 'info' });
      servers.push(server);
      await server.waitFor((line) => line.message === 'Server listening', 60_000);
      return server;
    },
    async close() {
      for (const server of servers) server.kill();
      await Promise.all(servers.map((s) => s.exited));
      await reader.destroy();
      await db.drop();
    },
  };
}
