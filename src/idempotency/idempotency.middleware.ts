import type { RequestHandler } from 'express';
import { logger } from '../lib/logger.js';
import { checkKey, RecordSecrets, type IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on a POST (CONTRACT.md §2): the first request runs and its response is
 * stored before it is sent; a repeat replays it with `Idempotent-Replayed: true`.
 * Server errors (5xx) are not stored: the key is released so the client can try again.
 */
export function idempotency(service: IdempotencyService, scopeOf: (res: Parameters<RequestHandler>[1]) => string): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('idempotency-key');
    if (key === undefined || req.method !== 'POST') return next();
    checkKey(key);
    const scope = scopeOf(res);
    const secrets = new RecordSecrets(scope, key);
    const claim = await service.claim(scope, secrets, { method: req.method, path: req.originalUrl, body: req.body });
    if (claim.kind === 'replay') {
      res.set('Idempotent-Replayed', 'true').status(claim.response.status).json(claim.response.body);
      return;
    }
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const settle =
        res.statusCode >= 500 ? service.release(scope, secrets) : service.complete(scope, secrets, { status: res.statusCode, body });
      settle.then(
        () => send(body),
        (err) => {
          logger.error({ err }, 'could not store the idempotent response');
          send(body);
        },
      );
      return res;
    };
    next();
  };
}
