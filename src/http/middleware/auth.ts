/**
 * Session authentication for protected routes. The session id is read from where the
 * contract puts it (body, query or path); any problem answers 401 before the handler runs.
 */
import type { RequestHandler, Response } from 'express';
import type { AuthenticatedSession, SessionService } from '../../services/accounts/session-service.ts';
import { hasPermission, type Permission } from '../../services/accounts/roles.ts';
import { insufficientPermission } from '../../services/admin/user-admin-service.ts';

export type SessionSource = 'body' | 'query' | 'params';

export function authenticate(sessions: SessionService, source: SessionSource): RequestHandler {
  return async (req, res, next) => {
    const container = (source === 'body' ? req.body : source === 'query' ? req.query : req.params) as Record<string, unknown> | undefined;
    const id = container?.session_id;
    res.locals.session = await sessions.validate(typeof id === 'string' ? id : undefined);
    next();
  };
}

export function requirePermission(permission: Permission): RequestHandler {
  return (_req, res, next) => {
    next(hasPermission(sessionOf(res).role, permission) ? undefined : insufficientPermission(permission));
  };
}

/** The session `authenticate` stored for this request. */
export function sessionOf(res: Response): AuthenticatedSession {
  return res.locals.session as AuthenticatedSession;
}
