/**
 * The `faults` suite (BENCH_SUITE=faults): what an operator's faults do to the server, measured.
 *
 * - kill -9 under write load, on SQLite and (with PostgreSQL server binaries) on a throw-away
 *   PostgreSQL cluster: BENCH_FAULT_CLIENTS (default 50) clients register, say, get and drop the
 *   spawn room's item and move; the server is killed mid-run (BENCH_KILL_AFTER_SECONDS, default
 *   4) and started again on the same database. Every request that got a 2xx must be found
 *   afterwards (accounts, chat rows, item owners, locations): acknowledged vs found.
 * - PostgreSQL restart under load (the throw-away cluster): how requests fail during the outage
 *   (statuses, slowest failure), how long until the server answers 2xx again by itself, and
 *   that nothing acknowledged is lost.
 * - SQLite disk full: the database on a small tmpfs the bench mounts (needs root; otherwise said
 *   plainly and skipped), filled with a filler file; writes must answer 503 and reads keep
 *   working; once the filler is removed writes work again, and `PRAGMA integrity_check` is ok.
 * - Soak: BENCH_SOAK_SECONDS (default 600) of churn (logins, streams opened and dropped, moves,
 *   says, logouts, kicks) by BENCH_SOAK_CLIENTS (default 20) clients, then BENCH_IDLE_SECONDS
 *   (default 15) idle: RSS and heap slopes over the second half of the churn, open streams and
 *   the event loop's handles and timers after the idle against before the churn.
 *
 * Timing figures on a shared two-core machine are noisy; counts are not.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import { positiveNumberEnv } from './env.ts';
import { round, sleep } from './load.ts';
import { startBenchServer, type BenchServer } from './server-process.ts';
import { findPostgresBin, startPrivatePostgres, type PrivatePostgres } from '../test/helpers/private-postgres.ts';
import { countFound, newLedger, spawnFacts, writeLoad, type Ledger } from '../test/helpers/acknowledged-writes.ts';
import { metricValue } from '../test/helpers/metrics-text.ts';

const PASSWORD = 'Quiet-Lantern-42';
/** Server settings of every fault run: no pruning of the chat the checks look for, bcrypt at its floor. */
const FAULT_ENV = { MUD_BCRYPT_ROUNDS: '10', MUD_CHAT_MAX_MESSAGES_PER_ROOM: '1000000', MUD_LOG_LEVEL: 'warn' };

const log = (message: string): void => {
  process.stderr.write(`bench: faults: ${message}\n`);
};

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
  ms: number;
}

/** Why requests got no answer (status 0), by error, since the last takeNoAnswer(). */
let noAnswer: Record<string, number> = {};

function takeNoAnswer(): Record<string, number> {
  const taken = noAnswer;
  noAnswer = {};
  return taken;
}

