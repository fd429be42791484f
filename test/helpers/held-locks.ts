/**
 * Races made deterministic: the test holds a lock the server's transactions need, so that they
 * stop at a chosen statement until it lets go.
 *
 * - PostgreSQL: `holdLock` takes locks in a transaction of the test's own connection (a row with
 *   `SELECT … FOR UPDATE`, or a table with `LOCK TABLE … IN EXCLUSIVE MODE`: writes wait, reads
 *   go on); `waitingBehind(n)` resolves once n backends wait behind it, directly or behind one
 *   that does.
 * - SQLite: a server has one connection (src/db/database.ts), handed out first come, first
 *   served; `holdConnection` takes it, so that what the server asks of the database waits in
 *   line behind the test.
 */
import pg from 'pg';
import type { Knex } from 'knex';
import { requestContext } from '../../src/logging/logger.ts';

export interface HeldLock {
  /** Resolves once `count` backends wait behind this lock (polling pg_blocking_pids). */
  waitingBehind(count: number, timeoutMs?: number): Promise<void>;
  /** Rolls back, letting the waiting transactions go on (once; again does nothing). */
  release(): Promise<void>;
}

/** Runs `statements` in a transaction on a connection of its own, in `schema`, and keeps it open. */
export async function holdLock(url: string, schema: string | undefined, statements: string[]): Promise<HeldLock> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const pid = Number((await client.query('select pg_backend_pid() as pid')).rows[0].pid);
  await client.query('begin');
  if (schema) await client.query(`set local search_path to ${client.escapeIdentifier(schema)}`);
  for (const sql of statements) await client.query(sql);
  let released = false;
  const behind = async (): Promise<number> => {
    // Within a transaction pg_stat_activity keeps the first reading unless told to forget it.
    await client.query('select pg_stat_clear_snapshot()');
    const { rows } = await client.query<{ pid: number; blockers: number[] }>("select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity where wait_event_type = 'Lock'");
    const held = new Set([pid]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const row of rows) {
        if (!held.has(row.pid) && row.blockers.some((blocker) => held.has(blocker))) {
          held.add(row.pid);
          grew = true;
        }
      }
    }
    return held.size - 1;
  };
  return {
    async waitingBehind(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (let waiting = await behind(); waiting < count; waiting = await behind()) {
        if (Date.now() > deadline) throw new Error(`${waiting} of ${count} transactions waited behind the test's lock within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query('rollback');
      } finally {
        await client.end();
      }
    },
  };
}

export interface HeldConnection {
  /** Lets the connection go (once; again does nothing). */
  release(): Promise<void>;
}

/**
 * Takes a SQLite server's one connection (an open transaction that touches nothing, so other
 * connections to the file go on); resolves once it has it, the requests that asked for the
 * connection first having been served.
 */
export async function holdConnection(db: Knex): Promise<HeldConnection> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let done!: Promise<void>;
  await new Promise<void>((held) => {
    done = db.transaction(async () => {
      held();
      await released;
    });
  });
  return {
    async release() {
      release();
      await done;
    },
  };
}

/**
 * Counts, from now on, the times requests whose `X-Request-Id` starts with `prefix` ask for the
 * server's connection (knex's pool, tarn, asked within the request's logging context).
 */
export function connectionAsks(db: Knex, prefix: string): { count(): number; stop(): void } {
  const pool = (db.client as { pool: { on(event: string, listener: () => void): void; removeListener(event: string, listener: () => void): void } }).pool;
  let count = 0;
  const listener = (): void => {
    if (requestContext.getStore()?.requestId.startsWith(prefix)) count++;
  };
  pool.on('acquireRequest', listener);
  return { count: () => count, stop: () => pool.removeListener('acquireRequest', listener) };
}
