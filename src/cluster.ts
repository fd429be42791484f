/**
 * `serve --workers N`: N server processes behind one port (node:cluster), each an instance like
 * any other on the shared PostgreSQL database. The primary prepares the database once (the
 * start-up steps every worker then finds done), starts the workers, replaces one that dies,
 * stops them all gracefully on SIGTERM/SIGINT, and on SIGHUP replaces them one at a time, each
 * new worker listening before the old one stops, so requests are never refused. It also counts
 * the telnet door's connections for the whole host (src/telnet/slots.ts).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config/config.ts';
import type { Logger } from './logging/logger.ts';
import { HostSlots } from './telnet/slots.ts';

/** Sent by a worker whose stop was asked for through the API (POST /admin/server/stop): every worker stops. */
export const STOP_ALL = 'mud-server:stop-all';

const SERVING = 'mud-server:serving';

interface ServingMessage {
  type: typeof SERVING;
  url: string;
}

/**
 * Sent by a worker once it serves, with its HTTP URL: the worker's 'listening' event fires
 * for each of its listeners, the telnet door's first.
 */
export function announceServing(url: string): void {
  const message: ServingMessage = { type: SERVING, url };
  process.send!(message);
}

const isServing = (message: unknown): message is ServingMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === SERVING;

/** A worker that dies sooner than this after starting waits before its replacement starts. */
const STARTUP_GRACE_MS = 5_000;
const RESTART_DELAY_MIN_MS = 250;
const RESTART_DELAY_MAX_MS = 30_000;
/** Past the workers' own shutdown timeout, how long the primary waits before killing them. */
const KILL_AFTER_EXTRA_MS = 5_000;

export interface PrimaryOptions {
  workers: number;
  config: Config;
  logger: Logger;
  /** Runs the start-up steps against the database once, before any worker starts. */
  prepare(): Promise<void>;
}

interface Tracked {
  worker: Worker;
  startedAt: number;
  /** Being stopped on purpose (rolling restart or shutdown): its exit is not a death. */
  retiring: boolean;
}

export async function runPrimary({ workers, config, logger, prepare }: PrimaryOptions): Promise<void> {
  await prepare();
  const tracked = new Map<number, Tracked>();
  let stopping = false;
  let rolling = false;
  let restartDelay = RESTART_DELAY_MIN_MS;
  let url = '';
  const telnetSlots = new HostSlots(config.telnet);

  const start = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork();
      tracked.set(worker.id, { worker, startedAt: Date.now(), retiring: false });
      worker.once('exit', () => reject(new Error(`worker ${worker.process.pid} exited before listening`)));
      worker.on('message', (message: unknown) => {
        if (message === STOP_ALL) void stopAll('api');
        else if (isServing(message)) {
          url = message.url;
          logger.info('Worker listening', { worker_pid: worker.process.pid, url });
          resolve(worker);
        } else telnetSlots.handle(worker, message);
      });
    });

  const retire = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      const entry = tracked.get(worker.id);
      if (entry) entry.retiring = true;
      if (worker.isDead()) return resolve();
      const kill = setTimeout(() => worker.process.kill('SIGKILL'), config.server.shutdownTimeoutSeconds * 1000 + KILL_AFTER_EXTRA_MS);
      worker.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      worker.process.kill('SIGTERM');
    });

  cluster.on('exit', (worker, code, signal) => {
    telnetSlots.workerGone(worker);
    const entry = tracked.get(worker.id);
    tracked.delete(worker.id);
    if (!entry || entry.retiring || stopping) return;
    const lived = Date.now() - entry.startedAt;
    restartDelay = lived < STARTUP_GRACE_MS ? Math.min(restartDelay * 2, RESTART_DELAY_MAX_MS) : RESTART_DELAY_MIN_MS;
    const delay = lived < STARTUP_GRACE_MS ? restartDelay : 0;
    logger.error('Worker died; starting a replacement', { worker_pid: worker.process.pid, code, signal, restart_in_ms: delay });
    setTimeout(() => {
      if (!stopping) start().catch((err: Error) => logger.error('Replacement worker failed to start', { error: err.message }));
    }, delay).unref();
  });

  const stopAll = async (reason: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('Stopping every worker', { reason });
    await Promise.all([...tracked.values()].map((entry) => retire(entry.worker)));
    logger.info('All workers stopped');
    process.exit(0);
  };

  const roll = async (): Promise<void> => {
    if (rolling || stopping) return;
    rolling = true;
    logger.info('Replacing every worker, one at a time');
    try {
      for (const entry of [...tracked.values()]) {
        if (stopping) break;
        if (entry.retiring) continue;
        await start();
        await retire(entry.worker);
      }
      logger.info('Every worker replaced');
    } catch (err) {
      if (!stopping) logger.error('Rolling restart failed', { error: (err as Error).message });
    } finally {
      rolling = false;
    }
  };

  process.on('SIGTERM', () => void stopAll('SIGTERM'));
  process.on('SIGINT', () => void stopAll('SIGINT'));
  process.on('SIGHUP', () => void roll());

  try {
    await Promise.all(Array.from({ length: workers }, () => start()));
  } catch (err) {
    stopping = true;
    await Promise.all([...tracked.values()].map((entry) => retire(entry.worker)));
    throw err;
  }
  logger.info('Serving with workers', { workers, primary_pid: process.pid, url });
}
