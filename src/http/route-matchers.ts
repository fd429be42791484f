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
  const matchers = new Map<string, unknown>();
  pathToRegexpModule.pathToRegexp = (path, options = {}) => {
    // The validator passes exactly these two flags; any other call is compiled as before.
    const { sensitive, strict, ...other } = options;
    if (typeof path !== 'string' || Object.keys(other).length > 0) return compile(path, options);
    const key = `${sensitive ? 1 : 0}${strict ? 1 : 0}${path}`;
    let matcher = matchers.get(key);
    if (matcher === undefined) {
      matcher = compile(path, options);
      if (matchers.size < MAX_MATCHERS) matchers.set(key, matcher);
    }
    return matcher;
  };
}
