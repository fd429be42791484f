/**
 * Client for the upstream entity-state generator the reference server calls:
 * `POST <base>/api/entity {seed, include_prompts}`. Used by character provisioning and by
 * condition-axis generation; callers map `EntityStateError.failure` to their own answers
 * (condition-axis: unsupported → 501, timeout → 504, generation_failed → 502).
 */
import { upstreamRequestOptions } from './upstream-http.ts';
import axios from 'axios';
import type { AxiosResponse, RawAxiosResponseHeaders, AxiosResponseHeaders } from 'axios';
import type { Logger } from '../logging/logger.ts';

export type EntityStateFailure = 'unsupported' | 'timeout' | 'generation_failed';

export const ENTITY_STATE_ERRORS = {
  unsupported: 'Condition-axis generation is not available in the current upstream configuration.',
  timeout: 'Timed out waiting for upstream condition-axis generation.',
  generation_failed: 'Failed to generate condition axis from upstream entity generator.',
} as const satisfies Record<EntityStateFailure, string>;

export class EntityStateError extends Error {
  override name = 'EntityStateError';
  readonly failure: EntityStateFailure;

  constructor(failure: EntityStateFailure, message: string = ENTITY_STATE_ERRORS[failure]) {
    super(message);
    this.failure = failure;
  }
}

export interface EntityStateResult {
  /** The upstream JSON object, untouched. */
  payload: Record<string, unknown>;
  /** payload.generator_version, else payload.version (non-blank, trimmed), else header x-generator-version, else 'unknown'. */
  generatorVersion: string;
  /** payload.generator_capabilities then header x-generator-capabilities; trimmed, de-duplicated in first-seen order. */
  generatorCapabilities: string[];
  /** payload.generated_at when a non-blank string (trimmed), else null: the caller stamps its own time. */
  generatedAt: string | null;
  /** 1 or 2. */
  attempts: number;
  /** Whole call, retries and backoff included. */
  latencyMs: number;
}

/**
 * Monotonic since construction. `requests_total` counts calls; `retries_total` counts retries;
 * every call ends in exactly one of the other counters, so
 * requests_total = success_total + timeouts_total + request_exceptions_total + unsupported_total
 *   + http_failures_total + json_failures_total + shape_failures_total.
 * A final HTTP 408/504 counts as a timeout; an empty base URL counts as unsupported.
 */
export interface EntityStateCounters {
  requests_total: number;
  retries_total: number;
  timeouts_total: number;
  request_exceptions_total: number;
  unsupported_total: number;
  http_failures_total: number;
  json_failures_total: number;
  shape_failures_total: number;
  success_total: number;
}

export interface HttpEntityStateClientOptions {
  baseUrl: string;
  /** Per attempt. */
  timeoutMs: number;
  includePrompts: boolean;
  logger: Logger;
  /** Backoff before retry n is backoffMs × 2^(n−1); default 200. */
  backoffMs?: number;
}

const MAX_ATTEMPTS = 2;
const UNSUPPORTED_STATUSES = new Set([404, 405, 501]);
const HTTP_TIMEOUT_STATUSES = new Set([408, 504]);

type FailureReason =
  | 'timeout'
  | 'request_exception'
  | 'unsupported'
  | 'http_timeout'
  | 'http_error'
  | 'invalid_json'
  | 'non_object';

export class HttpEntityStateClient {
  readonly counters: EntityStateCounters = {
    requests_total: 0,
    retries_total: 0,
    timeouts_total: 0,
    request_exceptions_total: 0,
    unsupported_total: 0,
    http_failures_total: 0,
    json_failures_total: 0,
    shape_failures_total: 0,
    success_total: 0,
  };

  private readonly endpoint: string | null;
  private readonly timeoutMs: number;
  private readonly includePrompts: boolean;
  private readonly logger: Logger;
  private readonly backoffMs: number;

  constructor(options: HttpEntityStateClientOptions) {
    const base = options.baseUrl.trim().replace(/\/+$/, '');
    this.endpoint = base ? `${base}/api/entity` : null;
    this.timeoutMs = options.timeoutMs;
    this.includePrompts = options.includePrompts;
    this.logger = options.logger;
    this.backoffMs = options.backoffMs ?? 200;
  }

