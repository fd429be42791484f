/**
 * Password hashing with bcryptjs on a worker-thread pool. bcryptjs's own async mode runs on
 * the main thread in 100 ms slices, so a burst of logins would stall game traffic; in the
 * pool the main thread only waits. Any stored cost verifies ($2a$/$2b$/$2y$ alike).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { BcryptTask } from './bcrypt-worker.ts';
import { requestContext } from '../../logging/logger.ts';

/** bcrypt reads only this many bytes of a password and silently ignores the rest. */
export const BCRYPT_MAX_PASSWORD_BYTES = 72;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(password: string, hash: string): Promise<boolean>;
  close(): Promise<void>;
}

interface Waiting {
  task: BcryptTask;
  signal: AbortSignal | null;
  resolve: (result: string | boolean) => void;
  reject: (reason: unknown) => void;
}

/**
 * Tasks wait in this class's own queue, first come first served, and reach Piscina only when a
 * thread is free. Piscina's queue does not keep that order for tasks with an abort signal
 * (every request's): one that found the threads busy went behind later ones, and under a
 * steady stream of logins some waited until their clients gave up.
 */
export class BcryptPool implements PasswordHasher {
  private readonly pool: Piscina<BcryptTask, string | boolean>;
  private readonly rounds: number;
  private readonly threads: number;
  private readonly waiting: Waiting[] = [];
  private running = 0;

  /** `threads` leaves one core to the event loop by default. */
  constructor(rounds: number, threads = Math.max(1, availableParallelism() - 1)) {
    this.rounds = rounds;
    this.threads = threads;
    this.pool = new Piscina({
      filename: new URL('./bcrypt-worker.ts', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 60_000,
    });
  }

  async hash(password: string): Promise<string> {
    return (await this.run({ op: 'hash', password, rounds: this.rounds })) as string;
  }

  /**
   * A password over BCRYPT_MAX_PASSWORD_BYTES never matches: none is accepted as a new password,
   * and one could match an older hash only by its first 72 bytes, a truncation the server refuses.
   */
  async verify(password: string, hash: string): Promise<boolean> {
    if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_PASSWORD_BYTES) return false;
    return (await this.run({ op: 'verify', password, hash })) as boolean;
  }

  private run(task: BcryptTask): Promise<string | boolean> {
    const signal = requestContext.getStore()?.signal ?? null;
    return new Promise((resolve, reject) => {
      this.waiting.push({ task, signal, resolve, reject });
      this.next();
    });
  }

  /** The oldest waiting tasks to the free threads; a task whose client has gone is dropped unrun (or stopped while running). */
  private next(): void {
    while (this.running < this.threads && this.waiting.length > 0) {
      const { task, signal, resolve, reject } = this.waiting.shift()!;
      if (signal?.aborted) {
        reject(signal.reason);
        continue;
      }
      this.running++;
      this.pool
        .run(task, { signal })
        .then(resolve, reject)
        .finally(() => {
          this.running--;
          this.next();
        });
    }
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
