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

export class BcryptPool implements PasswordHasher {
  private readonly pool: Piscina<BcryptTask, string | boolean>;
  private readonly rounds: number;

  constructor(rounds: number) {
    this.rounds = rounds;
    // Leave one core to the event loop on small machines.
    const threads = Math.max(1, availableParallelism() - 1);
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

  /** A task for a request whose client has gone is dropped from the queue (or stopped). */
  private run(task: BcryptTask): Promise<string | boolean> {
    return this.pool.run(task, { signal: requestContext.getStore()?.signal ?? null });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
