import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { logger } from '../lib/logger.js';

/**
 * The path as the client sent it, mount point included (`req.path` is relative to the router
 * that handles it: `POST /v1/calls` would read `/calls`), without the query string.
 */
export const requestPath = (req: Request): string => req.originalUrl.split('?', 1)[0];

/**
 * Gives each request an id (the caller's `X-Request-Id`, else a UUID), echoes it in the
 * response, and logs one line per finished request: method, path, status, duration. Headers
 * are never logged, so no key or token can reach the logs. (pino-http serializes every
 * request eagerly, whatever the level; this costs a fraction of that on the hot path.)
 */
export function requestLog(): RequestHandler {
  const enabled = logger.isLevelEnabled('info');
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && given.length > 0 ? given.slice(0, 100) : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    if (enabled) {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        logger.info({ reqId: id, method: req.method, path: requestPath(req), status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
      });
    }
    next();
  };
}
