/**
 * The contract (openapi.yaml) loaded once, and the validator that enforces it on every
 * request before a handler runs (and on responses when configured, as in the tests).
 */
import { readFileSync } from 'node:fs';
import * as OpenApiValidator from 'express-openapi-validator';
import { Router, type RequestHandler } from 'express';
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

export function loadContract(): Contract {
  const yaml = readFileSync(OPENAPI_PATH, 'utf8');
  return { yaml, document: parse(yaml) as OpenApiDocument };
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
      validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
      validateResponses,
      validateFormats: true,
      // The bearer scheme is one of two ways to present a session; authenticate() checks both.
      validateSecurity: false,
      ignoreUndocumented: false,
    }) as RequestHandler[],
  );
}

/**
 * The contract, enforced before any handler runs. The validator finds a request's operation by
 * trying the contract's routes one after another (docs/decisions.md, "The hot path"), so the
 * game's routes get a validator of their own, built from the same document cut down to them.
 */
export function contractValidator(contract: Contract, validateResponses: boolean): RequestHandler {
  rememberRouteMatchers();
  const everything = validatorFor(contract.document, validateResponses);
  const gamePaths = Object.fromEntries(GAME_PATHS.map((p) => [p, contract.document.paths[p]!]));
  const game = validatorFor({ ...contract.document, paths: gamePaths }, validateResponses);
  return (req, res, next) => (GAME_REQUEST.test(req.path) ? game : everything)(req, res, next);
}
