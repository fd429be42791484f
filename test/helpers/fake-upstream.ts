/**
 * A tiny fake HTTP upstream for tests: a real `http.Server` on 127.0.0.1 (random port) that
 * records every request and answers either from a queue of canned responses or from a handler.
 *
 *   const up = await startFakeUpstream([{ status: 503 }, { status: 200, body: { names: ['Ada'] } }]);
 *   ... call `${up.url}/api/generate` ...
 *   expect(up.requests).to.have.length(2);
 *   await up.close();
 */
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/api/generate`. */
  url: string;
  headers: IncomingHttpHeaders;
  bodyText: string;
  /** The body parsed as JSON; `undefined` when empty or not JSON. */
  body: unknown;
}

export interface CannedResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /**
   * A string is sent as-is (default content-type text/plain); anything else is JSON-encoded
   * (default content-type application/json). Omitted: empty body.
   */
  body?: unknown;
  /** Wait this long before answering (or destroying). */
  delayMs?: number;
  /** Destroy the socket instead of answering (a transport error for the client). */
  destroy?: boolean;
}

/**
 * Returns a canned response to send, or nothing when it wrote to `res` itself (for streaming
 * answers and the like). `index` counts requests from 0.
 */
export type FakeHandler = (
  req: RecordedRequest,
  res: ServerResponse,
  index: number,
) => CannedResponse | void | Promise<CannedResponse | void>;

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * With a queue, request i gets `queue[i]`; once the queue is used up every further request
 * gets 599 with a body saying so (tests then fail on the request count or the status).
 */
export async function startFakeUpstream(respond: FakeHandler | CannedResponse[]): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const handler: FakeHandler =
    typeof respond === 'function'
      ? respond
      : (_req, _res, index) => respond[index] ?? { status: 599, body: 'fake-upstream: no canned response left' };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bodyText = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = bodyText === '' ? undefined : JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyText, body };
      const index = requests.length;
      requests.push(recorded);
      void (async () => {
        try {
          const canned = await handler(recorded, res, index);
          if (!canned) return;
          if (canned.delayMs) await sleep(canned.delayMs);
          if (res.destroyed || res.writableEnded) return; // the client gave up meanwhile
          if (canned.destroy) {
            req.socket.destroy();
            return;
          }
          const headers: Record<string, string> = { ...canned.headers };
          let text = '';
          if (typeof canned.body === 'string') {
            text = canned.body;
            if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'text/plain; charset=utf-8';
          } else if (canned.body !== undefined) {
            text = JSON.stringify(canned.body);
            if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
          }
          res.writeHead(canned.status ?? 200, headers);
          res.end(text);
        } catch (err) {
          if (!res.headersSent && !res.destroyed) {
            res.writeHead(599, { 'content-type': 'text/plain' });
            res.end(`fake-upstream handler failed: ${String(err)}`);
          }
        }
      })();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A base URL on which nothing listens (connection refused): a port that was just freed. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}
