/**
 * A throw-away PostgreSQL cluster of the test's own, for tests that restart the database: the
 * shared one at MUD_TEST_DATABASE_URL serves other suites and cannot be restarted under them.
 * It runs the installed server binaries, listens on 127.0.0.1 on a free port, keeps its data,
 * socket and log in one temporary directory and trusts every local connection.
 */
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { freePort } from './free-port.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Context } from 'mocha';
import { needs } from './needs.ts';

const INSTALL_ROOT = '/usr/lib/postgresql';
const READY_TIMEOUT_MS = 30_000;

export interface PrivatePostgres {
  /** A superuser url of the cluster's `postgres` database. */
  url: string;
  /** A real restart (`pg_ctl restart -m fast`: every connection is cut); resolves once it accepts connections again. */
  restart(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

/** The bin directory of the highest installed PostgreSQL version that has initdb and pg_ctl, or null. */
export function findPostgresBin(): string | null {
  if (!existsSync(INSTALL_ROOT)) return null;
  const versions = readdirSync(INSTALL_ROOT)
    .filter((version) => ['initdb', 'pg_ctl'].every((tool) => existsSync(path.join(INSTALL_ROOT, version, 'bin', tool))))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
  return versions[0] === undefined ? null : path.join(INSTALL_ROOT, versions[0], 'bin');
}

/** The bin directory for a test (in its `before`): without the binaries it is skipped, saying so, and fails under CI (test/helpers/needs.ts). */
export function postgresBinFor(ctx: Context): string {
  const bin = findPostgresBin();
  needs(ctx, `PostgreSQL server binaries (${INSTALL_ROOT}/*/bin/initdb and pg_ctl) for a private cluster`, bin !== null, 'apt-get install postgresql');
  return bin!;
}

/** initdb and postgres refuse to run as root, so as root they run as the `postgres` OS user. */
function asServerUser(file: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

async function waitForConnections(url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const pgCtl = asServerUser(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', String(READY_TIMEOUT_MS / 1000)]);
  // Synchronous, so that it also runs from the exit handler when a test run dies before stop().
  const remove = (): void => {
    process.off('exit', remove);
    try {
      execFileSync(pgCtl[0], [...pgCtl[1], 'stop', '-m', 'immediate'], { stdio: 'ignore' });
    } catch {
      // Not running (never started, or already stopped).
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', remove);
  // pg_ctl's own error only says to examine the log.
  const control = async (...args: string[]): Promise<void> => {
    try {
      await promisify(execFile)(pgCtl[0], [...pgCtl[1], ...args]);
    } catch (err) {
      throw new Error(`pg_ctl ${args.join(' ')} failed: ${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
  };
  try {
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:', dir]);
    const port = await freePort();
    const [initdb, initdbArgs] = asServerUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await promisify(execFile)(initdb, initdbArgs);
    appendFileSync(
      path.join(data, 'postgresql.conf'),
      `listen_addresses = '127.0.0.1'\nport = ${port}\nunix_socket_directories = '${dir}'\n# Throw-away data: no need to wait for the disk.\nfsync = off\n`,
    );
    await control('start');
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await waitForConnections(url);
    return {
      url,
      restart: async () => {
        await control('restart', '-m', 'fast');
        await waitForConnections(url);
      },
      stop: async () => remove(),
    };
  } catch (err) {
    remove();
    throw err;
  }
}
