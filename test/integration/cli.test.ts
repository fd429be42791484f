/**
 * The real `mud-server` command line, run as a child process: help and unknown commands,
 * `migrate`, start-up failures (broken worlds, bad config) and the graceful shutdown on
 * SIGTERM/SIGINT, including a request still in flight when the signal arrives.
 *
 * Always SQLite in a fresh temporary folder; inherited MUD_* variables and DATABASE_URL are
 * dropped so the children only see what each test sets.
 */
import { describe, it, beforeEach, afterEach } from 'mocha';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory from 'knex';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(ROOT, 'src', 'cli.ts');
const URL_TIMEOUT_MS = 15_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface CliRun {
  child: ChildProcess;
  /** Everything written so far (grows while the process runs). */
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves once the process has exited and its output streams are closed. */
  exited: Promise<Exit>;
}

interface LogLine {
  level?: string;
  message?: string;
  [key: string]: unknown;
}

const children: ChildProcess[] = [];

/** Inherited environment without MUD_* variables and DATABASE_URL. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('MUD_') || name === 'DATABASE_URL') continue;
    env[name] = value;
  }
  return env;
}

function runCli(args: string[], env: Record<string, string>): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** The JSON log lines written so far (non-JSON lines are skipped). */
/** JSON log lines: `serve` logs to stdout, the one-shot commands to stderr. */
function logLines(run: CliRun, stream: 'stdout' | 'stderr' = 'stdout'): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of run[stream].split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a partial line still being written
    }
  }
  return lines;
}

function describeOutput(run: CliRun): string {
  return `\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;
}

/** Resolves with the first log line matching `match`; rejects on exit or after `timeoutMs`. */
function waitForLog(run: CliRun, match: (line: LogLine) => boolean, what: string, timeoutMs = URL_TIMEOUT_MS): Promise<LogLine> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const found = logLines(run).find(match);
      if (found) {
        cleanup();
        resolve(found);
        return true;
      }
      return false;
    };
    const onExit = (): void => {
      if (check()) return;
      cleanup();
      reject(new Error(`process exited before logging ${what}${describeOutput(run)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no ${what} within ${timeoutMs} ms${describeOutput(run)}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      run.child.stdout!.off('data', check);
      run.child.off('close', onExit);
    };
    run.child.stdout!.on('data', check);
    run.child.once('close', onExit);
    check();
  });
}

