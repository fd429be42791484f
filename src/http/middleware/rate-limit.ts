/**
 * The HTTP side of the abuse limits (src/services/rate-limits.ts): login, registration and
 * password change per client address, registration per requested username, and the play
 * throttle on game commands per session. Each middleware counts into the service's counter,
 * which the telnet door shares, and answers 429 with `Retry-After` and the draft-8 `RateLimit`
 * headers.
 */
import type { Request, RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { addressKey, usernameKey, type AttemptLimit, type RateLimits as Limits } from '../../services/rate-limits.ts';
import { sessionOf } from './auth.ts';

function limiter(limit: AttemptLimit, key: (req: Request) => string): RequestHandler {
  return rateLimit({
    windowMs: limit.windowMs,
    limit: limit.limit,
    store: limit.store,
    keyGenerator: (req, res) => key(Object.assign(req, { res })),
    skip: () => !limit.enabled,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (req, _res, next) => {
      next(limit.exceeded((req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime));
    },
  });
}

const byAddress = (req: Request): string => addressKey(req.ip ?? 'unknown');
const byBodyUsername = (req: Request): string => usernameKey(String((req.body as { username?: unknown })?.username ?? ''));
const bySession = (req: Request): string => String(sessionOf(req.res!).id);

export interface RateLimits {
  loginByAddress: RequestHandler;
  registerByAddress: RequestHandler;
  registerByUsername: RequestHandler;
  changePasswordByAddress: RequestHandler;
  /** Must run after authentication: it keys on the session. */
  commandBySession: RequestHandler;
}

export function createRateLimits(limits: Limits): RateLimits {
  return {
    loginByAddress: limiter(limits.loginByAddress, byAddress),
    registerByAddress: limiter(limits.registerByAddress, byAddress),
    registerByUsername: limiter(limits.registerByUsername, byBodyUsername),
    changePasswordByAddress: limiter(limits.changePasswordByAddress, byAddress),
    commandBySession: limiter(limits.commandBySession, bySession),
  };
}
