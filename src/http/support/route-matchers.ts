/**
 * express-openapi-validator 5.6 finds a request's operation by compiling path-to-regexp for
 * every contract route it scans, on every request: a tenth of a poll's CPU (docs/decisions.md,
 * "The hot path"). Those routes and options are a fixed set, so the matchers are compiled once
 * and remembered. Installed on the path-to-regexp module the validator itself loads, before the
 * validator is built; a compiled matcher is only read (`regexp.exec`, `keys`), never changed.
 */
import { createRequire } from 'node:module';

type PathToRegexp = (path: unknown, options?: Record<string, unknown>) => unknown;

/** Far above the contract's routes: anything else calling with ever-new paths is not remembered. */
const MAX_MATCHERS = 1000;

const validatorRequire = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexpModule = validatorRequire('path-to-regexp') as { pathToRegexp: PathToRegexp };
let installed = false;

export function rememberRouteMatchers(): void {
  if (installed) return;
  installed = true;
  const compile = pathToRegexpModule.pathToRegexp;
  // One map per combination of the two flags the validator passes, by path.
  const matchers = [new Map<string, unknown>(), new Map<string, unknown>(), new Map<string, unknown>(), new Map<string, unknown>()];
  let remembered = 0;
  pathToRegexpModule.pathToRegexp = (path, options = {}) => {
    // Only the validator's calls (a path, at most these two flags) are remembered.
    for (const name in options) if (name !== 'sensitive' && name !== 'strict') return compile(path, options);
    if (typeof path !== 'string') return compile(path, options);
    const byPath = matchers[(options.sensitive ? 1 : 0) + (options.strict ? 2 : 0)]!;
    let matcher = byPath.get(path);
    if (matcher === undefined) {
      matcher = compile(path, options);
      if (remembered++ < MAX_MATCHERS) byPath.set(path, matcher);
    }
    return matcher;
  };
}
