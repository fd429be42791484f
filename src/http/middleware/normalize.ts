/**
 * Body fields the specification reads trimmed and lower-cased (the role of a new account, the
 * action and new role of user management; the action of character management likewise). They
 * are normalized before the contract checks them against its enums, so ` Worldbuilder ` is a
 * worldbuilder and SDKs still get an enum.
 */
import type { RequestHandler } from 'express';

const CASE_INSENSITIVE: Readonly<Record<string, readonly string[]>> = {
  '/admin/user/create': ['role'],
  '/admin/user/manage': ['action', 'new_role'],
  '/admin/character/manage': ['action'],
};

export const normalizeCaseInsensitiveFields: RequestHandler = (req, _res, next) => {
  const fields = req.method === 'POST' ? CASE_INSENSITIVE[req.path] : undefined;
  const body = req.body as Record<string, unknown> | undefined;
  if (fields && typeof body === 'object' && body !== null) {
    for (const field of fields) {
      const value = body[field];
      if (typeof value === 'string') body[field] = value.trim().toLowerCase();
    }
  }
  next();
};
