/**
 * Abuse limits per client address for login, registration and password change, one per
 * requested username for registration, and a play throttle on game commands per session; each
 * with its own config key. Failed passwords are counted per account by the account service
 * (failed-attempts.ts), which alone knows whether a name is an account. Counters live in this
 * process, so with several instances each enforces its own share.
 */
import type { Request, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import type { Config } from '../../config/config.ts';
import { TooManyRequests } from '../../services/errors.ts';
import { sessionOf } from './auth.ts';

type Limits = Config['rateLimit'];

function limiter(config: Limits, limit: number, key: (req: Request) => string, windowSeconds = config.windowSeconds, what = 'attempts'): RequestHandler {
  return rateLimit({
    windowMs: windowSeconds * 1000,
    limit,
    keyGenerator: (req, res) => key(Object.assign(req, { res })),
    skip: () => !config.enabled,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (req, _res, next) => {
      const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now()) - Date.now()) / 1000));
      next(new TooManyRequests(what, seconds));
    },
  });
}

/** The client address as every per-address limit counts it (IPv6 by its /56, as express-rate-limit masks it). */
export const byAddress = (req: Request): string => ipKeyGenerator(req.ip ?? 'unknown');
const byBodyUsername = (req: Request): string => String((req.body as { username?: unknown })?.username ?? '').trim().toLowerCase();
// The row id, not the token: counters keyed by a secret would keep it in memory.
const bySession = (req: Request): string => String(sessionOf(req.res!).id);

export interface RateLimits {
  loginByAddress: RequestHandler;
  registerByAddress: RequestHandler;
  registerByUsername: RequestHandler;
  changePasswordByAddress: RequestHandler;
  /** Must run after authentication: it keys on the session. */
  commandBySession: RequestHandler;
}

export function createRateLimits(config: Limits): RateLimits {
  return {
    loginByAddress: limiter(config, config.loginPerAddress, byAddress),
    registerByAddress: limiter(config, config.registerPerAddress, byAddress),
    registerByUsername: limiter(config, config.registerPerUsername, byBodyUsername),
    changePasswordByAddress: limiter(config, config.changePasswordPerAddress, byAddress),
    commandBySession: limiter(config, config.commandPerSession, bySession, config.commandWindowSeconds, 'commands'),
  };
}
