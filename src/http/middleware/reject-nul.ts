/**
 * Refuses the NUL character (U+0000) anywhere in a request's text: the path, the query and
 * the JSON body (values and property names, at any depth); why, in src/shared/nul.ts. It runs
 * before the contract check, so the answer is the same 400 on every route.
 */
import type { RequestHandler } from 'express';
import { findNul, NUL_MESSAGE } from '../../shared/nul.ts';
import { HttpError } from '../support/errors.ts';

export const rejectNul: RequestHandler = (req, _res, next) => {
  // The path is still percent-encoded here; `%00` is the only way to write NUL in a URL.
  const where = /%00/.test(req.path) ? '/path' : (findNul(req.query, '/query') ?? findNul(req.body, '/body'));
  next(where === null ? undefined : new HttpError(400, `Invalid request: ${where} ${NUL_MESSAGE}`, { errors: [{ path: where, message: NUL_MESSAGE }] }));
};
