/**
 * Headers for the HTML pages the server ships (API docs, play client): a Content-Security-Policy
 * of the page's own directives, no MIME sniffing, no framing.
 */
import type { RequestHandler } from 'express';

export function pageHeaders(policy: readonly string[], extra: Record<string, string> = {}): RequestHandler {
  const headers = { 'Content-Security-Policy': policy.join('; '), 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', ...extra };
  return (_req, res, next) => {
    res.set(headers);
    next();
  };
}
