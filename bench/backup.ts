/**
 * The `backup` suite (BENCH_SUITE=backup): what `mud-server backup` and `copy-db` cost on a
 * large database, and how much a backup slows the server that goes on serving meanwhile.
 *
 * The database: the server's own (its worlds, migrations) plus BENCH_BACKUP_ACCOUNTS accounts
 * with a character and a session each (default 10,000, as the players suite) and
 * BENCH_BACKUP_CHAT chat rows (default 100,000), written straight into it; 200 players made
 * through the API carry the load. Then, BENCH_ROUNDS rounds (default 3), medians reported:
 *  - the server under a steady light load (BENCH_BACKUP_RATE requests/s, default 50, open
 *    loop: GET /chat, look, say in turn) for BENCH_BACKUP_SECONDS (default 10) without a backup,
 *    then as long again with backups running one after another, then again with them under
 *    `nice -n 19`, then with `mud-server --help` run one after another instead (what starting
 *    the command line costs the server); each answer's p50 and p99, and their ratio to the
 *    same round's without;
 *  - each backup's time (start to exit, and the copy alone as it reports it) and peak memory
 *    (/usr/bin/time's maximum RSS of the command), beside `mud-server --help`'s (the start alone);
 *  - with the server stopped (copy-db refuses a SQLite source a server serves): copy-db to a new
 *    PostgreSQL database (BENCH_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432/postgres)
 *    and from it to a new SQLite file, time and peak memory.
 * The server runs on core 0 and the load on core 1 where taskset exists; the commands may use
 * both cores, as an operator's would.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../src/db/database.ts';
import { toDbTime } from '../src/db/clock.ts';
import { positiveNumberEnv } from './env.ts';
import { populate, type BenchPlayer } from './game-world.ts';
import { openLoop, percentile, round, sleep, type OpenLoopResult, type RequestSpec } from './load.ts';
import { markdownTable } from './markdown.ts';
import { CLIENT_CORE, hasTaskset, newDatabase, pinSelf, restoreAffinity, SERVER_CORE, startBenchServer, type BenchServer } from './server-process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'src', 'cli.ts');
const TIME = '/usr/bin/time';
const WORLD = 'emberwick';
const ROOMS = ['lockkeepers_square', 'ropewalk_bridge', 'chandlers_row', 'sooty_heron_taproom', 'tinkers_wharf'];
/** Chat kept whole: the server would prune it to 500 a room at start. */
const SERVER_ENV = { MUD_BCRYPT_ROUNDS: '10', MUD_CHAT_RETENTION_DAYS: '3650', MUD_CHAT_MAX_MESSAGES_PER_ROOM: '1000000' };

export interface CommandCost {
  /** The command's whole run, its start included. */
  seconds: number;
  peakRssMb: number;
  /** What the command itself reports as its copy's time (backup's "in X s"), when it does. */
  workSeconds?: number;
  /** What it printed. */
  stdout?: string;
}

export interface BackupResult {
  pinned: boolean;
  accounts: number;
  chat: number;
  databaseMb: number;
  rounds: number;
  rate: number;
  seconds: number;
  /** Medians over the rounds. */
  withoutBackup: LoadFigures;
  duringBackup: LoadFigures;
  /** The same with the backups run under `nice -n 19`. */
  duringNiceBackup: LoadFigures;
  /** The same with `mud-server --help` run one after another instead: the command line's start alone. */
  duringStarts: LoadFigures;
  backupsPerRound: number;
  /** `mud-server --help`: what starting the command line costs before any work. */
  start: CommandCost;
  backup: CommandCost;
  copyToPostgres: CommandCost | null;
  copyToSqlite: CommandCost | null;
  /** copy-db's report of its last copy to PostgreSQL. */
  copyReport: string | null;
}

export interface LoadFigures {
  p50Ms: number;
  p99Ms: number;
  achievedRate: number;
  errors: number;
  /** Medians of each round's figure over the same round's without a backup. */
  p50Ratio?: number;
  p99Ratio?: number;
}

const median = (values: number[]): number => percentile([...values].sort((a, b) => a - b), 50);
const log = (message: string): void => {
  process.stderr.write(`bench: backup: ${message}\n`);
};

