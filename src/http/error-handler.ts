import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, InvalidRequestError, PayloadTooLargeError, RateLimitedError } from '../lib/errors.js';
import { logger } from '../lib/logger.js';
import { requestPath } from './request-log.js';

/** Errors raised by express.json(), by their `type`. */
function fromBodyParser(err: { type?: string; message?: string }): AppError | null {
  switch (err.type) {
    case 'entity.too.large':
      return new PayloadTooLargeError('1 MB');
    case 'entity.parse.failed':
      return new InvalidRequestError('The request body is not valid JSON.', [{ path: 'body', message: 'malformed JSON' }]);
    case 'encoding.unsupported':
    case 'charset.unsupported':
    case 'request.aborted':
    case 'request.size.invalid':
      return new InvalidRequestError(err.message ?? 'The request body could not be read.', [{ path: 'body', message: err.message ?? 'unreadable' }]);
    default:
      return null;
  }
}

/** Client errors raised by Express itself, such as a path with broken percent-encoding (URIError, status 400). */
function fromExpress(err: unknown): AppError | null {
  if (!(err instanceof URIError) || (err as { status?: number }).status !== 400) return null;
  return new InvalidRequestError(`The request could not be read: ${err.message}.`, [
    { path: 'request', message: err.message },
  ]);
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
  const known = err instanceof AppError ? err : (fromBodyParser(err) ?? fromExpress(err));
  const requestId = res.locals.requestId as string | undefined;
  if (res.headersSent) {
    logger.error({ err, reqId: requestId }, 'error after the response started');
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
