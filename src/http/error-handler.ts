import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, InvalidRequestError, PayloadTooLargeError, RateLimitedError } from '../lib/errors.js';
import { logger } from '../lib/logger.js';
import { requestPath } from './request-log.js';

interface HttpError {
  type?: string;
  message?: string;
  status?: number;
  expose?: boolean;
}

/**
 * Errors raised by express.json() while reading a body. Besides its typed ones, it raises
 * the errors of the streams it reads through (a `Content-Encoding: gzip` body that does not
 * inflate) as client errors: `expose`d, status 4xx, no `type`. Every one of them is the
 * client's body that could not be read.
 */
function fromBodyParser(err: HttpError): AppError | null {
  if (err.type === 'entity.too.large') return new PayloadTooLargeError('1 MB');
  if (err.type === 'entity.parse.failed') return new InvalidRequestError('The request body is not valid JSON.', [{ path: 'body', message: 'malformed JSON' }]);
  if (err.expose !== true || typeof err.status !== 'number' || err.status < 400 || err.status > 499) return null;
  const reason = err.message || 'unreadable';
  return new InvalidRequestError(`The request body could not be read: ${reason}.`, [{ path: 'body', message: reason }]);
}

/** Unknown route: 404 `not_found`. */
export const notFound: RequestHandler = (req) => {
  throw new AppError(404, 'not_found', `No route ${req.method} ${req.path}.`);
};

/**
 * The one place errors become responses, in CONTRACT.md's shape. Anything that is not an
 * AppError is logged with the request id and answered 500 `internal_error`, without internals.
 */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const known = err instanceof AppError ? err : fromBodyParser(err as HttpError);
  const requestId = res.locals.requestId as string | undefined;
  if (res.headersSent) {
    // A body cut short must not pass for a whole one: the client sees the connection broken.
    logger.error({ err, reqId: requestId }, 'error after the response started');
    res.destroy();
    return;
  }
  if (!known) {
    logger.error({ err, reqId: requestId, method: req.method, path: requestPath(req) }, 'unhandled error');
    res.status(500).json({ error: { code: 'internal_error', message: 'Something went wrong on our side.', request_id: requestId } });
    return;
  }
  if (known instanceof RateLimitedError) res.set('Retry-After', String(known.retryAfterSeconds));
  res.status(known.status).json({ error: { code: known.code, message: known.message, ...known.extra } });
};
