import type { RequestHandler } from 'express';

/**
 * Middleware run one after another as a single Express layer. What every request passes before
 * routing is one layer, not four, and so are authentication and the API's routes: the router's work
 * per layer (URL parsing, matching, a closure per step) cost more than these middleware's own
 * (docs/operations.md#benchmarks). As in Express, a handler's error reaches the error handler
 * whether it is thrown, passed to `next` or the rejection of the promise the handler returns.
 */
export function inSequence(handlers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (err?: unknown) => {
      if (err) return done(err);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        const returned: unknown = handler(req, res, next);
        if (returned instanceof Promise) returned.catch(done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
