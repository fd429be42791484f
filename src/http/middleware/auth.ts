/**
 * Session authentication for protected routes. The session id comes from where the spec puts
 * it (body, query or path) or from `Authorization: Bearer <session_id>`, the form SDK
 * generators and Postman understand; any problem answers 401 before the handler runs.
 */
import type { Request, RequestHandler, Response } from 'express';
import { INVALID_SESSION, type AuthenticatedSession, type SessionService } from '../../services/accounts/session-service.ts';
import { hasPermission, type Permission } from '../../shared/roles.ts';
import { insufficientPermission } from '../../services/admin/user-admin-service.ts';
import { HttpError } from '../support/errors.ts';

export type SessionSource = 'body' | 'query' | 'params';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The contract's SessionId pattern. The contract checks the fields; the bearer header is
 * checked here, so no malformed id of either kind reaches a query.
 */
export const SESSION_ID_FORMAT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const SESSION_MISMATCH = 'session_id and the Authorization bearer token name different sessions; send one of them.';

/**
 * The session id a request presents: its `session_id` field or parameter, its bearer token,
 * or both when they agree (400 when they differ). Undefined when it presents none; a malformed
 * one answers 401 like an unknown one.
 */
export function presentedSessionId(req: Request, source: SessionSource): string | undefined {
  const container = (source === 'body' ? req.body : source === 'query' ? req.query : req.params) as Record<string, unknown> | undefined;
  const field = container?.session_id;
  const fromField = typeof field === 'string' && field !== '' ? field : undefined;
  const fromHeader = BEARER.exec(req.get('authorization') ?? '')?.[1];
  for (const id of [fromField, fromHeader]) if (id !== undefined && !SESSION_ID_FORMAT.test(id)) throw new HttpError(401, INVALID_SESSION);
  if (fromField !== undefined && fromHeader !== undefined && fromField !== fromHeader) throw new HttpError(400, SESSION_MISMATCH);
  return fromField ?? fromHeader;
}

export function authenticate(sessions: SessionService, source: SessionSource): RequestHandler {
  return async (req, res, next) => {
    res.locals.session = await sessions.validate(presentedSessionId(req, source));
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
