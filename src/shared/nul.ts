/**
 * The NUL character (U+0000) in a client's text. No field or line has a use for it, and
 * PostgreSQL cannot store it in text or jsonb, so it would otherwise fail inside a query. Both
 * doors refuse it before anything reads the input: HTTP requests
 * (src/http/middleware/reject-nul.ts) and telnet lines (src/telnet/connection.ts).
 */

/** What a refusal says of the text holding it. */
export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Where the first string holding NUL is (`/body/a/0`, or `root` for a string), or null.
 * Iterative: a 1 MiB body can nest deeper than the call stack.
 */
export function findNul(value: unknown, root: string): string | null {
  const pending: Array<[unknown, string]> = [[value, root]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, at] = next;
    if (typeof current === 'string') {
      if (current.includes('\0')) return at;
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        // A property name holding NUL is reported at its object.
        if (key.includes('\0')) return at;
        pending.push([child, `${at}/${key}`]);
      }
    }
  }
  return null;
}
