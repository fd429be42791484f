/**
 * Abuse limits for login, registration and password change: one limit per client address
 * and one per username, each with its own config key. Counters live in this process, so
 * with several instances each enforces its own share.
 */
import type { Request, RequestHandler } from 'express';
import { rateLimit, ipKeyGenerator } from 'express-rate-limit';
import type { Config } from '../../config/config.ts';
import { HttpError } from '../errors.ts';
import { sessionOf } from './auth.ts';

type Limits = Config['rateLimit'];

function limiter(config: Limits, limit: number, key: (req: Request) => string, onlyFailures: boolean): RequestHandler {
  return rateLimit({
    windowMs: config.windowSeconds * 1000,
    limit,
    keyGenerator: (req, res) => key(Object.assign(req, { res })),
    // Per-username limits count failures only, so an attacker cannot lock a real user out.
    skipSuccessfulRequests: onlyFailures,
    skip: () => !config.enabled,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (req, _res, next) => {
      const resetTime = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const seconds = Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now()) - Date.now()) / 1000));
      next(new HttpError(429, `Too many attempts. Try again in ${seconds} seconds.`, {}, { 'Retry-After': String(seconds) }));
    },
  });
}

const byAddress = (req: Request): string => ipKeyGenerator(req.ip ?? 'unknown');
const byBodyUsername = (req: Request): string => String((req.body as { username?: unknown })?.username ?? '').trim().toLowerCase();
const bySessionUser = (req: Request): string => sessionOf(req.res!).username.toLowerCase();

export interface RateLimits {
  loginByAddress: RequestHandler;
  loginByUsername: RequestHandler;
  registerByAddress: RequestHandler;
  registerByUsername: RequestHandler;
  changePasswordByAddress: RequestHandler;
  /** Must run after authentication: it keys on the session's account. */
  changePasswordByUsername: RequestHandler;
}

export function createRateLimits(config: Limits): RateLimits {
  return {
    loginByAddress: limiter(config, config.loginPerAddress, byAddress, false),
    loginByUsername: limiter(config, config.loginPerUsername, byBodyUsername, true),
    registerByAddress: limiter(config, config.registerPerAddress, byAddress, false),
    registerByUsername: limiter(config, config.registerPerUsername, byBodyUsername, false),
    changePasswordByAddress: limiter(config, config.changePasswordPerAddress, byAddress, false),
    changePasswordByUsername: limiter(config, config.changePasswordPerUsername, bySessionUser, true),
  };
}
