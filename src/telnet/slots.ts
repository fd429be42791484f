/**
 * The telnet door's connection caps, per client address and in total. A connection takes a
 * slot when its TCP connection is accepted (a TLS one before its handshake) and gives it back
 * when it closes. One server counts its own; under `serve --workers` the primary counts for the
 * whole host, each worker asking it for a slot over the cluster's IPC channel, so that the
 * caps hold whichever worker the primary hands a connection to (docs/decisions.md, "The
 * telnet door").
 */
import type { Worker } from 'node:cluster';
import type { Config } from '../config/config.ts';

/** Why a connection gets no slot. */
export type Refusal = 'shutdown' | 'max_connections' | 'max_connections_per_address';

type Caps = Pick<Config['telnet'], 'maxConnections' | 'maxConnectionsPerAddress'>;

/** Where the door takes a slot for each connection it accepts. */
export interface ConnectionSlots {
  /** A slot for a connection from this address (null), or why there is none. */
  take(address: string): Promise<Refusal | null>;
  /** Gives back a slot taken for this address. */
  release(address: string): void;
  /** The door stops: a slot still asked for is refused. */
  close(): void;
}

/** Connections per address and in total, against the caps. */
class ConnectionCount {
  private readonly caps: Caps;
  private readonly perAddress = new Map<string, number>();
  private total = 0;

  constructor(caps: Caps) {
    this.caps = caps;
  }

  take(address: string): Refusal | null {
    if (this.total >= this.caps.maxConnections) return 'max_connections';
    const held = this.perAddress.get(address) ?? 0;
    if (held >= this.caps.maxConnectionsPerAddress) return 'max_connections_per_address';
    this.perAddress.set(address, held + 1);
    this.total++;
    return null;
  }

  release(address: string, count = 1): void {
    const left = (this.perAddress.get(address) ?? count) - count;
    if (left > 0) this.perAddress.set(address, left);
    else this.perAddress.delete(address);
    this.total -= count;
  }
}

/** One server's own count. */
export function localSlots(caps: Caps): ConnectionSlots {
  const count = new ConnectionCount(caps);
  return {
    take: async (address) => count.take(address),
    release: (address) => count.release(address),
    close: () => undefined,
  };
}

const TAKE = 'mud-server:telnet-slot';
const ANSWER = 'mud-server:telnet-slot-answer';
const RELEASE = 'mud-server:telnet-slot-release';

interface TakeMessage {
  type: typeof TAKE;
  id: number;
  address: string;
}
interface TakeAnswer {
  type: typeof ANSWER;
  id: number;
  refusal: Refusal | null;
}
interface ReleaseMessage {
  type: typeof RELEASE;
  address: string;
}

const isMessage = <T extends { type: string }>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

/** A worker's slots, asked of the primary (hostSlots) over the cluster's IPC channel. */
export function workerSlots(): ConnectionSlots {
  let lastId = 0;
  const waiting = new Map<number, (refusal: Refusal | null) => void>();
  const answered = (message: unknown): void => {
    if (!isMessage<TakeAnswer>(message, ANSWER)) return;
    waiting.get(message.id)?.(message.refusal);
    waiting.delete(message.id);
  };
  process.on('message', answered);
  return {
    take: (address) =>
      new Promise((resolve) => {
        // A worker without its primary is stopping (src/cli.ts).
        if (!process.connected) return resolve('shutdown');
        const id = ++lastId;
        waiting.set(id, resolve);
        const message: TakeMessage = { type: TAKE, id, address };
        process.send!(message, (err: Error | null) => {
          if (!err) return;
          waiting.delete(id);
          resolve('shutdown');
        });
      }),
    release: (address) => {
      const message: ReleaseMessage = { type: RELEASE, address };
      // Without the primary there is nothing to give back to: it forgets a gone worker's slots.
      if (process.connected) process.send!(message, () => undefined);
    },
    close: () => {
      process.off('message', answered);
      for (const resolve of waiting.values()) resolve('shutdown');
      waiting.clear();
    },
  };
}

/**
 * The primary's count for the host, kept per worker too, so that the slots of a worker that
 * dies (and its connections with it) are freed.
 */
export class HostSlots {
  private readonly count: ConnectionCount;
  private readonly byWorker = new Map<number, Map<string, number>>();

  constructor(caps: Caps) {
    this.count = new ConnectionCount(caps);
  }

  /** Answers a worker's slot message; false for any other message. */
  handle(worker: Worker, message: unknown): boolean {
    if (isMessage<TakeMessage>(message, TAKE)) {
      // A worker already going away takes nothing: workerGone may have run for it.
      if (!worker.isConnected()) return true;
      const refusal = this.count.take(message.address);
      if (refusal === null) this.add(worker.id, message.address, 1);
      const answer: TakeAnswer = { type: ANSWER, id: message.id, refusal };
      worker.send(answer, () => undefined);
      return true;
    }
    if (isMessage<ReleaseMessage>(message, RELEASE)) {
      if (this.add(worker.id, message.address, -1)) this.count.release(message.address);
      return true;
    }
    return false;
  }

  /** The worker is gone: every slot it held is free. */
  workerGone(worker: Worker): void {
    for (const [address, held] of this.byWorker.get(worker.id) ?? []) this.count.release(address, held);
    this.byWorker.delete(worker.id);
  }

  /** Changes the worker's count for the address; false when it held no slot there. */
  private add(workerId: number, address: string, change: number): boolean {
    const held = this.byWorker.get(workerId) ?? new Map<string, number>();
    const now = (held.get(address) ?? 0) + change;
    if (now < 0) return false;
    if (now === 0) held.delete(address);
    else held.set(address, now);
    if (held.size > 0) this.byWorker.set(workerId, held);
    else this.byWorker.delete(workerId);
    return true;
  }
}
