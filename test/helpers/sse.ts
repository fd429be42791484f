/**
 * A small server-sent events reader for the event stream tests: fetch, then a parser over
 * the body that hands out events one by one (heartbeat comments are counted, not returned).
 */
export interface SseEvent {
  id: string | undefined;
  event: string;
  // Tests inspect arbitrary event data.
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The answer's body when it is not a stream (401, 409, 503). */
  body: any;
  /** The next event; rejects after `timeoutMs` or when the stream ends first. */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** The next event of this name, skipping others. */
  nextOf(name: string, timeoutMs?: number): Promise<SseEvent>;
  /**
   * Resolves true when no event of these names (with none given, nothing but heartbeats) is
   * waiting after `ms`. Name what the test is about: an arrival announced before the stream
   * opened may still be heard after it (live events are at most once, not ordered with it).
   */
  quiet(ms: number, names?: readonly string[]): Promise<boolean>;
  /**
   * The events that came before the first `name` event `marks` accepts (which is consumed too).
   * For checks that something is not heard: send a marker after it and read up to the marker,
   * so that a late event is caught where a fixed wait would miss it.
   */
  until(name: string, marks: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  heartbeats: number;
  /** True once the server closed the stream. */
  readonly done: boolean;
  close(): void;
}

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const queue: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  let done = false;
  const wake = () => waiters.splice(0).forEach((w) => w());
  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    body: undefined,
    heartbeats: 0,
    get done() {
      return done;
    },
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0) {
        if (done) throw new Error('stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no event in time');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return queue.shift()!;
    },
    async nextOf(name, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const event = await stream.next(Math.max(1, deadline - Date.now()));
        if (event.event === name) return event;
      }
    },
    async quiet(ms, names) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return !queue.some((event) => names === undefined || names.includes(event.event));
    },
    async until(name, marks, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      const before: SseEvent[] = [];
      for (;;) {
        const event = await stream.next(Math.max(1, deadline - Date.now()));
        if (event.event === name && marks(event)) return before;
        before.push(event);
      }
    },
    close: () => controller.abort(),
  };
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const text = await res.text();
    stream.body = text ? JSON.parse(text) : undefined;
    done = true;
    return stream;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              stream.heartbeats++;
              continue;
            }
            const colon = line.indexOf(':');
            const key = colon < 0 ? line : line.slice(0, colon);
            fields[key] = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          }
          if (fields.data !== undefined) queue.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) });
          wake();
        }
      }
    } catch {
      // Aborted by close() or dropped by the server.
    }
    done = true;
    wake();
  })();
  return stream;
}
