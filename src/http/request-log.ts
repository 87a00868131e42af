import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { logger } from '../lib/logger.js';

/** The path as sent, mount point included (`req.path` is router-relative), without the query. */
export const requestPath = (req: Request): string => req.originalUrl.split('?', 1)[0];

/**
 * A request id (the caller's `X-Request-Id`, else a UUID), echoed, and one log line per finished
 * request. Headers are never logged, so no key reaches the logs; pino-http serializes eagerly and costs more.
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