  async generate(seed: number): Promise<EntityStateResult> {
    this.counters.requests_total++;
    const started = performance.now();
    if (!this.endpoint) {
      this.counters.unsupported_total++;
      this.logFailure(seed, 0, 'unsupported', undefined, 0);
      throw new EntityStateError('unsupported', ENTITY_STATE_ERRORS.unsupported);
    }

    let response: AxiosResponse<string> | null = null;
    let attempts = 0;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      attempts = attempt;
      const attemptStarted = performance.now();
      const final = attempt === MAX_ATTEMPTS;
      try {
        response = await axios.post<string>(
          this.endpoint,
          { seed, include_prompts: this.includePrompts },
          upstreamRequestOptions(this.timeoutMs),
        );
      } catch (err) {
        const latency = elapsed(attemptStarted);
        const reason = isTimeout(err) ? 'timeout' : 'request_exception';
        if (!final) {
          await this.retry(seed, attempt, reason, undefined, latency);
          continue;
        }
        this.logFailure(seed, attempt, reason, undefined, latency);
        if (reason === 'timeout') {
          this.counters.timeouts_total++;
          throw new EntityStateError('timeout', ENTITY_STATE_ERRORS.timeout);
        }
        this.counters.request_exceptions_total++;
        throw new EntityStateError('generation_failed', ENTITY_STATE_ERRORS.generation_failed);
      }

      const status = response.status;
      const latency = elapsed(attemptStarted);
      if (status === 200) break;
      if (UNSUPPORTED_STATUSES.has(status)) {
        this.counters.unsupported_total++;
        this.logFailure(seed, attempt, 'unsupported', status, latency);
        throw new EntityStateError('unsupported', ENTITY_STATE_ERRORS.unsupported);
      }
      if (HTTP_TIMEOUT_STATUSES.has(status)) {
        if (!final) {
          await this.retry(seed, attempt, 'http_timeout', status, latency);
          continue;
        }
        this.counters.timeouts_total++;
        this.logFailure(seed, attempt, 'http_timeout', status, latency);
        throw new EntityStateError('timeout', ENTITY_STATE_ERRORS.timeout);
      }
      this.counters.http_failures_total++;
      this.logFailure(seed, attempt, 'http_error', status, latency);
      throw new EntityStateError('generation_failed', ENTITY_STATE_ERRORS.generation_failed);
    }
    if (!response) throw new EntityStateError('generation_failed', ENTITY_STATE_ERRORS.generation_failed); // unreachable

    let payload: unknown;
    try {
      payload = JSON.parse(typeof response.data === 'string' ? response.data : String(response.data));
    } catch {
      this.counters.json_failures_total++;
      this.logFailure(seed, attempts, 'invalid_json', response.status, elapsed(started));
      throw new EntityStateError('generation_failed', ENTITY_STATE_ERRORS.generation_failed);
    }
    if (!isPlainObject(payload)) {
      this.counters.shape_failures_total++;
      this.logFailure(seed, attempts, 'non_object', response.status, elapsed(started));
      throw new EntityStateError('generation_failed', ENTITY_STATE_ERRORS.generation_failed);
    }

    const generatorVersion = extractGeneratorVersion(payload, response.headers);
    const generatorCapabilities = extractGeneratorCapabilities(payload, response.headers);
    const generatedAt = nonBlank(payload.generated_at);
    const latencyMs = elapsed(started);
    this.counters.success_total++;
    this.logger.info('Upstream entity-state generation succeeded', {
      event: 'condition_axis_upstream_success',
      seed,
      attempts,
      latency_ms: latencyMs,
      generator_version: generatorVersion,
      capabilities: generatorCapabilities.join(',') || 'none',
    });
    return { payload, generatorVersion, generatorCapabilities, generatedAt, attempts, latencyMs };
  }

  private async retry(
    seed: number,
    attempt: number,
    reason: 'timeout' | 'request_exception' | 'http_timeout',
    status: number | undefined,
    latencyMs: number,
  ): Promise<void> {
    this.counters.retries_total++;
    this.logger.warn('Upstream entity-state request failed; retrying', {
      event: 'condition_axis_upstream_retry',
      seed,
      attempt: `${attempt}/${MAX_ATTEMPTS}`,
      reason,
      ...(status === undefined ? {} : { status_code: status }),
      latency_ms: latencyMs,
    });
    const delay = this.backoffMs * 2 ** (attempt - 1);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  }

  private logFailure(seed: number, attempts: number, reason: FailureReason, status: number | undefined, latencyMs: number): void {
    this.logger.warn('Upstream entity-state generation failed', {
      event: 'condition_axis_upstream_failure',
      seed,
      attempts,
      reason,
      ...(status === undefined ? {} : { status_code: status }),
      latency_ms: latencyMs,
    });
  }
}

type Headers = RawAxiosResponseHeaders | AxiosResponseHeaders;

function elapsed(since: number): number {
  return Math.max(0, Math.round(performance.now() - since));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

/** Node lower-cases incoming header names, so one lookup covers X-Generator-Version too. */
function header(headers: Headers, name: string): string | null {
  const value: unknown = (headers as Record<string, unknown>)[name];
  if (Array.isArray(value)) return nonBlank(value.join(','));
  return nonBlank(value);
}

function splitCommas(text: string): string[] {
  return text.split(',').map((token) => token.trim()).filter((token) => token !== '');
}

export function extractGeneratorVersion(payload: Record<string, unknown>, headers: Headers): string {
  return nonBlank(payload.generator_version) ?? nonBlank(payload.version) ?? header(headers, 'x-generator-version') ?? 'unknown';
}

export function extractGeneratorCapabilities(payload: Record<string, unknown>, headers: Headers): string[] {
  const found: string[] = [];
  const fromPayload = payload.generator_capabilities;
  if (Array.isArray(fromPayload)) {
    for (const entry of fromPayload) {
      const token = nonBlank(entry);
      if (token) found.push(token);
    }
  } else if (typeof fromPayload === 'string') {
    found.push(...splitCommas(fromPayload));
  }
  const fromHeader = header(headers, 'x-generator-capabilities');
  if (fromHeader) found.push(...splitCommas(fromHeader));
  return [...new Set(found)];
}

function isTimeout(err: unknown): boolean {
  if (!err || typeof err !== 'object' || !('code' in err)) return false;
  return err.code === 'ETIMEDOUT' || err.code === 'ECONNABORTED';
}
