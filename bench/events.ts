/**
 * The `events` suite (BENCH_SUITE=events): holds BENCH_STREAMS (default 2,000) open
 * `GET /events/{session_id}` streams on one server, spread over the 200 bench characters and
 * so over the demo world's rooms, lets characters `say` at BENCH_SAY_RATE (default 50/s,
 * evenly spaced, open loop) for BENCH_SAY_SECONDS (default 20) and measures delivery latency
 * (say's HTTP response → `chat` event at each listener), server RSS per idle stream, server
 * CPU per delivered event and the poll route `GET /chat/{session_id}` before and while the
 * streams are open. The server is pinned to core 0 and this process to core 1 when taskset
 * exists (the machine has two shared cores: expect noise).
 */
import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { populate, type BenchPlayer } from './game-world.ts';
import { positiveNumberEnv } from './env.ts';
import { measure, percentile, postJson, round, sleep, summarize, WARMUP_SECONDS, type LoadSummary } from './load.ts';
import type { RequestSpec } from './load.ts';
import { CLIENT_CORE, cpuMs, hasTaskset, pinSelf, restoreAffinity, rssKb, SERVER_CORE, startBenchServer, type BenchServer } from './server-process.ts';
import { openEventStream } from './event-stream-client.ts';

const OPEN_BATCH = 100;
/** Streams open and nothing sent: what the RSS reading waits for. */
const IDLE_SETTLE_MS = 3000;
/** After the last say, how long late deliveries are still counted. */
const DRAIN_MS = 3000;
const TARGET_P99_MS = 50;
const TARGET_RSS_KB_PER_STREAM = 20;

export interface EventsResult {
  database: 'sqlite' | 'postgresql';
  streams: number;
  streamsOpened: number;
  openFailures: number;
  sessions: number;
  /** Characters per room (by the room `GET /status` names), as spread by bench/game-world.ts. */
  rooms: Record<string, number>;
  sayRatePerSecond: number;
  saySeconds: number;
  saysSent: number;
  sayErrors: number;
  /** Achieved say rate (open loop: lateness of the sender shows here). */
  sayRateAchieved: number;
  sayLatencyP50Ms: number;
  sayLatencyP99Ms: number;
  deliveriesExpected: number;
  deliveriesReceived: number;
  /** Deliveries of one say received twice by one stream (should be 0). */
  duplicateDeliveries: number;
  /** Deliveries that arrived before the say's HTTP response (counted as 0 ms). */
  deliveriesBeforeResponse: number;
  deliveryLatencyP50Ms: number;
  deliveryLatencyP99Ms: number;
  deliveryLatencyMaxMs: number;
  /** Streams that got an `end` event during the run, by reason, and streams closed by the server. */
  endEvents: Record<string, number>;
  streamsClosedByServer: number;
  rssBeforeKb: number;
  rssIdleKb: number;
  rssPerStreamKb: number;
  cpuSayPhaseMs: number;
  cpuPerDeliveryUs: number;
  pollConnections: number;
  pollSeconds: number;
  pollBefore: LoadSummary;
  pollWithStreams: LoadSummary;
  pinned: boolean;
  targets: { p99DeliveryUnder50Ms: boolean; rssUnder20KbPerStream: boolean; noStreamDropped: boolean };
  serverLogLines: number;
}

const log = (message: string): void => {
  process.stderr.write(`bench: events: ${message}\n`);
};
interface Listener {
  room: string;
  received: Set<number>;
  ended: boolean;
  closed: boolean;
  /** Set once the stream has opened. */
  request?: http.ClientRequest;
}

interface SayRecord {
  room: string;
  /** performance.now() when the say's HTTP response arrived; undefined until then. */
  answeredAt?: number;
  /** Receive times of deliveries that came before the answer. */
  early: number[];
  failed: boolean;
}

class EventsRun {
  readonly listeners: Listener[] = [];
  readonly says = new Map<number, SayRecord>();
  readonly latencies: number[] = [];
  endEvents: Record<string, number> = {};
  closedByServer = 0;
  duplicates = 0;
  early = 0;
  received = 0;
  /** Set while the run still counts server closes as drops. */
  counting = true;

