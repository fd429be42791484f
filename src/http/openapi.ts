/**
 * The contract (openapi.yaml) loaded once, and the validator that enforces it on every
 * request before a handler runs (and on responses when configured, as in the tests).
 */
import { readFileSync } from 'node:fs';
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import { parse } from 'yaml';
import { rememberRouteMatchers } from './route-matchers.ts';

export const OPENAPI_PATH = new URL('../../openapi.yaml', import.meta.url);

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

export function contractValidator(contract: Contract, validateResponses: boolean): RequestHandler[] {
  rememberRouteMatchers();
  return OpenApiValidator.middleware({
    // The validator annotates the document it is given; keep ours pristine for /openapi.json.
    apiSpec: structuredClone(contract.document) as never,
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false, allErrors: true },
    validateResponses,
    validateFormats: true,
    // The bearer scheme is one of two ways to present a session; authenticate() checks both.
    validateSecurity: false,
    ignoreUndocumented: false,
  }) as RequestHandler[];
}
