/**
 * Why a test does not run here, said so that the log can count it: test/reporter.ts prints the
 * pending tests per reason and test/run-suites.ts sums them up. A test of one database runs in
 * that database's run (CI has both runs); a test that needs something the machine lacks is
 * skipped, naming it, and under CI (`CI` set) fails instead, naming it, so CI cannot pass with
 * such a test quietly left out.
 */
import type { Context, Runnable, Suite } from 'mocha';

/** The reasons CI accepts: the test runs in the other database's run, which CI always has. */
export const ON_POSTGRESQL = 'run in the postgresql run (PostgreSQL only)';
export const ON_SQLITE = 'run in the sqlite run (SQLite only)';
export const ELSEWHERE: readonly string[] = [ON_POSTGRESQL, ON_SQLITE];

/** Where a reason is kept: on the test (skipped in `it`) or on its suite (skipped in `before`). */
export interface WithReason {
  pendingReason?: string;
}

/** Marks the test (called in `it`) or every test of the suite (called in `before`) pending for `reason`. */
export function skipBecause(ctx: Context, reason: string): never {
  const runnable = ctx.test as (Runnable & { type?: string; parent?: Suite }) | undefined;
  const target = runnable?.type === 'hook' ? runnable.parent : runnable;
  if (target) (target as WithReason).pendingReason = reason;
  ctx.skip();
}

/**
 * Skips the test (or the suite, in `before`) unless `available`, with `what` is missing and how
 * to get it as the reason; under CI fails instead with a line saying the same.
 */
export function needs(ctx: Context, what: string, available: boolean, remedy: string): void {
  if (available) return;
  if (process.env.CI) throw new Error(`CI needs ${what}: ${remedy}`);
  console.log(`      (skipped: no ${what}; ${remedy})`);
  skipBecause(ctx, `need ${what}`);
}
