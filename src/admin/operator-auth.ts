import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../lib/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `Authorization: Bearer <OPERATOR_TOKEN>` for the operator's admin API, queue dashboard and
 * metrics. Without a configured token, everyone is refused.
 */
export function requireOperator(operatorToken: string | null): RequestHandler {
  const expected = operatorToken ? digest(operatorToken) : null;
  return (req, _res, next) => {
    const given = /^Bearer (.+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!expected || !given || !timingSafeEqual(digest(given), expected)) {
      throw new UnauthorizedError('The operator token is required.');
    }
    next();
  };
}