/** Runs a mud-server command under /usr/bin/time (and `nice -n 19` when `nice`); its wall time and peak RSS. */
async function timedCommand(args: string[], env: NodeJS.ProcessEnv, pinned: boolean, nice = false): Promise<CommandCost> {
  const report = path.join(tmpdir(), `mud-bench-time-${randomBytes(4).toString('hex')}`);
  const command = [TIME, '-f', '%e %M', '-o', report, ...(nice ? ['nice', '-n', '19'] : []), process.execPath, CLI, ...args];
  // Both cores, whatever this process is pinned to (children inherit its affinity).
  const [file, ...argv] = pinned ? ['taskset', '-c', `${SERVER_CORE},${CLIENT_CORE}`, ...command] : command;
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(file!, argv, { cwd: ROOT, env: { ...process.env, MUD_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err] = ['', ''];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(-500)}`))));
  });
  const [seconds, kb] = readFileSync(report, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  rmSync(report, { force: true });
  const work = / in ([\d.]+) s\.$/m.exec(stdout);
  return { seconds: seconds!, peakRssMb: round(kb! / 1024, 1), stdout, ...(work && { workSeconds: Number(work[1]) }) };
}

/** A command run one time after another (at least once) for `seconds`; its costs. */
async function repeatedFor(seconds: number, args: string[], env: NodeJS.ProcessEnv, pinned: boolean, nice: boolean): Promise<CommandCost[]> {
  const until = performance.now() + seconds * 1000;
  const costs: CommandCost[] = [];
  while (costs.length === 0 || performance.now() < until) costs.push(await timedCommand(args, env, pinned, nice));
  return costs;
}

/** Accounts, characters, sessions and chat, written straight into the stopped server's database. */
async function fill(db: Knex, accounts: number, chat: number): Promise<void> {
  const stamp = toDbTime(new Date());
  const expires = toDbTime(new Date(Date.now() + 8 * 3_600_000));
  const tag = randomBytes(3).toString('hex');
  await db.transaction(async (trx) => {
    for (let start = 0; start < accounts; start += 500) {
      const n = Math.min(500, accounts - start);
      const users = Array.from({ length: n }, (_, i) => ({ username: `b${tag}${start + i}`, username_key: `b${tag}${start + i}`, password_hash: '!', role: 'player', is_guest: false, account_origin: 'system', created_at: stamp }));
      await trx('users').insert(users);
      const ids: Array<{ id: number; username: string }> = await trx('users').whereIn('username', users.map((u) => u.username)).select('id', 'username');
      const letters = (k: number): string => Array.from({ length: 5 }, (_, j) => String.fromCharCode(97 + (Math.floor(k / 26 ** j) % 26))).join('');
      await trx('characters').insert(
        ids.map((u, i) => {
          const name = `Bench ${tag.replace(/\d/g, 'x')} ${letters(start + i)}`;
          return { user_id: u.id, name, name_key: name.toLowerCase(), world_id: WORLD, room_id: ROOMS[(start + i) % ROOMS.length], is_guest_created: false, created_at: stamp, updated_at: stamp, state_seed: 0 };
        }),
      );
      await trx('sessions').insert(ids.map((u) => ({ token_hash: createHash('sha256').update(randomUUID()).digest('hex'), user_id: u.id, world_id: WORLD, client_type: 'bench', created_at: stamp, last_activity: stamp, expires_at: expires })));
    }
    for (let start = 0; start < chat; start += 500) {
      const rows = Array.from({ length: Math.min(500, chat - start) }, (_, i) => ({
        world_id: WORLD,
        room_id: ROOMS[(start + i) % ROOMS.length],
        sender_name: 'Bench Speaker',
        channel: 'say',
        message: `Message ${start + i}: the locks turn, the bells ring, and the canal keeps its counsel.`,
        created_at: stamp,
      }));
      await trx('chat_messages').insert(rows);
    }
  });
}

/** Request i of the light load: a chat poll, a look, a say, players in turn. */
function lightMix(players: BenchPlayer[]): (i: number) => RequestSpec {
  return (i) => {
    const p = players[i % players.length]!;
    switch (i % 3) {
      case 0:
        return { method: 'GET', path: `/chat/${p.sessionId}` };
      case 1:
        return { method: 'POST', path: '/command', body: { session_id: p.sessionId, command: 'look' } };
      default:
        return { method: 'POST', path: '/command', body: { session_id: p.sessionId, command: `say steady ${i}` } };
    }
  };
}

export async function runBackupSuite(databaseUrl: string | undefined): Promise<{ result: BackupResult; serverLog: string[] }> {
  const accounts = positiveNumberEnv('BENCH_BACKUP_ACCOUNTS', 10_000, true);
  const chat = positiveNumberEnv('BENCH_BACKUP_CHAT', 100_000, true);
  const rounds = positiveNumberEnv('BENCH_ROUNDS', 3, true);
  const rate = positiveNumberEnv('BENCH_BACKUP_RATE', 50, false);
  const seconds = positiveNumberEnv('BENCH_BACKUP_SECONDS', 10, false);
  const postgres = databaseUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const pinned = hasTaskset();
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-bench-backup-'));
  const file = path.join(dir, 'mud.db');
  const serverLog: string[] = [];
  const samples = {
    without: [] as OpenLoopResult[],
    during: [] as OpenLoopResult[],
    duringNice: [] as OpenLoopResult[],
    duringStarts: [] as OpenLoopResult[],
    starts: [] as CommandCost[],
    backups: [] as CommandCost[],
    toPg: [] as CommandCost[],
    toSqlite: [] as CommandCost[],
    perRound: [] as number[],
  };
  const mask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  try {
    // The server migrates and seeds the file; the bulk goes in while it is stopped.
    let server: BenchServer = await startBenchServer(undefined, SERVER_ENV, { sqlitePath: file });
    await server.stop();
    log(`writing ${accounts} accounts, characters and sessions and ${chat} chat rows`);
    const db = knexFactory(knexConfig({ sqlitePath: file, url: '' }));
    try {
      await fill(db, accounts, chat);
    } finally {
      await db.destroy();
    }
    server = await startBenchServer(undefined, SERVER_ENV, { sqlitePath: file, cpuCore: pinned ? SERVER_CORE : undefined });
    let players: BenchPlayer[];
    try {
      players = await populate(server.url);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      const next = lightMix(players);
      const out = path.join(dir, 'backup.db');
      for (let r = 0; r < rounds; r++) {
        samples.starts.push(await timedCommand(['--help'], {}, pinned));
        samples.without.push(await openLoop(server.url, agent, next, rate, sleep(seconds * 1000)));
        const backup = ['backup', out, '--force'];
        const backups = repeatedFor(seconds, backup, { MUD_DB_PATH: file }, pinned, false);
        samples.during.push(await openLoop(server.url, agent, next, rate, backups));
        samples.backups.push(...(await backups));
        samples.perRound.push((await backups).length);
        const niceBackups = repeatedFor(seconds, backup, { MUD_DB_PATH: file }, pinned, true);
        samples.duringNice.push(await openLoop(server.url, agent, next, rate, niceBackups));
        await niceBackups;
        // The same number of command-line starts without a backup: what starting costs the server.
        const starts = repeatedFor(seconds, ['--help'], {}, pinned, false);
        samples.duringStarts.push(await openLoop(server.url, agent, next, rate, starts));
        await starts;
        const [a, b, c, d] = [samples.without.at(-1)!, samples.during.at(-1)!, samples.duringNice.at(-1)!, samples.duringStarts.at(-1)!];
        const pair = (o: OpenLoopResult): string => `${round(o.latencyP50Ms)}/${round(o.latencyP99Ms)} ms`;
        log(`round ${r + 1}: p50/p99 ${pair(a)} without, ${pair(b)} during ${(await backups).length} backups (${samples.backups.at(-1)!.seconds} s each), ${pair(c)} under nice, ${pair(d)} during --help`);
      }
      agent.destroy();
    } finally {
      await server.stop();
      serverLog.push(...server.logLines);
    }
    const databaseMb = round(statSync(file).size / 1048576, 1);
    let postgresOk = true;
    try {
      const probe = knexFactory({ client: 'pg', connection: postgres, pool: { min: 0, max: 1 } });
      await probe.raw('select 1').finally(() => probe.destroy());
    } catch {
      postgresOk = false;
      log(`no PostgreSQL at ${postgres}: copy-db not measured`);
    }
    for (let r = 0; postgresOk && r < rounds; r++) {
      const target = await newDatabase(postgres);
      try {
        samples.toPg.push(await timedCommand(['copy-db', '--to', target.url], { MUD_DB_PATH: file }, pinned));
        const back = path.join(dir, `back-${r}.db`);
        samples.toSqlite.push(await timedCommand(['copy-db', '--to', back], { DATABASE_URL: target.url }, pinned));
        rmSync(back, { force: true });
        log(`round ${r + 1}: copy-db to PostgreSQL ${samples.toPg.at(-1)!.seconds} s, back to SQLite ${samples.toSqlite.at(-1)!.seconds} s`);
      } finally {
        await target.drop();
      }
    }
    const cost = (list: CommandCost[]): CommandCost => {
      const work = list.flatMap((c) => (c.workSeconds === undefined ? [] : [c.workSeconds]));
      return { seconds: median(list.map((c) => c.seconds)), peakRssMb: median(list.map((c) => c.peakRssMb)), ...(work.length > 0 && { workSeconds: median(work) }) };
    };
    const ratio = (list: OpenLoopResult[], key: 'latencyP50Ms' | 'latencyP99Ms'): number => round(median(list.map((d, i) => d[key] / samples.without[i]![key])));
    const summary = (list: OpenLoopResult[], compared: boolean): LoadFigures => ({
      p50Ms: round(median(list.map((s) => s.latencyP50Ms))),
      p99Ms: round(median(list.map((s) => s.latencyP99Ms))),
      achievedRate: round(median(list.map((s) => s.achievedRate)), 1),
      errors: list.reduce((sum, s) => sum + s.errors + s.non2xx, 0),
      ...(compared && { p50Ratio: ratio(list, 'latencyP50Ms'), p99Ratio: ratio(list, 'latencyP99Ms') }),
    });
    return {
      result: {
        pinned,
        accounts,
        chat,
        databaseMb,
        rounds,
        rate,
        seconds,
        withoutBackup: summary(samples.without, false),
        duringBackup: summary(samples.during, true),
        duringNiceBackup: summary(samples.duringNice, true),
        duringStarts: summary(samples.duringStarts, true),
        backupsPerRound: median(samples.perRound),
        start: cost(samples.starts),
        backup: cost(samples.backups),
        copyToPostgres: samples.toPg.length > 0 ? cost(samples.toPg) : null,
        copyToSqlite: samples.toSqlite.length > 0 ? cost(samples.toSqlite) : null,
        copyReport: samples.toPg.at(-1)?.stdout ?? null,
      },
      serverLog,
    };
  } finally {
    if (mask) restoreAffinity(mask);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function backupTable(r: BackupResult): string {
  const title = `${r.accounts} accounts, characters and sessions, ${r.chat} chat rows: ${r.databaseMb} MB of SQLite; ${r.rounds} rounds, medians`;
  const row = (name: string, f: LoadFigures): string[] => [name, f.p50Ms, f.p99Ms, f.p50Ratio ?? '', f.p99Ratio ?? '', f.achievedRate, f.errors].map(String);
  const load = markdownTable(
    [`steady ${r.rate} req/s (chat poll, look, say), ${r.seconds} s`, 'p50 ms', 'p99 ms', 'p50 / without', 'p99 / without', 'achieved req/s', 'errors'],
    [
      row('without a backup', r.withoutBackup),
      row(`during backups, one after another (${r.backupsPerRound} a round)`, r.duringBackup),
      row('during backups under nice -n 19', r.duringNiceBackup),
      row('during mud-server --help, one after another', r.duringStarts),
    ],
  );
  const commands = markdownTable(
    ['command', 'seconds (start to exit)', 'of which the copy', 'peak RSS MB'],
    [
      ['mud-server --help (start alone)', r.start.seconds, '', r.start.peakRssMb],
      ['backup (server serving the load)', r.backup.seconds, r.backup.workSeconds ?? '', r.backup.peakRssMb],
      ['copy-db SQLite → PostgreSQL', r.copyToPostgres?.seconds ?? 'not run', '', r.copyToPostgres?.peakRssMb ?? ''],
      ['copy-db PostgreSQL → SQLite', r.copyToSqlite?.seconds ?? 'not run', '', r.copyToSqlite?.peakRssMb ?? ''],
    ].map((cells) => cells.map(String)),
  );
  return [title, load, commands].join('\n\n');
}
