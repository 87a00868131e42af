import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedError } from '../lib/errors.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The token a request presents: `Bearer <token>`, or HTTP Basic with the token as password (browsers). */
function presented(header: string): string | undefined {
  const bearer = /^Bearer (.+)$/i.exec(header)?.[1];
  if (bearer) return bearer;
  const basic = /^Basic (.+)$/i.exec(header)?.[1];
  if (!basic) return undefined;
  const decoded = Buffer.from(basic, 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1);
}

/** Unset `OPERATOR_TOKEN` refuses everyone; with `browser`, a refusal asks for Basic credentials (support opens the dashboard). */
export function requireOperator(operatorToken: string | null, options: { browser?: boolean } = {}): RequestHandler {
  const expected = operatorToken ? digest(operatorToken) : null;
  return (req, res, next) => {
    const given = presented(req.get('authorization') ?? '');
    if (!expected || !given || !timingSafeEqual(digest(given), expected)) {
      if (options.browser) res.set('WWW-Authenticate', 'Basic realm="Ringlane operator", charset="UTF-8"');
      throw new UnauthorizedError('The operator token is required.');
    }
    next();
  };
}