  onChat(listener: Listener, message: string, at: number): void {
    const match = /bench-(\d+)/.exec(message);
    if (!match) return;
    const id = Number(match[1]);
    if (listener.received.has(id)) {
      this.duplicates++;
      return;
    }
    listener.received.add(id);
    this.received++;
    const say = this.says.get(id);
    if (!say) return;
    if (say.answeredAt === undefined) say.early.push(at);
    else this.latencies.push(at - say.answeredAt);
  }

  onAnswer(say: SayRecord, at: number): void {
    say.answeredAt = at;
    for (const t of say.early) {
      this.early++;
      this.latencies.push(Math.max(0, t - at));
    }
    say.early = [];
  }
}

/** Opens one stream and counts what this bench needs: chat deliveries, end events, closes by the server. */
async function openListener(run: EventsRun, baseUrl: URL, sessionId: string, room: string): Promise<Listener> {
  const listener: Listener = { room, received: new Set(), ended: false, closed: false };
  listener.request = await openEventStream(baseUrl, sessionId, {
    onFrame: (frame, at) => {
      const name = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (name === 'chat' && data) run.onChat(listener, (JSON.parse(data) as { text?: string }).text ?? '', at);
      else if (name === 'end' && data) {
        listener.ended = true;
        const reason = (JSON.parse(data) as { reason?: string }).reason ?? 'unknown';
        run.endEvents[reason] = (run.endEvents[reason] ?? 0) + 1;
      }
    },
    onClose: () => {
      listener.closed = true;
      if (run.counting) run.closedByServer++;
    },
  });
  return listener;
}

async function pollMeasure(server: BenchServer, players: BenchPlayer[], connections: number, seconds: number): Promise<LoadSummary> {
  const request: RequestSpec = { method: 'GET', path: '/chat', variants: players.map((p) => ({ path: `/chat/${p.sessionId}` })) };
  await measure(server.url, request, connections, WARMUP_SECONDS);
  return summarize(await measure(server.url, request, connections, seconds));
}

