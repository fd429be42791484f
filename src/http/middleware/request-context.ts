/**
 * Gives every request an id (the client's `X-Request-Id` when it is sane, else a new UUID),
 * echoes it, runs the rest of the request inside the logging context, and writes one access
 * log line when the response finishes. The context also carries an AbortSignal that fires
 * when the client disconnects early, so expensive work for nobody (password hashing) stops;
 * it is made only when asked for, since few requests hash and an open event stream would
 * otherwise hold one for its whole life.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { requestContext, redactSessionIds, type Logger } from '../../logging/logger.ts';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContextMiddleware(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const offered = req.get('x-request-id');
    const requestId = offered && CLIENT_ID.test(offered) ? offered : randomUUID();
    res.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    let abandoned: AbortController | undefined;
    let hungUp = false;
    // 'close' fires for every request: after the response, or when the client hangs up first.
    res.on('close', () => {
      const finished = res.writableFinished;
      if (!finished) {
        hungUp = true;
        abandoned?.abort();
      }
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info('request', {
        request_id: requestId,
        method: req.method,
        // The path only: queries carry session ids; path segments may too, so redact them.
        path: redactSessionIds(req.originalUrl.split('?')[0] ?? '/'),
        status: finished ? res.statusCode : 499,
        duration_ms: Math.round(durationMs * 100) / 100,
      });
    });
    const context = {
      requestId,
      get signal(): AbortSignal {
        if (!abandoned) {
          abandoned = new AbortController();
          if (hungUp) abandoned.abort();
        }
        return abandoned.signal;
      },
    };
    requestContext.run(context, next);
  };
}
