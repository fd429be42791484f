/**
 * The contract (openapi.yaml) loaded once, and the validator that enforces it on every
 * request before a handler runs (and on responses when configured, as in the tests).
 */
import { readFileSync } from 'node:fs';
import * as OpenApiValidator from 'express-openapi-validator';
import { Router, type Request, type RequestHandler } from 'express';
import { parse } from 'yaml';
import { rememberRouteMatchers } from './route-matchers.ts';

export const OPENAPI_PATH = new URL('../../../openapi.yaml', import.meta.url);

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
}

export interface Contract {
  yaml: string;
  document: OpenApiDocument;
}

let loaded: Contract | undefined;

/** The contract never changes while the process runs: read and parsed once, however many servers the process starts. */
export function loadContract(): Contract {
  if (!loaded) {
    const yaml = readFileSync(OPENAPI_PATH, 'utf8');
    loaded = { yaml, document: parse(yaml) as OpenApiDocument };
  }
  return loaded;
}

/** The game's polls and commands: every client calls them every second. */
const GAME_PATHS = ['/command', '/status/{session_id}', '/chat/{session_id}', '/events/{session_id}'];
const GAME_REQUEST = /^\/(?:command$|(?:status|chat|events)\/)/;

function validatorFor(document: OpenApiDocument, validateResponses: boolean): RequestHandler {
  // A Router runs the validator's middleware list as one handler.
  return Router().use(
    OpenApiValidator.middleware({
      // The validator annotates the document it is given; keep ours pristine for /openapi.json.
      apiSpec: structuredClone(document) as never,
      // Ignored, as the reference server does (docs/decisions.md, "Platform"); strayQuerySession() keeps one exception.
      validateRequests: { allowUnknownQueryParameters: true, coerceTypes: false, allErrors: true },
      validateResponses,
      validateFormats: true,
      // The bearer scheme is one of two ways to present a session; authenticate() checks both.
      validateSecurity: false,
      ignoreUndocumented: false,
    }) as RequestHandler[],
  );
}

interface ContractParameter {
  name?: string;
  in?: string;
  $ref?: string;
}

/** `METHOD /path/{template}` of every operation that takes `session_id` in its query. */
function querySessionOperations(document: OpenApiDocument): Set<string> {
  const shared = (document as { components?: { parameters?: Record<string, ContractParameter> } }).components?.parameters ?? {};
  const resolve = (p: ContractParameter): ContractParameter => (p.$ref ? (shared[p.$ref.split('/').pop()!] ?? p) : p);
  const found = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const common = ((item.parameters as ContractParameter[] | undefined) ?? []).map(resolve);
    for (const [method, op] of Object.entries(item)) {
      const own = (((op as { parameters?: ContractParameter[] }).parameters ?? []) as ContractParameter[]).map(resolve);
      if ([...common, ...own].some((p) => p.in === 'query' && p.name === 'session_id')) found.add(`${method.toUpperCase()} ${path}`);
    }
  }
  return found;
}

/**
 * Unknown query parameters are ignored, but a `session_id` sent in the query of an operation
 * that takes none is answered 400 naming it, as the validator would: ignored, it would leave the
 * request without a session and a valid one would be told it expired (401).
 */
function strayQuerySession(takesIt: Set<string>): (req: Request) => unknown {
  return (req) => {
    const route = (req as Request & { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
    if (route === undefined || !Object.hasOwn(req.query as object, 'session_id')) return undefined;
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (takesIt.has(`${method} ${route}`)) return undefined;
    const message = "Unknown query parameter 'session_id'";
    return { status: 400, message, errors: [{ path: '/query/session_id', message }] };
  };
}

/**
 * The contract, enforced before any handler runs. The validator finds a request's operation by
 * trying the contract's routes one after another (docs/decisions.md, "The hot path"), so the
 * game's routes get a validator of their own, built from the same document cut down to them.
 */
export function contractValidator(contract: Contract, validateResponses: boolean): RequestHandler {
  const built = validators.get(contract) ?? new Map<boolean, RequestHandler>();
  validators.set(contract, built);
  let validator = built.get(validateResponses);
  if (!validator) {
    validator = buildContractValidator(contract, validateResponses);
    built.set(validateResponses, validator);
  }
  return validator;
}

/**
 * Compiling the contract's schemas takes about a second of CPU: a process that starts several
 * servers (the tests do) compiles them once. The validator keeps no state of any one server.
 */
const validators = new WeakMap<Contract, Map<boolean, RequestHandler>>();

function buildContractValidator(contract: Contract, validateResponses: boolean): RequestHandler {
  rememberRouteMatchers();
  const everything = validatorFor(contract.document, validateResponses);
  const gamePaths = Object.fromEntries(GAME_PATHS.map((p) => [p, contract.document.paths[p]!]));
  const game = validatorFor({ ...contract.document, paths: gamePaths }, validateResponses);
  const straySession = strayQuerySession(querySessionOperations(contract.document));
  return (req, res, next) => (GAME_REQUEST.test(req.path) ? game : everything)(req, res, (err?: unknown) => next(err ?? straySession(req)));
}