/** Waits for the "Server listening" line and returns its url. */
async function waitForUrl(run: CliRun): Promise<string> {
  const line = await waitForLog(run, (l) => l.message === 'Server listening' && typeof l.url === 'string', "'Server listening'");
  return line.url as string;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A fresh connection to `url`: resolves with the error it failed with, or null if it was served. */
function connectionAttempt(url: string): Promise<Error | null> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/health`, { agent: false, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(null);
    });
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', resolve);
  });
}

async function tableNames(dbPath: string): Promise<string[]> {
  const db = knexFactory({ client: 'sqlite3', connection: { filename: dbPath }, useNullAsDefault: true });
  try {
    const rows = (await db('sqlite_master').where({ type: 'table' }).select('name')) as Array<{ name: string }>;
    return rows.map((r) => r.name);
  } finally {
    await db.destroy();
  }
}

describe('cli: mud-server as a child process', function () {
  this.timeout(30_000);

  let dir: string;
  let dbPath: string;
  let env: Record<string, string>;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mud-cli-'));
    dbPath = path.join(dir, 'mud.db');
    // An empty INI file keeps a developer's config/server.ini out of the tests.
    const iniPath = path.join(dir, 'server.ini');
    writeFileSync(iniPath, '');
    env = {
      MUD_CONFIG: iniPath,
      MUD_HOST: '127.0.0.1',
      MUD_PORT: '0',
      MUD_DB_PATH: dbPath,
      MUD_LOG_LEVEL: 'info',
      MUD_WORLDS_ROOT: path.join(ROOT, 'worlds'),
    };
  });

  afterEach(async () => {
    const running = children.splice(0);
    await Promise.all(
      running.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
        child.kill('SIGKILL');
        await closed;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  /** `serve` must exit 1 with one `mud-server: …` line, before touching the database. */
  async function expectStartupFailure(extra: Record<string, string> = {}): Promise<string> {
    const run = runCli(['serve'], { ...env, ...extra });
    const exit = await withTimeout(run.exited, 15_000, 'exit');
    expect(exit.code, describeOutput(run)).to.equal(1);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines, describeOutput(run)).to.have.length(1);
    expect(lines[0]).to.match(/^mud-server: /);
    expect(existsSync(dbPath), 'the SQLite file was created').to.equal(false);
    expect(logLines(run).find((l) => l.message === 'Server listening')).to.equal(undefined);
    return lines[0]!;
  }

  describe('help and unknown commands', () => {
    for (const args of [['--help'], [], ['serve', '--help'], ['-h']]) {
      it(`prints the usage for ${args.length ? args.join(' ') : 'no arguments'} and exits 0`, async () => {
        const run = runCli(args, env);
        const exit = await run.exited;
        expect(exit.code, describeOutput(run)).to.equal(0);
        expect(run.stdout).to.contain('Usage: mud-server');
        expect(run.stdout).to.contain('serve');
        expect(run.stdout).to.contain('migrate');
        expect(existsSync(dbPath)).to.equal(false);
      });
    }

    it('exits 2 naming an unknown command', async () => {
      const run = runCli(['bogus'], env);
      const exit = await run.exited;
      expect(exit.code, describeOutput(run)).to.equal(2);
      expect(run.stderr).to.contain("'bogus'");
      expect(run.stdout).to.equal('');
      expect(existsSync(dbPath)).to.equal(false);
    });
  });

  describe('migrate', () => {
    it('creates the SQLite database with its tables and is idempotent', async () => {
      const first = runCli(['migrate'], env);
      expect((await first.exited).code, describeOutput(first)).to.equal(0);
      // Only the result on stdout; the log lines go to stderr.
      expect(first.stdout).to.equal('Database is up to date.\n');
      expect(existsSync(dbPath)).to.equal(true);
      expect(await tableNames(dbPath)).to.include.members(['worlds', 'users', 'sessions']);
      const applied = logLines(first, 'stderr').find((l) => l.message === 'Applied database migrations');
      expect(applied?.migrations).to.be.an('array').that.is.not.empty;

      const second = runCli(['migrate'], env);
      expect((await second.exited).code, describeOutput(second)).to.equal(0);
      expect(second.stdout).to.equal('Database is up to date.\n');
      // Nothing left to apply the second time.
      expect(logLines(second, 'stderr').find((l) => l.message === 'Applied database migrations')).to.equal(undefined);
      expect(await tableNames(dbPath)).to.include.members(['worlds', 'users', 'sessions']);
    });

    it('leaves a database that serve starts on', async () => {
      const migrate = runCli(['migrate'], env);
      expect((await migrate.exited).code, describeOutput(migrate)).to.equal(0);
      const serve = runCli(['serve'], env);
      const url = await waitForUrl(serve);
      const res = await fetch(`${url}/health`);
      expect(res.status).to.equal(200);
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code, describeOutput(serve)).to.equal(0);
    });
  });

  describe('create-superuser and grant-world', () => {
    async function userRow(username: string): Promise<Record<string, unknown> | undefined> {
      const db = knexFactory({ client: 'sqlite3', connection: { filename: dbPath }, useNullAsDefault: true });
      try {
        return await db('users').where({ username }).first();
      } finally {
        await db.destroy();
      }
    }

    it('creates a superuser from MUD_ADMIN_USER/MUD_ADMIN_PASSWORD without a terminal', async () => {
      const run = runCli(['create-superuser'], { ...env, MUD_ADMIN_USER: 'keeper', MUD_ADMIN_PASSWORD: 'Quiet-Lantern-42' });
      expect((await run.exited).code, describeOutput(run)).to.equal(0);
      expect(run.stdout).to.contain("Superuser 'keeper' created.");
      const row = await userRow('keeper');
      expect(row).to.include({ role: 'superuser', account_origin: 'superuser' });
      expect(String(row?.password_hash)).to.match(/^\$2[ab]\$12\$/);

      const again = runCli(['create-superuser'], { ...env, MUD_ADMIN_USER: 'keeper', MUD_ADMIN_PASSWORD: 'Quiet-Lantern-42' });
      expect((await again.exited).code).to.equal(1);
      expect(again.stderr).to.contain("Username 'keeper' already exists");
    });

    it('refuses a weak password with the policy messages, and asks for the variables when there is no terminal', async () => {
      const weak = runCli(['create-superuser'], { ...env, MUD_ADMIN_USER: 'keeper', MUD_ADMIN_PASSWORD: 'short' });
      expect((await weak.exited).code).to.equal(1);
      expect(weak.stderr).to.contain('Password must be at least 12 characters long (currently 5)');
      expect(await userRow('keeper')).to.equal(undefined);

      const noTty = runCli(['create-superuser'], env);
      expect((await noTty.exited).code).to.equal(1);
      expect(noTty.stderr).to.contain('set MUD_ADMIN_USER and MUD_ADMIN_PASSWORD');
    });

    it('grants a world to an account, and names what is wrong otherwise', async () => {
      const create = runCli(['create-superuser'], { ...env, MUD_ADMIN_USER: 'keeper', MUD_ADMIN_PASSWORD: 'Quiet-Lantern-42' });
      expect((await create.exited).code, describeOutput(create)).to.equal(0);
      const grant = runCli(['grant-world', 'keeper', 'hollow_spire'], env);
      expect((await grant.exited).code, describeOutput(grant)).to.equal(0);
      expect(grant.stdout).to.contain("Granted keeper access to world 'hollow_spire'.");
      const db = knexFactory({ client: 'sqlite3', connection: { filename: dbPath }, useNullAsDefault: true });
      try {
        const rows = await db('world_permissions').select('world_id', 'can_access');
        expect(rows.map((r) => [r.world_id, Boolean(r.can_access)])).to.deep.equal([['hollow_spire', true]]);
      } finally {
        await db.destroy();
      }

      for (const [args, message] of [
        [['grant-world', 'nobody', 'hollow_spire'], "User 'nobody' not found"],
        [['grant-world', 'keeper', 'atlantis'], "World 'atlantis' not found"],
        [['grant-world', 'keeper'], 'Usage: mud-server grant-world <username> <world_id>'],
      ] as const) {
        const run = runCli([...args], env);
        expect((await run.exited).code, describeOutput(run)).to.equal(1);
        expect(run.stderr).to.contain(message);
      }
    });
  });

  describe('import-policy-artifact', () => {
    const shipped = path.join(ROOT, 'worlds', 'emberwick', 'policy-artifact.json');

    async function activationCount(worldId: string): Promise<number> {
      const db = knexFactory({ client: 'sqlite3', connection: { filename: dbPath }, useNullAsDefault: true });
      try {
        const row = await db('policy_activations').where({ world_id: worldId }).count({ n: '*' }).first();
        return Number(row?.n);
      } finally {
        await db.destroy();
      }
    }

    it('imports an artifact into another world, with and without activation, and reports each row', async () => {
      const quiet = runCli(['import-policy-artifact', shipped, '--world', 'hollow_spire', '--no-activate'], env);
      expect((await quiet.exited).code, describeOutput(quiet)).to.equal(0);
      expect(quiet.stdout).to.match(/imported +imported manifest_bundle:world\.manifests:emberwick:v1/);
      expect(quiet.stdout).to.match(/world hollow_spire: 21 items, 21 imported, 0 updated, 0 skipped, 0 errors, 0 activated, 0 already active/);
      expect(await activationCount('hollow_spire')).to.equal(0);

      const active = runCli(['import-policy-artifact', shipped, '--world', 'hollow_spire'], env);
      expect((await active.exited).code, describeOutput(active)).to.equal(0);
      expect(active.stdout).to.match(/skipped +unchanged manifest_bundle:world\.manifests:emberwick:v1/);
      expect(active.stdout).to.match(/21 skipped, 0 errors, 21 activated, 0 already active/);
      expect(await activationCount('hollow_spire')).to.equal(21);
    });

    it('refuses a tampered artifact with the hash mismatch, and bad arguments with the usage', async () => {
      const tampered = path.join(dir, 'tampered.json');
      writeFileSync(tampered, readFileSync(shipped, 'utf8').replace('"text": "', '"text": "Tampered. '));
      const run = runCli(['import-policy-artifact', tampered], env);
      expect((await run.exited).code).to.equal(1);
      expect(run.stderr).to.contain('Artifact integrity check failed: artifact_hash mismatch');

      for (const args of [['import-policy-artifact'], ['import-policy-artifact', shipped, '--bogus']]) {
        const bad = runCli(args, env);
        expect((await bad.exited).code).to.equal(1);
        expect(bad.stderr).to.contain('Usage: mud-server import-policy-artifact <file> [--world <id>] [--no-activate]');
      }
      const missing = runCli(['import-policy-artifact', path.join(dir, 'nope.json')], env);
      expect((await missing.exited).code).to.equal(1);
      expect(missing.stderr).to.contain('nope.json: file is missing or unreadable');
    });
  });

  describe('a broken world stops start-up before the database is touched', () => {
    let worldsRoot: string;
    beforeEach(() => {
      worldsRoot = path.join(dir, 'worlds');
      cpSync(path.join(ROOT, 'worlds'), worldsRoot, { recursive: true });
      env.MUD_WORLDS_ROOT = worldsRoot;
    });

    it('refuses a zone file with invalid JSON, naming the file', async () => {
      const zoneFile = path.join(worldsRoot, 'emberwick', 'zones', 'bellwatch.json');
      writeFileSync(zoneFile, '{ "id": "bellwatch", "rooms": { oops');
      const line = await expectStartupFailure();
      expect(line).to.contain(zoneFile);
      expect(line).to.contain('invalid JSON');
    });

    it('refuses an exit to an unknown room, naming the file and the key', async () => {
      const zoneFile = path.join(worldsRoot, 'hollow_spire', 'zones', 'spire.json');
      const zone = JSON.parse(readFileSync(zoneFile, 'utf8')) as { rooms: Record<string, { exits: Record<string, string> }> };
      zone.rooms.spire_threshold!.exits.north = 'no_such_room';
      writeFileSync(zoneFile, JSON.stringify(zone, null, 2));
      const line = await expectStartupFailure();
      expect(line).to.contain(zoneFile);
      expect(line).to.contain('rooms.spire_threshold.exits.north');
      expect(line).to.contain('no_such_room');
    });
  });

  describe('a bad config value stops start-up', () => {
    it('MUD_PORT=abc names [server] port', async () => {
      const line = await expectStartupFailure({ MUD_PORT: 'abc' });
      expect(line).to.contain('[server] port');
      expect(line).to.contain("'abc'");
    });

    it('an unknown default world names default_world_id', async () => {
      const line = await expectStartupFailure({ MUD_DEFAULT_WORLD_ID: 'nowhere' });
      expect(line).to.contain('default_world_id');
      expect(line).to.contain('nowhere');
    });

    it('a missing MUD_CONFIG file names the file', async () => {
      const line = await expectStartupFailure({ MUD_CONFIG: '/nonexistent.ini' });
      expect(line).to.contain('/nonexistent.ini');
    });
  });

  describe('graceful shutdown', () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      it(`stops cleanly on ${signal} with exit code 0`, async () => {
        const run = runCli(['serve'], env);
        const url = await waitForUrl(run);
        const res = await fetch(`${url}/health`);
        expect(res.status).to.equal(200);
        expect(((await res.json()) as { status: string }).status).to.equal('ok');

        run.child.kill(signal);
        const exit = await withTimeout(run.exited, 15_000, `exit after ${signal}`);
        expect(exit, describeOutput(run)).to.deep.equal({ code: 0, signal: null });
        expect(run.stdout).to.contain('Shutdown complete');
        const received = logLines(run).find((l) => l.message === 'Signal received');
        expect(received?.signal).to.equal(signal);
      });
    }

    it('finishes a paused download and refuses new connections after SIGTERM', async () => {
      const run = runCli(['serve'], env);
      const url = await waitForUrl(run);
      // A keep-alive agent, like a browser's: the server must still let go of the socket.
      const agent = new http.Agent({ keepAlive: true });
      try {
        const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
          const req = http.get(`${url}/docs/swagger-ui-bundle.js`, { agent }, (r) => {
            r.pause();
            resolve(r);
          });
          req.once('error', reject);
        });
        expect(res.statusCode).to.equal(200);
        const expected = Number(res.headers['content-length']);
        expect(expected).to.be.greaterThan(1_000_000);

        run.child.kill('SIGTERM');
        await waitForLog(run, (l) => typeof l.message === 'string' && l.message.startsWith('Shutting down'), "'Shutting down'");
        await delay(200);
        expect(await connectionAttempt(url), 'a new connection after SIGTERM was served').to.be.instanceOf(Error);

        let received = 0;
        const body = new Promise<void>((resolve, reject) => {
          res.on('data', (chunk: Buffer) => (received += chunk.length));
          res.once('end', resolve);
          res.once('error', reject);
          res.once('aborted', () => reject(new Error('response aborted')));
        });
        res.resume();
        await withTimeout(body, 15_000, 'end of the paused response');
        expect(received).to.equal(expected);

        // Well before the 5 s keep-alive timeout and the 10 s shutdown timeout.
        const exit = await withTimeout(run.exited, 3_000, 'exit after the paused response was read');
        expect(exit, describeOutput(run)).to.deep.equal({ code: 0, signal: null });
        expect(run.stdout).to.contain('Shutdown complete');
        expect(logLines(run).find((l) => l.message?.startsWith('Shutdown timeout'))).to.equal(undefined);
      } finally {
        agent.destroy();
      }
    });

    it('waits for a request whose body is still arriving when SIGTERM comes', async () => {
      // Unlike a ~1.7 MB download, which fits in the loopback socket buffers, a request whose
      // body has not fully arrived cannot have been answered before the signal.
      const run = runCli(['serve'], env);
      const url = await waitForUrl(run);
      // One keep-alive socket, already accepted by the server (warmed up by registering the
      // account whose login will be in flight).
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const guest = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const register = http.request(`${url}/register-guest`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
          });
          register.once('error', reject);
          register.end(JSON.stringify({ password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD, character_name: 'Lingering Quill' }));
        });
        expect(guest.status, guest.text).to.equal(200);
        const payload = JSON.stringify({ username: (JSON.parse(guest.text) as { username: string }).username, password: GOOD_PASSWORD });
        const half = Math.floor(payload.length / 2);
        let answered = false;
        const req = http.request(`${url}/login`, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
        });
        const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
          req.once('response', (res) => {
            answered = true;
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
            res.once('error', reject);
          });
          req.once('error', reject);
        });
        req.write(payload.slice(0, half));
        // Let the server parse the headers and the first half of the body.
        await delay(300);

        run.child.kill('SIGTERM');
        await waitForLog(run, (l) => typeof l.message === 'string' && l.message.startsWith('Shutting down'), "'Shutting down'");
        expect(await connectionAttempt(url), 'a new connection after SIGTERM was served').to.be.instanceOf(Error);
        await delay(200);
        expect(answered, 'answered before the body was complete').to.equal(false);
        expect(run.child.exitCode, 'exited with a request in flight').to.equal(null);
        expect(run.stdout).to.not.contain('Shutdown complete');

        req.end(payload.slice(half));
        const { status, text } = await withTimeout(response, 10_000, 'response to the in-flight request');
        // Served in full: the login opened its session although the server was stopping.
        expect(status, text).to.equal(200);
        expect((JSON.parse(text) as { session_id: unknown }).session_id, text).to.be.a('string');

        const exit = await withTimeout(run.exited, 3_000, 'exit after the in-flight request finished');
        expect(exit, describeOutput(run)).to.deep.equal({ code: 0, signal: null });
        expect(run.stdout).to.contain('Shutdown complete');
        const logged = logLines(run).find((l) => l.message === 'request' && l.path === '/login');
        expect(logged?.status, describeOutput(run)).to.equal(status);
      } finally {
        agent.destroy();
      }
    });
  });

  describe('unknown MUD_* variables', () => {
    it('logs a warning naming the variable and still starts', async () => {
      const run = runCli(['serve'], { ...env, MUD_TYPO: '1' });
      const url = await waitForUrl(run);
      const warning = logLines(run).find((l) => l.level === 'warn' && typeof l.message === 'string' && l.message.includes('MUD_TYPO'));
      expect(warning, describeOutput(run)).to.not.equal(undefined);
      const res = await fetch(`${url}/health`);
      expect(res.status).to.equal(200);
      run.child.kill('SIGTERM');
      expect((await run.exited).code, describeOutput(run)).to.equal(0);
    });
  });
});
