import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { Express } from 'express';

/**
 * The HTTP server of an Express app, whose requests and responses are built on the app's own
 * prototypes. Express moves each request and response onto them (`Object.setPrototypeOf` as it
 * enters the app), and V8 gives an object whose prototype changed a hidden class of its own: then
 * every property Node, Express and our middleware add to it makes yet another class, and every read
 * of one misses its inline cache. Constructed on those prototypes, Express's move changes nothing
 * and all requests share their classes: an authenticated read's CPU in the web process halved
 * (docs/operations.md#benchmarks).
 */
export function createAppServer(app: Express): Server {
  class AppRequest extends IncomingMessage {}
  class AppResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  // Express's request and response objects (their methods, `req.app`) stay the prototypes' prototypes.
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype as unknown as Express['request'];
  app.response = AppResponse.prototype as unknown as Express['response'];
  return createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse }, app as unknown as RequestListener<typeof AppRequest, typeof AppResponse>);
}
