/**
 * The HTTP layer's own error type, the status of every domain error (one table), and one
 * terminal handler that renders every error as JSON `{detail}`, also for unknown routes, wrong
 * methods, bad JSON and oversized bodies (the specification's settled choice). Nothing internal
 * ever reaches a response body.
 */
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from '../../logging/logger.ts';
import { INVALID_SESSION } from '../../services/accounts/session-service.ts';
import { axisError, CONDITION_AXIS_MESSAGES, missingRuntimeInputs } from '../../services/axis/condition-axis.ts';
import {
  Conflict,
  DomainError,
  Failure,
  FeatureUnavailable,
  FeatureUnsupported,
  Forbidden,
  InvalidInput,
  NotFound,
  TooManyRequests,
  Unauthenticated,
  Unprocessable,
  UpstreamFailed,
  UpstreamTimeout,
} from '../../shared/errors.ts';
import { parsePolicyId, parseScope, scopeFrom } from '../../services/policy/policy-model.ts';
import { databaseUnavailable } from '../../db/errors.ts';

/**
 * A deliberate failure of the HTTP layer itself (services throw DomainErrors): status,
 * readable detail, optional extra body fields and headers.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(detail);
    this.status = status;
    this.extra = extra;
    this.headers = headers;
  }
}

interface ValidatorIssue {
  path: string;
  message: string;
  errorCode?: string;
}

/** Shape of express-openapi-validator's HttpError subclasses. */
interface ValidatorError {
  status: number;
  message: string;
  errors?: ValidatorIssue[];
  headers?: Record<string, string>;
}

interface BodyParserError {
  type: string;
  status: number;
  limit?: number;
}

function isValidatorError(err: unknown): err is ValidatorError {
  return typeof err === 'object' && err !== null && 'status' in err && Array.isArray((err as ValidatorError).errors);
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as BodyParserError).type === 'string' && 'status' in err;
}

/** The validator's message for a query parameter the operation does not declare. */
const UNKNOWN_QUERY_PARAMETER = /^Unknown query parameter/;

/**
 * A malformed or empty `session_id` is an authentication failure, not a malformed request:
 * it answers 401 like an unknown one, never 400 (the specification's settled choice). One sent
 * where the operation takes none is a malformed request, and its 400 names it (a 401 would tell
 * a valid session it expired).
 */
function badSessionId(issues: ValidatorIssue[]): boolean {
  return issues.some((i) => /^\/(body|query|params)\/session_id$/.test(i.path) && !UNKNOWN_QUERY_PARAMETER.test(i.message));
}

/** Where an issue is, as a player would name it: `/body/inputs/entity/species` is `inputs.entity.species`. */
function fieldName(path: string): string {
  const [, part = '', rest = ''] = /^\/(body|query|params|path|headers|cookies)\/?(.*)$/.exec(path) ?? [];
  if (rest === '') return part === 'body' || part === '' ? 'the request body' : `the ${part}`;
  const name = rest.split('/').join('.');
  return part === 'headers' ? `header ${name}` : name;
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const plural = (count: string, one: string, many = `${one}s`) => `${count} ${count === '1' ? one : many}`;

/**
 * The rule an issue breaks, in plain words (the validator's own texts read like
 * `request/body/command must NOT have more than 2000 characters`): what a player sees.
 */
function plainRule(issue: ValidatorIssue): string {
  const keyword = issue.errorCode?.replace(/\.openapi\.validation$/, '');
  const number = /-?\d+(\.\d+)?/.exec(issue.message)?.[0] ?? '';
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'maxLength':
      return `must be at most ${plural(number, 'character')}`;
    case 'minLength':
      return number === '1' ? 'must not be empty' : `must be at least ${plural(number, 'character')}`;
    case 'maxItems':
      return `must have at most ${plural(number, 'entry', 'entries')}`;
    case 'minItems':
      return `must have at least ${plural(number, 'entry', 'entries')}`;
    case 'maximum':
      return `must be at most ${number}`;
    case 'minimum':
      return `must be at least ${number}`;
    case 'exclusiveMaximum':
      return `must be less than ${number}`;
    case 'exclusiveMinimum':
      return `must be more than ${number}`;
    case 'type': {
      const types = issue.message.replace(/^must be /, '').split(',');
      return `must be ${types.map((type) => TYPE_NAMES[type] ?? type).join(' or ')}`;
    }
    case 'enum':
      return `must be one of: ${issue.message.split(': ').slice(1).join(': ')}`;
    case 'pattern':
      return 'is not in the accepted format';
    case 'format':
      return `must be a valid ${/"(.+)"/.exec(issue.message)?.[1] ?? 'value'}`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'is not a known field';
    default:
      if (UNKNOWN_QUERY_PARAMETER.test(issue.message)) return 'is not a known query parameter';
      return issue.message.replace(/^request\/\S*\s*/, '');
  }
}

