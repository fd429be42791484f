import type { AxiosRequestConfig } from 'axios';

/**
 * Request options every upstream call shares: the caller reads every status and parses the
 * body itself (to tell bad JSON from bad shapes), timeouts are named as such, and neither a
 * proxy nor a redirect can send the request somewhere else.
 */
export function upstreamRequestOptions(timeoutMs: number): AxiosRequestConfig<unknown> {
  return {
    timeout: timeoutMs,
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    transitional: { clarifyTimeoutError: true },
    proxy: false,
    maxRedirects: 0,
  };
}
