/**
 * The HTTP door's abuse limits: each route counts its requests in one of the service's limits
 * (src/services/limits/limits.ts) by the client address, the requested username or the
 * session, and answers 429 with Retry-After past it. Failed logins are counted per account,
 * per address and per address and name by the account service, which alone knows whether a
 * login failed (the routes give it the address, `byAddress`); game commands by the game's one
 * entry (GameService.play), for every door alike.
 */
import type { Request, RequestHandler } from 'express';
import { addressKey, type Limit, type Limits } from '../../services/limits/limits.ts';
import { usernameKey } from '../../shared/names.ts';

function limitBy(limit: Limit, key: (req: Request) => string): RequestHandler {
  return async (req, _res, next) => {
    next((await limit.hit(key(req))) ?? undefined);
  };
}

/** The client address as every per-address limit counts it (IPv6 by its /56). */
export const byAddress = (req: Request): string => addressKey(req.ip ?? 'unknown');
const byBodyUsername = (req: Request): string => usernameKey(String((req.body as { username?: unknown })?.username ?? ''));

export interface RateLimits {
  registerByAddress: RequestHandler;
  registerByUsername: RequestHandler;
  changePasswordByAddress: RequestHandler;
}

export function createRateLimits(limits: Limits): RateLimits {
  return {
    registerByAddress: limitBy(limits.registerByAddress, byAddress),
    registerByUsername: limitBy(limits.registerByUsername, byBodyUsername),
    changePasswordByAddress: limitBy(limits.changePasswordByAddress, byAddress),
  };
}
