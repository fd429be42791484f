/**
 * The load generators' event-stream client: `GET /events/{session_id}` on a connection of its
 * own, split into frames with their arrival times, and nothing else parsed, so that thousands
 * of streams cost the generator little.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface EventStreamHandlers {
  /** A frame without its blank line (`id: …\nevent: …\ndata: …`, or a `: heartbeat` comment). */
  onFrame(frame: string, at: number): void;
  /** The server closed the stream (or the connection broke) after it had opened. */
  onClose(): void;
}

/** Resolves with the request once the stream answered 200; rejects on another status or a connection error. */
export function openEventStream(baseUrl: URL, sessionId: string, handlers: EventStreamHandlers): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    let opened = false;
    let closed = false;
    const close = (): void => {
      if (!opened || closed) return;
      closed = true;
      handlers.onClose();
    };
    const request = http.get({ host: baseUrl.hostname, port: baseUrl.port, path: `/events/${sessionId}`, agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET /events answered ${res.statusCode}`));
        return;
      }
      opened = true;
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          handlers.onFrame(frame, at);
        }
      });
      res.on('end', close);
      res.on('close', close);
      res.on('error', () => undefined);
      resolve(request);
    });
    request.on('error', (err) => {
      close();
      reject(err);
    });
  });
}
