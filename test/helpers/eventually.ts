/**
 * Waiting for what happens after an answer (another instance's cache, a closed connection's
 * logout) without a fixed sleep: the check is retried every 50 ms until it passes.
 */

/** Retries `check` until it passes; after `ms` its last failure is thrown. */
export async function eventually(check: () => Promise<unknown>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
