/**
 * Why a test does not run here, said so that the log can count it: test/reporter.ts prints the
 * pending tests per reason and test/run-suites.ts sums them up. A test of one database runs in
 * that database's run (CI has both runs); a test that needs something the machine lacks is
 * skipped, naming it, and under CI (`CI` set) fails instead, naming it, so CI cannot pass with
 * such a test quietly left out. The one exception is test material outside the repository (the
 * reference's web clients): a clean clone has none to offer, so its absence is a reason CI
 * accepts.
 */
import type { Context, Runnable, Suite } from 'mocha';

/**
 * The reasons CI accepts: the test runs in the other database's run, which CI always has; or it
 * needs the reference server's web clients, test material kept beside the checkout and never in
 * the repository (README, "Keeping the reference's web clients"), which a clean clone in CI may
 * not have.
 */
export const ON_POSTGRESQL = 'run in the postgresql run (PostgreSQL only)';
export const ON_SQLITE = 'run in the sqlite run (SQLite only)';
export const NO_REFERENCE_CLIENTS = "the reference's web clients are not on this machine";
export const ELSEWHERE: readonly string[] = [ON_POSTGRESQL, ON_SQLITE, NO_REFERENCE_CLIENTS];

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
