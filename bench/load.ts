/**
 * Thin wrappers around autocannon's programmatic API, shared by the runner and by
 * scenario setups (which may log in first or keep a background load running).
 */
import autocannon from 'autocannon';
import type { RequestSpec } from './scenarios.ts';

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

/** POSTs JSON and returns the parsed answer; throws on a non-2xx status (setup must not fail silently). */
export async function postJson(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as unknown) : undefined;
}
