/**
 * Refuses the NUL character (U+0000) anywhere in a request's text: the path, the query and
 * the JSON body (values and property names, at any depth). No field has a use for it, and
 * PostgreSQL cannot store it in text or jsonb, so it would otherwise fail inside a query as a
 * 500. It runs before the contract check, so the answer is the same 400 on every route.
 */
import type { RequestHandler } from 'express';
import { HttpError } from '../errors.ts';

const MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Where the first string holding NUL is (`/body/a/0`), or null. Iterative: a 1 MiB body can
 * nest deeper than the call stack.
 */
function findNul(value: unknown, root: string): string | null {
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

export const rejectNul: RequestHandler = (req, _res, next) => {
  // The path is still percent-encoded here; `%00` is the only way to write NUL in a URL.
  const where = /%00/.test(req.path) ? '/path' : (findNul(req.query, '/query') ?? findNul(req.body, '/body'));
  next(where === null ? undefined : new HttpError(400, `Invalid request: ${where} ${MESSAGE}`, { errors: [{ path: where, message: MESSAGE }] }));
};