/** One JSON request; a connection error is status 0. */
async function call(base: string, method: string, route: string, body?: unknown, timeoutMs = 15_000): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(base + route, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, ms: performance.now() - started };
  } catch (err) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    const key = `${method} ${route.split('/')[1]}: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
    noAnswer[key] = (noAnswer[key] ?? 0) + 1;
    return { status: 0, body: undefined, ms: performance.now() - started };
  }
}

const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300;
const word = (): string => randomBytes(6).toString('hex');

interface Client {
  username: string;
  characterId: number;
  session: string;
}

/** Why setting up clients failed, by step, status and detail (for the report). */
const setupFailures: Record<string, number> = {};

/** Registers a guest, logs in and selects its character; null (counted in setupFailures) when a step fails. */
async function newClient(base: string, name: string): Promise<Client | null> {
  const failed = (step: string, a: Answer): null => {
    const key = `${step} ${a.status} ${String(a.body?.detail ?? '')}`.trim();
    setupFailures[key] = (setupFailures[key] ?? 0) + 1;
    return null;
  };
  const reg = await call(base, 'POST', '/register-guest', { password: PASSWORD, password_confirm: PASSWORD, character_name: name });
  if (!ok(reg)) return failed('register-guest', reg);
  const login = await call(base, 'POST', '/login', { username: reg.body!.username, password: PASSWORD });
  if (!ok(login)) return failed('login', login);
  const session = String(login.body!.session_id);
  const select = await call(base, 'POST', '/characters/select', { session_id: session, character_id: reg.body!.character_id });
  if (!ok(select)) return failed('select', select);
  return { username: String(reg.body!.username), characterId: Number(reg.body!.character_id), session };
}

/** `count` clients named `<prefix><letters>`, set up ten at a time: hashing passwords is the slow part. */
async function newClients(base: string, prefix: string, count: number): Promise<Client[]> {
  const clients: Client[] = [];
  for (let start = 0; start < count; start += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, count - start) }, (_, i) => newClient(base, `${prefix}${letters(start + i)}`)));
    clients.push(...batch.filter((c): c is Client => c !== null));
  }
  return clients;
}

/** Letters only, unique per run: character names allow no digits. */
function letters(n: number): string {
  let text = '';
  do {
    text = String.fromCharCode(97 + (n % 26)) + text;
    n = Math.floor(n / 26);
  } while (n > 0);
  return text;
}

// ---------------------------------------------------------------------------------------------
// kill -9 under write load (the ledger of acknowledged writes: test/helpers/acknowledged-writes.ts)

export interface KillResult {
  database: 'sqlite' | 'postgresql';
  clients: number;
  /** Clients whose register, login and select all succeeded. */
  clientsSetUp: number;
  killAfterSeconds: number;
  requestsAnswered: number;
  unansweredAtKill: number;
  acknowledged: { accounts: number; says: number; locations: number; items: number };
  found: { accounts: number; says: number; locations: number; items: number };
  lost: string[];
  restartSeconds: number;
}

async function killUnderLoad(database: 'sqlite' | 'postgresql', url: string | undefined, clients: number, killAfterSeconds: number): Promise<KillResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-faults-'));
  const sqlitePath = path.join(dir, 'mud.db');
  const facts = await spawnFacts();
  const ledger: Ledger = newLedger();
  try {
    let server: BenchServer = await startBenchServer(url, FAULT_ENV, { sqlitePath });
    let killed = false;
    const run = letters(randomBytes(3).readUIntBE(0, 3));
    // Registered first (their accounts count as acknowledged writes too), then the load runs.
    const players = await newClients(server.url, `Fault ${run}`, clients);
    for (const player of players) ledger.accounts.add(player.username);
    const load = players.map((player) =>
      writeLoad((command) => call(server.url, 'POST', '/command', { session_id: player.session, command }), player.characterId, facts, ledger, () => killed),
    );
    await sleep(killAfterSeconds * 1000);
    log(`${database}: kill -9 after ${killAfterSeconds} s (${ledger.answered} requests answered)`);
    await server.kill();
    killed = true;
    await Promise.all(load);
    const restartStarted = performance.now();
    server = await startBenchServer(url, FAULT_ENV, { sqlitePath });
    const restartSeconds = round((performance.now() - restartStarted) / 1000);
    await server.stop();
    const db = knexFactory(url ? { client: 'pg', connection: url } : { client: 'sqlite3', connection: { filename: sqlitePath }, useNullAsDefault: true });
    try {
      const found = await countFound(db, ledger, facts);
      return {
        database,
        clients,
        clientsSetUp: ledger.accounts.size,
        killAfterSeconds,
        requestsAnswered: ledger.answered,
        unansweredAtKill: ledger.unanswered,
        acknowledged: { accounts: ledger.accounts.size, says: ledger.says.size, locations: ledger.rooms.size, items: ledger.holds.size },
        found: { accounts: found.accounts, says: found.says, locations: found.locations, items: found.items },
        lost: found.lost.slice(0, 20),
        restartSeconds,
      };
    } finally {
      await db.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL restart under load

export interface RestartResult {
  clients: number;
  /** Statuses of the requests sent while the database was restarting, until the first 2xx after it. */
  outageStatuses: Record<string, number>;
  /** The slowest answer during the outage, in ms (fail fast: bounded by the pool's 5 s wait). */
  outageSlowestMs: number;
  restartSeconds: number;
  /** From the cluster accepting connections again to the server's first 2xx. */
  recoverySeconds: number;
  saysAcknowledged: number;
  saysFound: number;
  errors500: number;
}

async function restartUnderLoad(cluster: PrivatePostgres, clients: number): Promise<RestartResult> {
  const server = await startBenchServer(cluster.url, FAULT_ENV);
  const run = letters(randomBytes(3).readUIntBE(0, 3));
  const players = await newClients(server.url, `Restart ${run}`, clients);
  const says = new Set<string>();
  const statuses: Record<string, number> = {};
  let phase: 'before' | 'outage' | 'after' = 'before';
  let slowest = 0;
  let firstOkAfter = 0;
  let errors500 = 0;
  let stop = false;
  const loop = async (client: Client): Promise<void> => {
    while (!stop) {
      const token = word();
      const answer = await call(server.url, 'POST', '/command', { session_id: client.session, command: `say ${token}` });
      if (answer.status === 500) errors500++;
      if (ok(answer)) says.add(token);
      if (phase !== 'before') {
        if (phase === 'after' && ok(answer) && firstOkAfter === 0) firstOkAfter = performance.now();
        if (firstOkAfter === 0) {
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          slowest = Math.max(slowest, answer.ms);
        }
      }
      if (!ok(answer)) await sleep(50);
    }
  };
  const load = players.map(loop);
  try {
    await sleep(2000);
    phase = 'outage';
    const started = performance.now();
    await cluster.restart();
    const back = performance.now();
    phase = 'after';
    for (let waited = 0; firstOkAfter === 0 && waited < 60_000; waited += 50) await sleep(50);
    await sleep(1000);
    stop = true;
    await Promise.all(load);
    const db = knexFactory({ client: 'pg', connection: cluster.url });
    let found = 0;
    try {
      const messages = (await db('chat_messages').pluck('message')).map(String).join('\n');
      for (const token of says) if (messages.includes(token)) found++;
    } finally {
      await db.destroy();
    }
    return {
      clients: players.length,
      outageStatuses: statuses,
      outageSlowestMs: round(slowest),
      restartSeconds: round((back - started) / 1000),
      recoverySeconds: firstOkAfter === 0 ? -1 : round((firstOkAfter - back) / 1000),
      saysAcknowledged: says.size,
      saysFound: found,
      errors500,
    };
  } finally {
    stop = true;
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// SQLite disk full

export interface DiskFullResult {
  /** How the full disk was made, or why it could not be. */
  method: string;
  skipped?: string;
  writesBeforeFull?: number;
  /** Statuses of the writes once the disk was full. */
  fullWriteStatuses?: Record<string, number>;
  readsWhileFull?: { ok: number; failed: number };
  writeAfterFreeing?: number;
  integrityCheck?: string;
}

async function diskFull(): Promise<DiskFullResult> {
  const mountPoint = mkdtempSync(path.join(tmpdir(), 'mud-full-'));
  const method = 'a 16 MiB tmpfs mounted by the bench, filled with a filler file to ~256 KiB free';
  try {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    } catch (err) {
      return { method, skipped: `cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]}): run as root to measure a full disk` };
    }
    const sqlitePath = path.join(mountPoint, 'mud.db');
    const server = await startBenchServer(undefined, FAULT_ENV, { sqlitePath });
    try {
      const client = (await newClient(server.url, `Disk ${letters(randomBytes(3).readUIntBE(0, 3))}`))!;
      const stats = statfsSync(mountPoint);
      const free = stats.bavail * stats.bsize;
      const filler = path.join(mountPoint, 'filler');
      writeFileSync(filler, Buffer.alloc(Math.max(0, free - 256 * 1024)));
      let before = 0;
      const full: Record<string, number> = {};
      for (let i = 0; i < 2000 && Object.values(full).reduce((a, b) => a + b, 0) < 20; i++) {
        const answer = await call(server.url, 'POST', '/command', { session_id: client.session, command: `say ${'x'.repeat(1900)}` });
        if (ok(answer) && Object.keys(full).length === 0) before++;
        else full[answer.status] = (full[answer.status] ?? 0) + 1;
      }
      const reads = { ok: 0, failed: 0 };
      for (let i = 0; i < 20; i++) {
        const answer = await call(server.url, 'GET', `/status/${client.session}`);
        if (ok(answer)) reads.ok++;
        else reads.failed++;
      }
      rmSync(filler);
      const after = await call(server.url, 'POST', '/command', { session_id: client.session, command: 'say room again' });
      await server.stop();
      const db = knexFactory({ client: 'sqlite3', connection: { filename: sqlitePath }, useNullAsDefault: true });
      let integrity: string;
      try {
        integrity = String((await db.raw('PRAGMA integrity_check'))[0].integrity_check);
      } finally {
        await db.destroy();
      }
      return { method, writesBeforeFull: before, fullWriteStatuses: full, readsWhileFull: reads, writeAfterFreeing: after.status, integrityCheck: integrity };
    } finally {
      await server.stop();
    }
  } finally {
    try {
      execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    } catch {
      // Not mounted.
    }
    rmSync(mountPoint, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Soak

interface Sample {
  atSeconds: number;
  rssKb: number;
  heapUsedKb: number;
  streams: number;
  handles: number;
  timers: number;
}

export interface SoakResult {
  seconds: number;
  idleSeconds: number;
  clients: number;
  cycles: number;
  requests: number;
  errors: number;
  /** The failed requests by status (0: no answer). */
  errorStatuses: Record<string, number>;
  /** Least-squares slopes over the second half of the churn, KB per minute. */
  rssSlopeKbPerMin: number;
  heapSlopeKbPerMin: number;
  before: Sample;
  endOfChurn: Sample;
  afterIdle: Sample;
}

function rssKb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

async function sample(server: BenchServer, started: number): Promise<Sample> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return {
    atSeconds: round((performance.now() - started) / 1000),
    rssKb: rssKb(server.pid),
    heapUsedKb: round(metricValue(text, 'nodejs_heap_size_used_bytes') / 1024),
    streams: metricValue(text, 'mud_event_streams_open'),
    handles: metricValue(text, 'nodejs_active_handles_total'),
    timers: metricValue(text, 'nodejs_active_resources', 'type="Timeout"'),
  };
}

function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

async function soak(seconds: number, idleSeconds: number, clients: number): Promise<SoakResult> {
  const admin = { user: 'soakadmin', password: PASSWORD };
  const server = await startBenchServer(undefined, { ...FAULT_ENV, MUD_METRICS_MODE: 'open', MUD_ADMIN_USER: admin.user, MUD_ADMIN_PASSWORD: admin.password });
  try {
    const adminSession = String((await call(server.url, 'POST', '/login', { username: admin.user, password: PASSWORD })).body!.session_id);
    const run = letters(randomBytes(3).readUIntBE(0, 3));
    const accounts = await newClients(server.url, `Soak ${run}`, clients);
    const started = performance.now();
    await sleep(1000);
    const before = await sample(server, started);
    const samples: Sample[] = [];
    const counts = { cycles: 0, requests: 0, errors: 0, errorStatuses: {} as Record<string, number> };
    const deadline = started + seconds * 1000;
    const count = (a: Answer): Answer => {
      counts.requests++;
      if (!ok(a)) {
        counts.errors++;
        counts.errorStatuses[a.status] = (counts.errorStatuses[a.status] ?? 0) + 1;
      }
      return a;
    };
    // One cycle: log in, select, open a stream, play a little, drop the stream, log out or be kicked.
    const cycle = async (account: Client): Promise<void> => {
      const login = count(await call(server.url, 'POST', '/login', { username: account.username, password: PASSWORD }));
      if (!ok(login)) return;
      const session = String(login.body!.session_id);
      count(await call(server.url, 'POST', '/characters/select', { session_id: session, character_id: account.characterId }));
      const stream = new AbortController();
      const reading = fetch(`${server.url}/events/${session}`, { signal: stream.signal })
        .then(async (res) => {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) void chunk;
        })
        .catch(() => undefined);
      for (const command of ['north', `say ${word()}`, 'look', 'south', `say ${word()}`]) count(await call(server.url, 'POST', '/command', { session_id: session, command }));
      stream.abort();
      await reading;
      if (Math.random() < 0.2) count(await call(server.url, 'POST', '/admin/session/kick', { session_id: adminSession, target_session_id: session }));
      else count(await call(server.url, 'POST', '/logout', { session_id: session }));
      counts.cycles++;
    };
    const workers = accounts.map(async (account) => {
      while (performance.now() < deadline) await cycle(account);
    });
    const sampler = (async () => {
      while (performance.now() < deadline) {
        await sleep(5000);
        samples.push(await sample(server, started));
      }
    })();
    await Promise.all([...workers, sampler]);
    const endOfChurn = await sample(server, started);
    await sleep(idleSeconds * 1000);
    const afterIdle = await sample(server, started);
    const late = samples.filter((s) => s.atSeconds >= seconds / 2);
    return {
      seconds,
      idleSeconds,
      clients: accounts.length,
      ...counts,
      rssSlopeKbPerMin: round(slope(late.map((s) => [s.atSeconds / 60, s.rssKb]))),
      heapSlopeKbPerMin: round(slope(late.map((s) => [s.atSeconds / 60, s.heapUsedKb]))),
      before,
      endOfChurn,
      afterIdle,
    };
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------

export interface FaultsResult {
  /** Clients whose set-up (register, login, select) failed, by step, status and detail. */
  setupFailures: Record<string, number>;
  /** Requests that got no answer at all (status 0), by part, route and error: expected around a kill or a restart. */
  noAnswer: Record<string, Record<string, number>>;
  kill: KillResult[];
  restart?: RestartResult;
  restartSkipped?: string;
  diskFull: DiskFullResult;
  soak: SoakResult;
}

export async function runFaultsSuite(): Promise<FaultsResult> {
  const clients = positiveNumberEnv('BENCH_FAULT_CLIENTS', 50, true);
  const killAfter = positiveNumberEnv('BENCH_KILL_AFTER_SECONDS', 4, false);
  const soakSeconds = positiveNumberEnv('BENCH_SOAK_SECONDS', 600, false);
  const idleSeconds = positiveNumberEnv('BENCH_IDLE_SECONDS', 15, false);
  const soakClients = positiveNumberEnv('BENCH_SOAK_CLIENTS', 20, true);
  const result: Partial<FaultsResult> = { kill: [], noAnswer: {} };
  log(`kill -9 under write load on SQLite (${clients} clients)`);
  result.kill!.push(await killUnderLoad('sqlite', undefined, clients, killAfter));
  result.noAnswer!.killSqlite = takeNoAnswer();
  const bin = findPostgresBin();
  if (bin) {
    let cluster = await startPrivatePostgres(bin);
    try {
      log(`kill -9 under write load on PostgreSQL (${clients} clients, throw-away cluster)`);
      result.kill!.push(await killUnderLoad('postgresql', cluster.url, clients, killAfter));
      result.noAnswer!.killPostgresql = takeNoAnswer();
    } finally {
      await cluster.stop();
    }
    cluster = await startPrivatePostgres(bin);
    try {
      log('PostgreSQL restart under load');
      result.restart = await restartUnderLoad(cluster, Math.min(clients, 20));
      result.noAnswer!.restart = takeNoAnswer();
    } finally {
      await cluster.stop();
    }
  } else {
    result.restartSkipped = 'no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): the PostgreSQL parts did not run';
  }
  log('SQLite disk full');
  result.diskFull = await diskFull();
  result.noAnswer!.diskFull = takeNoAnswer();
  log(`soak: ${soakSeconds} s of churn by ${soakClients} clients, then ${idleSeconds} s idle`);
  result.soak = await soak(soakSeconds, idleSeconds, soakClients);
  result.setupFailures = setupFailures;
  result.noAnswer!.soak = takeNoAnswer();
  return result as FaultsResult;
}

export function faultsTable(r: FaultsResult): string {
  const lines = ['| fault | database | acknowledged | found | notes |', '| --- | --- | --- | --- | --- |'];
  for (const k of r.kill) {
    const ack = k.acknowledged;
    const found = k.found;
    lines.push(
      `| kill -9 after ${k.killAfterSeconds} s, ${k.clientsSetUp} of ${k.clients} clients set up | ${k.database} | ${ack.accounts} accounts, ${ack.says} says, ${ack.locations} locations, ${ack.items} item states | ${found.accounts}, ${found.says}, ${found.locations}, ${found.items} | ${k.unansweredAtKill} in flight at the kill; restart ${k.restartSeconds} s; lost: ${k.lost.length === 0 ? 'none' : k.lost.join('; ')} |`,
    );
  }
  if (r.restart) {
    const x = r.restart;
    lines.push(
      `| PostgreSQL restart, ${x.clients} clients | postgresql | ${x.saysAcknowledged} says | ${x.saysFound} | during the outage ${JSON.stringify(x.outageStatuses)}, slowest ${x.outageSlowestMs} ms, 500s ${x.errors500}; restart ${x.restartSeconds} s, first 2xx ${x.recoverySeconds} s after |`,
    );
  } else lines.push(`| PostgreSQL restart | - | - | - | ${r.restartSkipped} |`);
  const d = r.diskFull;
  lines.push(
    d.skipped
      ? `| disk full | sqlite | - | - | skipped: ${d.skipped} |`
      : `| disk full (${d.method}) | sqlite | ${d.writesBeforeFull} says before full | - | full: ${JSON.stringify(d.fullWriteStatuses)}; reads ${d.readsWhileFull?.ok} ok / ${d.readsWhileFull?.failed} failed; after freeing ${d.writeAfterFreeing}; integrity_check ${d.integrityCheck} |`,
  );
  const s = r.soak;
  lines.push(
    `| soak ${s.seconds} s + ${s.idleSeconds} s idle, ${s.clients} clients | sqlite | ${s.cycles} cycles, ${s.requests} requests | ${s.errors} errors ${JSON.stringify(s.errorStatuses)} | RSS ${s.before.rssKb} → ${s.endOfChurn.rssKb} → ${s.afterIdle.rssKb} KB (slope ${s.rssSlopeKbPerMin} KB/min), heap ${s.before.heapUsedKb} → ${s.afterIdle.heapUsedKb} KB (slope ${s.heapSlopeKbPerMin} KB/min), streams ${s.endOfChurn.streams} → ${s.afterIdle.streams}, handles ${s.before.handles} → ${s.afterIdle.handles}, timers ${s.before.timers} → ${s.afterIdle.timers} |`,
  );
  return lines.join('\n');
}
