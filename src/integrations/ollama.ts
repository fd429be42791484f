/**
 * The one Ollama HTTP client: used by the translation layer
 * (`/api/chat`) and the admin LLM commands (`/api/tags`, `/api/ps`, `/api/show`, `/api/pull`,
 * `/api/chat`). It never throws for upstream trouble: every call answers an `OllamaResult`,
 * and callers map the failure kinds to their own texts. No retries. Log lines carry the
 * operation, model, status and latency, never prompt or answer contents (debug: sizes only).
 * Answers are read up to a size cap (after decompression), so a runaway or hostile runtime
 * cannot fill the server's memory.
 */
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import type { Logger } from '../logging/logger.ts';
import { upstreamRequestOptions } from './upstream-http.ts';

export type OllamaFailureKind = 'timeout' | 'unreachable' | 'http' | 'invalid_json' | 'too_large';

/** Largest answer read from Ollama; a longer one fails as `too_large`. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** A pull streams a progress line several times a second for the whole download: more room. */
export const MAX_PULL_RESPONSE_BYTES = 16 * 1024 * 1024;

export type OllamaResult<T> =
  | { ok: true; data: T }
  | { ok: false; kind: OllamaFailureKind; status?: number; body?: string };

type Operation = 'chat' | 'tags' | 'ps' | 'show' | 'pull';

/** Base URL with surrounding whitespace and trailing slashes removed. */
export function normalizeBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

export class OllamaClient {
  private readonly logger: Logger;

  constructor(logger: Logger) {
    this.logger = logger;
  }

  /** POST /api/chat; `data` is the answer's JSON object. */
  async chat(baseUrl: string, body: Record<string, unknown>, timeoutMs: number): Promise<OllamaResult<Record<string, unknown>>> {
    const model = typeof body.model === 'string' ? body.model : undefined;
    return this.json(await this.send('chat', 'POST', baseUrl, '/api/chat', body, timeoutMs, model));
  }

  /** GET /api/tags (installed models). */
  async tags(baseUrl: string, timeoutMs: number): Promise<OllamaResult<Record<string, unknown>>> {
    return this.json(await this.send('tags', 'GET', baseUrl, '/api/tags', undefined, timeoutMs));
  }

  /** GET /api/ps (models loaded in memory). */
  async ps(baseUrl: string, timeoutMs: number): Promise<OllamaResult<Record<string, unknown>>> {
    return this.json(await this.send('ps', 'GET', baseUrl, '/api/ps', undefined, timeoutMs));
  }

  /** POST /api/show {name}. */
  async show(baseUrl: string, name: string, timeoutMs: number): Promise<OllamaResult<Record<string, unknown>>> {
    return this.json(await this.send('show', 'POST', baseUrl, '/api/show', { name }, timeoutMs, name));
  }

  /**
   * POST /api/pull {name}, answered as NDJSON. `data` is the `status` of every streamed line,
   * in order; a streamed `{"error": ...}` line makes the call fail with kind `http`, the
   * response's status and `body` = the error text.
   */
  async pull(baseUrl: string, name: string, timeoutMs: number): Promise<OllamaResult<string[]>> {
    const sent = await this.send('pull', 'POST', baseUrl, '/api/pull', { name }, timeoutMs, name, MAX_PULL_RESPONSE_BYTES);
    if (!sent.ok) return sent;
    const statuses: string[] = [];
    for (const line of sent.data.text.split('\n')) {
      if (!line.trim()) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a torn or foreign line: nothing to report
      }
      if (!isPlainObject(parsed)) continue;
      if (parsed.error !== undefined && parsed.error !== null) {
        const error = typeof parsed.error === 'string' ? parsed.error : JSON.stringify(parsed.error);
        this.logger.warn('Ollama pull reported an error', { event: 'ollama_pull_error', model: name, status: sent.data.status });
        return { ok: false, kind: 'http', status: sent.data.status, body: error };
      }
      if (typeof parsed.status === 'string') statuses.push(parsed.status);
    }
    return { ok: true, data: statuses };
  }

  private json(sent: OllamaResult<{ status: number; text: string }>): OllamaResult<Record<string, unknown>> {
    if (!sent.ok) return sent;
    let parsed: unknown;
    try {
      parsed = JSON.parse(sent.data.text);
    } catch {
      return { ok: false, kind: 'invalid_json', status: sent.data.status, body: sent.data.text };
    }
    if (!isPlainObject(parsed)) return { ok: false, kind: 'invalid_json', status: sent.data.status, body: sent.data.text };
    return { ok: true, data: parsed };
  }

  private async send(
    op: Operation,
    method: 'GET' | 'POST',
    baseUrl: string,
    path: string,
    body: Record<string, unknown> | undefined,
    timeoutMs: number,
    model?: string,
    maxBytes = MAX_RESPONSE_BYTES,
  ): Promise<OllamaResult<{ status: number; text: string }>> {
    const url = `${normalizeBaseUrl(baseUrl)}${path}`;
    const started = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    let response: AxiosResponse<unknown>;
    try {
      response = await axios.request({
        ...upstreamRequestOptions(timeoutMs),
        maxContentLength: maxBytes,
        method,
        url,
        ...(payload === undefined ? {} : { data: payload, headers: { 'Content-Type': 'application/json' } }),
      });
    } catch (err) {
      const kind = isTimeout(err) ? 'timeout' : isTooLarge(err) ? 'too_large' : 'unreachable';
      this.logger.warn('Ollama request failed', {
        event: 'ollama_request_failed',
        op,
        ...(model === undefined ? {} : { model }),
        reason: kind,
        latency_ms: elapsed(started),
      });
      return { ok: false, kind };
    }
    const text = typeof response.data === 'string' ? response.data : response.data == null ? '' : String(response.data);
    const latency = elapsed(started);
    this.logger.info('Ollama request', {
      event: 'ollama_request',
      op,
      ...(model === undefined ? {} : { model }),
      status: response.status,
      latency_ms: latency,
    });
    this.logger.debug('Ollama request sizes', {
      event: 'ollama_request_sizes',
      op,
      request_bytes: payload === undefined ? 0 : Buffer.byteLength(payload),
      response_bytes: Buffer.byteLength(text),
    });
    if (response.status < 200 || response.status >= 300) return { ok: false, kind: 'http', status: response.status, body: text };
    return { ok: true, data: { status: response.status, text } };
  }
}

function isTimeout(err: unknown): boolean {
  if (!err || typeof err !== 'object' || !('code' in err)) return false;
  return err.code === 'ETIMEDOUT' || err.code === 'ECONNABORTED';
}

/** axios's only signal that `maxContentLength` cut the answer off is its message. */
function isTooLarge(err: unknown): boolean {
  return axios.isAxiosError(err) && err.code === 'ERR_BAD_RESPONSE' && /maxContentLength/.test(err.message);
}

function elapsed(since: number): number {
  return Math.max(0, Math.round(performance.now() - since));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
