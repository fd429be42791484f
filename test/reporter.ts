/**
 * The suite's reporter: mocha's spec reporter, then one `pending: N <reason>` line per reason
 * the pending tests gave (test/helpers/needs.ts), which test/run-suites.ts reads. A test made
 * pending without a reason (a bare `this.skip()` or `it.skip`) counts as giving none.
 */
import Mocha from 'mocha';
import type { Runnable, Suite } from 'mocha';
import type { WithReason } from './helpers/needs.ts';

export const NO_REASON = 'give no reason (a bare this.skip() or .skip: say why with test/helpers/needs.ts)';

/** The reason on the test or the nearest suite above it. */
function reasonOf(test: Runnable): string {
  for (let at: Runnable | Suite | undefined = test; at; at = at.parent) {
    const reason = (at as WithReason).pendingReason;
    if (reason) return reason;
  }
  return NO_REASON;
}

export default class PendingReasons extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const counts = new Map<string, number>();
    runner.on(Mocha.Runner.constants.EVENT_TEST_PENDING, (test: Runnable) => {
      const reason = reasonOf(test);
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    });
    // After the spec reporter's own summary, which it prints at the same event.
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      for (const [reason, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  pending: ${count} ${reason}`);
      if (counts.size > 0) console.log();
    });
  }
}
