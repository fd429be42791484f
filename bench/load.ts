/**
 * Thin wrappers around autocannon's programmatic API, shared by the runner and by
 * scenario setups (which may log in first or keep a background load running); an open-loop
 * load at a steady rate; and the JSON POST the setups use.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

/** One request of a load: what the scenarios describe and every generator here sends. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  /** Path and query, relative to the server's base url. */
  path: string;
  /** Sent as JSON (with `Content-Type: application/json`) when present. */
  body?: unknown;
  headers?: Record<string, string>;
  /** When set, requests cycle through these paths/bodies (e.g. one per logged-in character). */
  variants?: Array<{ path?: string; body?: unknown }>;
}

/** Run before each measurement: lets V8 optimise the hot paths and fills connection pools. */
export const WARMUP_SECONDS = 1;
/** How long an open-loop step waits for its last answers; later ones count as errors. */
const DRAIN_MS = 5000;

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** `n` rounded to `digits` decimals, for the reports. */
export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The p-th percentile (nearest rank) of ascending values; 0 for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function autocannonOptions(baseUrl: string, request: RequestSpec, connections: number): autocannon.Options {
  const headers: Record<string, string> = { ...request.headers };
  let body: string | undefined;
  if (request.body !== undefined) body = JSON.stringify(request.body);
  if (request.body !== undefined || request.variants?.some((v) => v.body !== undefined)) headers['content-type'] ??= 'application/json';
  const options: autocannon.Options = {
    url: new URL(request.path, baseUrl).href,
    method: request.method,
    headers,
    body,
    connections,
  };
  const variants = request.variants;
  if (variants && variants.length > 0) {
    // Each request takes the next variant, so the load spreads over many sessions.
    let next = 0;
    options.requests = [
      {
        setupRequest: (req) => {
          const v = variants[next++ % variants.length]!;
          return { ...req, path: v.path ?? request.path, body: v.body === undefined ? req.body : JSON.stringify(v.body) };
        },
      },
    ];
  }
  return options;
}

/** Runs one fixed-length load and resolves with autocannon's result. */
export function measure(baseUrl: string, request: RequestSpec, connections: number, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ ...autocannonOptions(baseUrl, request, connections), duration: seconds }, (err, result) => {
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(result);
    });
  });
}

export interface BackgroundLoad {
  /** Stops the load and waits until its connections are closed. */
  stop(): Promise<void>;
}

/** Keeps `connections` clients hammering `request` until stopped; for "X while Y" scenarios. */
export function startBackgroundLoad(baseUrl: string, request: RequestSpec, connections: number): BackgroundLoad {
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  // A day stands for "until stopped": the API's `forever` mode restarts rounds instead.
  const instance = autocannon({ ...autocannonOptions(baseUrl, request, connections), duration: 86_400 }, (err) => {
    if (err) process.stderr.write(`bench: background load ${request.method} ${request.path} failed: ${String(err)}\n`);
    finished();
  });
  return {
    stop: async () => {
      instance.stop();
      await done;
    },
  };
}

export interface LoadSummary {
  requestsPerSecondMean: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  errors: number;
  non2xx: number;
}

export function summarize(r: autocannon.Result): LoadSummary {
  return {
    requestsPerSecondMean: round(r.requests.mean, 1),
    latencyP50Ms: round(r.latency.p50),
    latencyP99Ms: round(r.latency.p99),
    errors: r.errors,
    non2xx: r.non2xx,
  };
}

export interface PostOptions {
  headers?: Record<string, string>;
  /** Source address of the connection: on Linux any of 127.0.0.0/8 reaches a server on 127.0.0.1. */
  localAddress?: string;
}

/** POSTs JSON and returns the parsed answer; throws on a non-2xx status (setup must not fail silently). */
export function postJson(baseUrl: string, path: string, body: unknown, options: PostOptions = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, baseUrl),
      { method: 'POST', headers: { 'content-type': 'application/json', ...options.headers }, localAddress: options.localAddress },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) reject(new Error(`POST ${path} answered ${status}: ${text.slice(0, 200)}`));
          else {
            try {
              resolve(text ? (JSON.parse(text) as unknown) : undefined);
            } catch (err) {
              reject(err as Error);
            }
          }
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

export interface OpenLoopResult {
  offeredRate: number;
  sent: number;
  /** 2xx answers per second, from the first scheduled send to the last answer. */
  achievedRate: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  /** Connection errors, and requests still unanswered DRAIN_MS after sending stopped. */
  errors: number;
  /** The errors by code (ECONNRESET, …; `unanswered` for the latter). */
  errorKinds: Record<string, number>;
  non2xx: number;
  statusCodes: Record<string, number>;
}

/**
 * Sends request `next(i)` at `rate` per second, evenly spaced, until `until` settles, then
 * waits for the answers. Open loop: a slow answer never delays the next request, and latency
 * counts from each request's scheduled send time, so a server (or this generator) that falls
 * behind shows in the latency instead of slowing the load (no coordinated omission). Timers
 * wake about every millisecond and send what is due, so sends are spaced to within ~1 ms.
 */
export async function openLoop(baseUrl: string, agent: http.Agent, next: (i: number) => RequestSpec, rate: number, until: Promise<unknown>): Promise<OpenLoopResult> {
  const target = new URL(baseUrl);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const inFlight = new Set<http.ClientRequest>();
  const errorKinds: Record<string, number> = {};
  const countError = (kind: string, n = 1): void => {
    errorKinds[kind] = (errorKinds[kind] ?? 0) + n;
  };
  let ok = 0;
  let lastAnswer = 0;
  let stopped = false;
  const stop = (): void => {
    stopped = true;
  };
  until.then(stop, stop);

  const send = (spec: RequestSpec, due: number): void => {
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = body === undefined ? spec.headers : { ...spec.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    const fail = (err: NodeJS.ErrnoException): void => {
      if (inFlight.delete(req)) countError(err.code ?? err.message);
    };
    const req = http.request({ agent, host: target.hostname, port: target.port, method: spec.method, path: spec.path, headers }, (res) => {
      res.on('error', fail);
      res.on('end', () => {
        if (!inFlight.delete(req)) return;
        lastAnswer = performance.now();
        latencies.push(lastAnswer - due);
        const status = res.statusCode ?? 0;
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status <= 299) ok++;
      });
      res.resume();
    });
    req.on('error', fail);
    inFlight.add(req);
    req.end(body);
  };

  const t0 = performance.now();
  const interval = 1000 / rate;
  let sent = 0;
  while (!stopped) {
    const now = performance.now();
    while (t0 + sent * interval <= now) {
      send(next(sent), t0 + sent * interval);
      sent++;
    }
    await sleep(Math.max(0, t0 + sent * interval - performance.now()));
  }
  const sendEnd = performance.now();
  while (inFlight.size > 0 && performance.now() - sendEnd < DRAIN_MS) await sleep(5);
  for (const req of inFlight) req.destroy();
  if (inFlight.size > 0) countError('unanswered', inFlight.size);
  inFlight.clear();

  latencies.sort((a, b) => a - b);
  const answered = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    offeredRate: rate,
    sent,
    achievedRate: round(ok / ((Math.max(lastAnswer, sendEnd) - t0) / 1000), 1),
    latencyP50Ms: round(percentile(latencies, 50)),
    latencyP99Ms: round(percentile(latencies, 99)),
    latencyMaxMs: round(latencies.at(-1) ?? 0),
    errors: Object.values(errorKinds).reduce((a, b) => a + b, 0),
    errorKinds,
    non2xx: answered - ok,
    statusCodes,
  };
}
