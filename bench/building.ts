/**
 * The `building` suite (BENCH_SUITE=building): what one building change costs as a world grows
 * (issue 30, finding 2: a room creation took 12 ms at 500 rooms and 264 ms at 4,000). For each
 * size of BENCH_BUILD_ROOMS (default 500,3000,10000), that many builders' rooms are written
 * straight into the database as one revision of the world, as an import would; one change lets
 * the server catch up on them (not measured); then BENCH_BUILD_CHANGES room creations (default
 * 40) are made one after another through POST /api/worlds/emberwick/rooms, each timed, with the
 * server's CPU over them. The bare Express hello on the same Node and core, asked the same
 * number of times one after another, is the baseline of the same run. The server runs on core
 * 0 and this process on core 1 where taskset exists; BENCH_ROUNDS rounds, medians reported.
 */
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import { knexConfig } from '../src/db/database.ts';
import { positiveListEnv, positiveNumberEnv } from './env.ts';
import { percentile, postJson, round } from './load.ts';
import { markdownTable } from './markdown.ts';
import { CLIENT_CORE, cpuMs, hasTaskset, pinSelf, restoreAffinity, SERVER_CORE, startBenchServer, startHelloServer, type BenchServer } from './server-process.ts';

const WORLD = 'emberwick';
const ADMIN = 'benchbuilder';
const PASSWORD = 'Quiet-Lantern-42';

export interface BuildingRow {
  rooms: number;
  /** Medians over the rounds of each round's p50 and p90 of one change, and of the server's CPU per change. */
  changeP50Ms: number;
  changeP90Ms: number;
  serverCpuPerChangeMs: number;
  /** A change's p50 over the hello's p50 of the same round (median over rounds). */
  ratioToHello: number;
}

export interface BuildingResult {
  pinned: boolean;
  changes: number;
  rounds: number;
  helloP50Ms: number;
  rows: BuildingRow[];
}

const median = (values: number[]): number => percentile([...values].sort((a, b) => a - b), 50);

async function timed(run: () => Promise<unknown>, times: number): Promise<number[]> {
  const took: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await run();
    took.push(performance.now() - start);
  }
  return took.sort((a, b) => a - b);
}

/** `count` rooms of the canal quarter, written behind the server as the world's next revision. */
async function writeRooms(db: Knex, prefix: string, count: number): Promise<void> {
  const last = await db('world_rooms').where({ world_id: WORLD }).max({ revision: 'revision' }).first();
  const revision = Number(last?.revision ?? 0) + 1;
  const rows = Array.from({ length: count }, (_, i) => ({
    world_id: WORLD,
    room_id: `${prefix}_${i}`,
    zone_id: 'canal_quarter',
    name: `Storeroom ${prefix} ${i}`,
    description: 'Crates to the ceiling.',
    exits: '{}',
    deleted: false,
    version: 1,
    revision,
    updated_at: '2026-11-27 00:00:00',
  }));
  for (let i = 0; i < rows.length; i += 100) await db('world_rooms').insert(rows.slice(i, i + 100));
}

export async function runBuildingSuite(databaseUrl: string | undefined): Promise<{ result: BuildingResult; serverLog: string[] }> {
  const sizes = positiveListEnv('BENCH_BUILD_ROOMS', [500, 3000, 10000]);
  const changes = positiveNumberEnv('BENCH_BUILD_CHANGES', 40, true);
  const rounds = positiveNumberEnv('BENCH_ROUNDS', 3, true);
  const pinned = hasTaskset();
  const mask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  const hello = await startHelloServer(pinned ? SERVER_CORE : undefined);
  const perSize = new Map<number, { p50: number[]; p90: number[]; cpu: number[]; ratio: number[] }>(sizes.map((n) => [n, { p50: [], p90: [], cpu: [], ratio: [] }]));
  const helloP50s: number[] = [];
  const serverLog: string[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      // A fresh server each round: its world starts from the package.
      const server: BenchServer = await startBenchServer(
        databaseUrl,
        { MUD_ADMIN_USER: ADMIN, MUD_ADMIN_PASSWORD: PASSWORD, MUD_BUILDING_MAX_ROOMS_PER_WORLD: '1000000' },
        { cpuCore: pinned ? SERVER_CORE : undefined },
      );
      const db = knexFactory(knexConfig({ sqlitePath: server.sqlitePath ?? '', url: databaseUrl ?? '' }));
      try {
        const { session_id: session } = (await postJson(server.url, '/login', { username: ADMIN, password: PASSWORD })) as { session_id: string };
        const create = (id: string) => postJson(server.url, `/api/worlds/${WORLD}/rooms`, { id, name: `Room ${id}`, description: 'Freshly built.' }, { headers: { Authorization: `Bearer ${session}` } });
        let written = 0;
        for (const size of sizes) {
          await writeRooms(db, `r${r}s${size}`, size - written);
          written = size;
          await create(`catch_up_${r}_${size}`);
          const helloTimes = await timed(() => fetch(hello.url).then((res) => res.text()), changes);
          let n = 0;
          const cpuBefore = cpuMs(server.pid);
          const times = await timed(() => create(`built_${r}_${size}_${n++}`), changes);
          const cpu = (cpuMs(server.pid) - cpuBefore) / changes;
          const helloP50 = percentile(helloTimes, 50);
          helloP50s.push(helloP50);
          const row = perSize.get(size)!;
          row.p50.push(percentile(times, 50));
          row.p90.push(percentile(times, 90));
          row.cpu.push(cpu);
          row.ratio.push(percentile(times, 50) / helloP50);
          process.stderr.write(`bench: building round ${r + 1}, ${size} rooms: p50 ${round(percentile(times, 50))} ms, CPU ${round(cpu)} ms per change\n`);
        }
      } finally {
        await db.destroy();
        await server.stop();
        serverLog.push(...server.logLines);
      }
    }
  } finally {
    await hello.stop();
    if (mask) restoreAffinity(mask);
  }
  const rows = sizes.map((rooms) => {
    const m = perSize.get(rooms)!;
    return { rooms, changeP50Ms: round(median(m.p50)), changeP90Ms: round(median(m.p90)), serverCpuPerChangeMs: round(median(m.cpu)), ratioToHello: round(median(m.ratio), 1) };
  });
  return { result: { pinned, changes, rounds, helloP50Ms: round(median(helloP50s), 3), rows }, serverLog };
}

export function buildingTable(result: BuildingResult): string {
  const header = ['builders\u2019 rooms', 'change p50 ms', 'change p90 ms', 'server CPU per change ms', 'p50 / hello p50'];
  return markdownTable(header, result.rows.map((r) => [r.rooms, r.changeP50Ms, r.changeP90Ms, r.serverCpuPerChangeMs, r.ratioToHello].map(String)));
}