/** `Invalid request: command: must be at most 2000 characters`: a `detail` readable on its own (docs/decisions.md, "Accounts and sessions"). */
function plainDetail(err: ValidatorError, issues: ValidatorIssue[]): string {
  if (issues.length === 0) return `Invalid request: ${err.message.replace(/request\/\S*\s*/g, '')}`;
  return `Invalid request: ${issues.map((issue) => `${fieldName(issue.path)}: ${plainRule(issue)}`).join('; ')}`;
}

function fromValidator(err: ValidatorError): HttpError {
  const issues = err.errors ?? [];
  if (err.status === 400 && badSessionId(issues)) return new HttpError(401, INVALID_SESSION);
  switch (err.status) {
    case 400:
      return new HttpError(400, plainDetail(err, issues), {
        errors: issues.map((i) => ({ path: i.path, message: i.message })),
      });
    case 404:
      return new HttpError(404, 'Not Found');
    case 405:
      return new HttpError(405, 'Method Not Allowed', {}, err.headers ?? {});
    case 415:
      return new HttpError(415, `Unsupported media type: send the body as application/json`);
    default:
      return new HttpError(err.status >= 500 ? 500 : err.status, err.status >= 500 ? 'Internal server error' : err.message);
  }
}

function fromBodyParser(err: BodyParserError): HttpError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new HttpError(400, 'Malformed JSON in request body');
    case 'entity.too.large':
      return new HttpError(413, `Request body is larger than the limit of ${err.limit ?? 'the server'} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpError(415, 'Unsupported body encoding: send UTF-8 JSON');
    default:
      return null;
  }
}

/** nginx's "client closed request": nobody reads it, but the access log shows what happened. */
const CLIENT_CLOSED_REQUEST = 499;

interface LogAs {
  level: 'warn' | 'error';
  message: string;
}

/** Our own fault: someone has to look. */
const SERVER_ERROR: LogAs = { level: 'error', message: 'Server error' };
/** Expected while a feature is off or unsupported: worth seeing, not worth paging for. */
const REFUSED: LogAs = { level: 'warn', message: 'Request refused' };
/** Someone else's fault, but operators want to know the upstream misbehaves. */
const UPSTREAM: LogAs = { level: 'warn', message: 'Upstream failure' };

interface DomainAnswer {
  status: number;
  /** 4xx are the client's business and are not logged. */
  log?: LogAs;
}

/** The status each domain error answers with, and how it is logged. */
const DOMAIN_ERRORS = new Map<new (...args: never[]) => DomainError, DomainAnswer>([
  [InvalidInput, { status: 400 }],
  [Unauthenticated, { status: 401 }],
  [Forbidden, { status: 403 }],
  [NotFound, { status: 404 }],
  [Conflict, { status: 409 }],
  [Unprocessable, { status: 422 }],
  [TooManyRequests, { status: 429 }],
  [Failure, { status: 500, log: SERVER_ERROR }],
  [FeatureUnsupported, { status: 501, log: REFUSED }],
  [UpstreamFailed, { status: 502, log: UPSTREAM }],
  [FeatureUnavailable, { status: 503, log: REFUSED }],
  [UpstreamTimeout, { status: 504, log: UPSTREAM }],
]);

/** When a client may try again after the database was unavailable. */
const DATABASE_RETRY_SECONDS = 5;
const DATABASE_ANSWERS = {
  unavailable: 'The database is unavailable; try again in a few seconds.',
  full: "The server's disk is full: nothing can be stored until space is freed. Reading still works.",
};

const causeOf = (err: Error): unknown => (err.cause instanceof Error ? err.cause.stack : err.cause);

/** The table's answer, logged as its row says; a subclass without its own row takes its parent's. */
function fromDomainError(err: DomainError, logger: Logger): HttpError | null {
  for (let proto = Object.getPrototypeOf(err); proto !== DomainError.prototype; proto = Object.getPrototypeOf(proto)) {
    const answer = DOMAIN_ERRORS.get(proto.constructor);
    if (!answer) continue;
    if (answer.log) logger.log(answer.log.level, answer.log.message, { status: answer.status, ...err.extra, detail: err.message, cause: causeOf(err) });
    const headers: Record<string, string> = err instanceof TooManyRequests ? { 'Retry-After': String(err.retryAfterSeconds) } : {};
    return new HttpError(answer.status, err.message, { ...err.extra }, headers);
  }
  return null;
}

/** Maps anything thrown to an HttpError; unknown errors become a logged 500. */
export function toHttpError(err: unknown, logger: Logger): HttpError {
  if (err instanceof HttpError) {
    if (err.status >= 500) logger.error(SERVER_ERROR.message, { detail: err.message, cause: causeOf(err) });
    return err;
  }
  if (err instanceof DomainError) {
    const mapped = fromDomainError(err, logger);
    if (mapped) return mapped;
  }
  // Work cancelled because the client disconnected (see request-context.ts): not a failure.
  if (err instanceof Error && err.name === 'AbortError') return new HttpError(CLIENT_CLOSED_REQUEST, 'Client closed request');
  if (isBodyParserError(err)) {
    const mapped = fromBodyParser(err);
    if (mapped) return mapped;
  }
  if (isValidatorError(err)) {
    const mapped = fromValidator(err);
    // A response that breaks the contract is our bug: log it like any other 500.
    if (mapped.status >= 500) logger.error('Response failed contract validation', { error: err.message, issues: err.errors });
    return mapped;
  }
  // Database errors carry only the driver's message (src/db/database.ts) and its code.
  const code = (err as { code?: unknown } | null)?.code;
  // A database that is down, restarting or out of disk: the client hears so at once, and may retry.
  const unavailable = databaseUnavailable(err);
  if (unavailable) {
    logger.warn('Database unavailable', { reason: unavailable, error: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) });
    return new HttpError(503, DATABASE_ANSWERS[unavailable], {}, { 'Retry-After': String(DATABASE_RETRY_SECONDS) });
  }
  logger.error('Unhandled error', { error: err instanceof Error ? err.stack ?? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) });
  return new HttpError(500, 'Internal server error');
}

/** The condition-axis endpoint reports contract violations in its own structured form. */
export const CONDITION_AXIS_PATH = '/api/pipeline/condition-axis/generate';

/** Contract paths of the runtime inputs the condition-axis service names when they are blank. */
const RUNTIME_INPUTS: Readonly<Record<string, string>> = {
  '/body/inputs/entity/identity/gender': 'entity.identity.gender',
  '/body/inputs/entity/species': 'entity.species',
};

/** What the contract validator found wrong with a request; empty for any other error. */
function requestIssues(err: unknown): ValidatorIssue[] {
  return isValidatorError(err) && err.status === 400 ? (err.errors ?? []) : [];
}

function axisValidationError(err: HttpError, issues: ValidatorIssue[], logger: Logger): HttpError {
  if (!issues.some((i) => i.path.startsWith('/body'))) return err;
  const blankInputs = issues.map((i) => (i.errorCode === 'pattern.openapi.validation' ? RUNTIME_INPUTS[i.path] : undefined));
  if (blankInputs.every((name) => name !== undefined)) return toHttpError(missingRuntimeInputs(blankInputs as string[]), logger);
  return toHttpError(axisError(Unprocessable, 'CONDITION_AXIS_VALIDATION_ERROR', CONDITION_AXIS_MESSAGES.invalid), logger);
}

/**
 * The policy routes answer a malformed policy id or scope the way the policy layer does (422
 * with its policy error code, as the reference server does), though the contract's patterns
 * catch them first.
 */
const POLICY_GRAMMAR: Record<string, (req: Request) => unknown> = {
  // Before routing only the validator has parsed the path.
  '/params/policy_id': (req) => parsePolicyId(String((req as Request & { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams?.policy_id)),
  '/body/policy_id': (req) => parsePolicyId(String(req.body.policy_id)),
  '/query/scope': (req) => parseScope(String(req.query.scope)),
  '/body/world_id': (req) => scopeFrom(String(req.body.world_id), req.body.client_profile as string | null | undefined),
};

function policyGrammarError(err: HttpError, issues: ValidatorIssue[], req: Request, logger: Logger): HttpError {
  for (const issue of issues) {
    const parse = POLICY_GRAMMAR[issue.path];
    if (!parse) continue;
    try {
      parse(req);
    } catch (domainError) {
      return toHttpError(domainError, logger);
    }
  }
  return err;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    let httpError = toHttpError(err, logger);
    if (req.path === CONDITION_AXIS_PATH) httpError = axisValidationError(httpError, requestIssues(err), logger);
    else if (req.path.startsWith('/api/polic')) httpError = policyGrammarError(httpError, requestIssues(err), req, logger);
    res.set(httpError.headers);
    // RFC 9110: a 401 names the scheme that would have worked.
    if (httpError.status === 401) res.set('WWW-Authenticate', 'Bearer');
    res.status(httpError.status).json({ ...httpError.extra, detail: httpError.message });
  };
}

/** For paths outside the contract (the validator answers 404/405 for paths inside it). */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HttpError(404, 'Not Found'));
};