/** Runs the suite on a server of its own; `databaseUrl` as for the other suites. */
export async function runEventsSuite(databaseUrl: string | undefined, pollConnections: number, pollSeconds: number): Promise<{ result: EventsResult; serverLog: string[] }> {
  const streams = Math.round(positiveNumberEnv('BENCH_STREAMS', 2000, false));
  const sayRate = positiveNumberEnv('BENCH_SAY_RATE', 50, false);
  const saySeconds = positiveNumberEnv('BENCH_SAY_SECONDS', 20, false);

  const pinned = hasTaskset();
  const previousMask = pinned ? pinSelf(CLIENT_CORE) : undefined;
  log(pinned ? `server pinned to core ${SERVER_CORE}, bench client to core ${CLIENT_CORE}` : 'taskset not found: nothing pinned');
  // bench/game-world.ts makes 200 characters; each session carries its share of the streams.
  const perSession = Math.ceil(streams / 200);
  const server = await startBenchServer(
    databaseUrl,
    {
      MUD_BCRYPT_ROUNDS: '10',
      MUD_RATE_LIMIT_ENABLED: 'false',
      MUD_EVENTS_STREAMS_PER_INSTANCE: String(Math.max(streams, 5000)),
      MUD_EVENTS_STREAMS_PER_SESSION: String(Math.min(100, Math.max(2, perSession))),
      // Every stream comes from this machine, each account holding its session's share.
      MUD_EVENTS_STREAMS_PER_ACCOUNT: String(Math.max(10, perSession)),
      MUD_EVENTS_STREAMS_PER_ADDRESS: String(Math.max(streams, 50)),
    },
    { cpuCore: pinned ? SERVER_CORE : undefined },
  );
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal} received, stopping server`);
    void server.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const run = new EventsRun();
  try {
    const baseUrl = new URL(server.url);
    const players = await populate(server.url);
    if (players.length * 100 < streams) throw new Error(`BENCH_STREAMS ${streams} exceeds 100 streams per character`);
    log('reading each character\'s room');
    const roomOf = new Map<string, string>();
    for (const p of players) {
      const res = await fetch(`${server.url}/status/${p.sessionId}`);
      const status = (await res.json()) as { current_room?: string | null };
      roomOf.set(p.sessionId, String(status.current_room ?? 'none'));
    }
    const rooms: Record<string, number> = {};
    for (const room of roomOf.values()) rooms[room] = (rooms[room] ?? 0) + 1;

    log(`poll route before streams: ${pollSeconds} s × ${pollConnections} connections`);
    const pollBefore = await pollMeasure(server, players, pollConnections, pollSeconds);
    await sleep(1000);
    const rssBeforeKb = rssKb(server.pid);

    log(`opening ${streams} streams (${perSession} per session at most)`);
    let openFailures = 0;
    const firstErrors = new Set<string>();
    for (let start = 0; start < streams; start += OPEN_BATCH) {
      const batch = Array.from({ length: Math.min(OPEN_BATCH, streams - start) }, (_, i) => {
        const player = players[(start + i) % players.length]!;
        return openListener(run, baseUrl, player.sessionId, roomOf.get(player.sessionId)!);
      });
      for (const outcome of await Promise.allSettled(batch)) {
        if (outcome.status === 'fulfilled') run.listeners.push(outcome.value);
        else {
          openFailures++;
          firstErrors.add((outcome.reason as Error).message);
        }
      }
    }
    if (openFailures > 0) log(`${openFailures} streams failed to open: ${[...firstErrors].slice(0, 3).join('; ')}`);
    log(`${run.listeners.length} streams open; idle ${IDLE_SETTLE_MS / 1000} s`);
    await sleep(IDLE_SETTLE_MS);
    const rssIdleKb = rssKb(server.pid);

    log(`poll route with streams open: ${pollSeconds} s × ${pollConnections} connections`);
    const pollWithStreams = await pollMeasure(server, players, pollConnections, pollSeconds);

    // Listeners per room among the streams still open: the expected deliveries of one say.
    const listenersIn = (room: string): number => run.listeners.filter((l) => l.room === room && !l.closed).length;
    const total = Math.round(sayRate * saySeconds);
    const intervalMs = 1000 / sayRate;
    log(`say phase: ${total} says at ${sayRate}/s over ${saySeconds} s`);
    const sayLatencies: number[] = [];
    let sayErrors = 0;
    let expected = 0;
    const inFlight: Promise<void>[] = [];
    const cpuBefore = cpuMs(server.pid);
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const due = t0 + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const player = players[i % players.length]!;
      const room = roomOf.get(player.sessionId)!;
      const say: SayRecord = { room, early: [], failed: false };
      run.says.set(i, say);
      expected += listenersIn(room);
      const sentAt = performance.now();
      inFlight.push(
        postJson(server.url, '/command', { session_id: player.sessionId, command: `say bench-${i} evening` }).then(
          () => {
            const at = performance.now();
            sayLatencies.push(at - sentAt);
            run.onAnswer(say, at);
          },
          () => {
            sayErrors++;
            say.failed = true;
          },
        ),
      );
    }
    await Promise.all(inFlight);
    const sendSeconds = (performance.now() - t0) / 1000;
    await sleep(DRAIN_MS);
    const cpuAfter = cpuMs(server.pid);
    run.counting = false;

    // Failed says deliver nothing: take them out of the expectation.
    for (const say of run.says.values()) if (say.failed) expected -= listenersIn(say.room);
    const latencies = run.latencies.sort((a, b) => a - b);
    sayLatencies.sort((a, b) => a - b);
    const cpuSayPhaseMs = cpuAfter - cpuBefore;
    const dropped = run.closedByServer + Object.values(run.endEvents).reduce((a, b) => a + b, 0);
    const p99 = percentile(latencies, 99);
    const result: EventsResult = {
      database: server.database,
      streams,
      streamsOpened: run.listeners.length,
      openFailures,
      sessions: players.length,
      rooms,
      sayRatePerSecond: sayRate,
      saySeconds,
      saysSent: total,
      sayErrors,
      sayRateAchieved: round(total / sendSeconds, 1),
      sayLatencyP50Ms: round(percentile(sayLatencies, 50)),
      sayLatencyP99Ms: round(percentile(sayLatencies, 99)),
      deliveriesExpected: expected,
      deliveriesReceived: run.received,
      duplicateDeliveries: run.duplicates,
      deliveriesBeforeResponse: run.early,
      deliveryLatencyP50Ms: round(percentile(latencies, 50)),
      deliveryLatencyP99Ms: round(p99),
      deliveryLatencyMaxMs: round(latencies.at(-1) ?? 0),
      endEvents: run.endEvents,
      streamsClosedByServer: run.closedByServer,
      rssBeforeKb,
      rssIdleKb,
      rssPerStreamKb: round((rssIdleKb - rssBeforeKb) / Math.max(1, run.listeners.length)),
      cpuSayPhaseMs: round(cpuSayPhaseMs, 0),
      cpuPerDeliveryUs: round((cpuSayPhaseMs * 1000) / Math.max(1, run.received), 1),
      pollConnections,
      pollSeconds,
      pollBefore,
      pollWithStreams,
      pinned,
      targets: {
        p99DeliveryUnder50Ms: latencies.length > 0 && p99 < TARGET_P99_MS,
        rssUnder20KbPerStream: (rssIdleKb - rssBeforeKb) / Math.max(1, run.listeners.length) < TARGET_RSS_KB_PER_STREAM,
        noStreamDropped: dropped === 0 && openFailures === 0 && run.received >= expected,
      },
      serverLogLines: server.logLines.length,
    };
    log(
      `delivered ${result.deliveriesReceived}/${result.deliveriesExpected}, p50 ${result.deliveryLatencyP50Ms} ms, p99 ${result.deliveryLatencyP99Ms} ms, ` +
        `${result.rssPerStreamKb} KB RSS/stream, ${result.cpuPerDeliveryUs} µs CPU/delivery, dropped ${dropped}`,
    );
    return { result, serverLog: server.logLines.slice(0, 20) };
  } finally {
    run.counting = false;
    for (const l of run.listeners) l.request?.destroy();
    log('stopping server');
    await server.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (previousMask) restoreAffinity(previousMask);
  }
}

const yesNo = (ok: boolean): string => (ok ? 'pass' : 'FAIL');

/** The suite's results as a Markdown table (one row per measure), like the route table. */
export function eventsTable(r: EventsResult): string {
  const rows: Array<[string, string, string]> = [
    ['streams open (requested)', `${r.streamsOpened} (${r.streams})`, ''],
    ['say rate achieved /s (target)', `${r.sayRateAchieved} (${r.sayRatePerSecond})`, ''],
    ['say HTTP p50 / p99 ms', `${r.sayLatencyP50Ms} / ${r.sayLatencyP99Ms}`, ''],
    ['deliveries received / expected', `${r.deliveriesReceived} / ${r.deliveriesExpected}`, ''],
    ['delivery latency p50 ms', String(r.deliveryLatencyP50Ms), ''],
    ['delivery latency p99 ms', String(r.deliveryLatencyP99Ms), `< ${TARGET_P99_MS}: ${yesNo(r.targets.p99DeliveryUnder50Ms)}`],
    ['delivery latency max ms', String(r.deliveryLatencyMaxMs), ''],
    [
      'streams dropped (end events + server closes)',
      `${Object.values(r.endEvents).reduce((a, b) => a + b, 0)} + ${r.streamsClosedByServer}`,
      `0: ${yesNo(r.targets.noStreamDropped)}`,
    ],
    ['server RSS before / idle streams MB', `${round(r.rssBeforeKb / 1024, 1)} / ${round(r.rssIdleKb / 1024, 1)}`, ''],
    ['RSS per idle stream KB', String(r.rssPerStreamKb), `< ${TARGET_RSS_KB_PER_STREAM}: ${yesNo(r.targets.rssUnder20KbPerStream)}`],
    ['server CPU per delivery µs', String(r.cpuPerDeliveryUs), ''],
    [`GET /chat p50 / p99 ms, no streams (${r.pollConnections} conns)`, `${r.pollBefore.latencyP50Ms} / ${r.pollBefore.latencyP99Ms}`, `${r.pollBefore.requestsPerSecondMean} req/s`],
    [`GET /chat p50 / p99 ms, streams open`, `${r.pollWithStreams.latencyP50Ms} / ${r.pollWithStreams.latencyP99Ms}`, `${r.pollWithStreams.requestsPerSecondMean} req/s`],
  ];
  const header: [string, string, string] = [`events (${r.database})`, 'value', 'target / note'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (i === 1 ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
