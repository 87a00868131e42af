import express, { type Express } from 'express';
import type { Redis } from 'ioredis';
import { adminRoutes } from './admin/admin.routes.js';
import { requireOperator } from './admin/operator-auth.js';
import { actorOf } from './auth/actor.js';
import { apiKeyRoutes } from './auth/api-keys.routes.js';
import { ApiKeysService } from './auth/api-keys.service.js';
import { CredentialStore } from './auth/credential-store.js';
import { sessionRoutes } from './auth/sessions.js';
import { billingRoutes } from './billing/billing.routes.js';
import { config } from './config.js';
import { authenticate } from './http/authenticate.js';
import { ApiRouter } from './http/endpoint.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { healthRoutes } from './http/health.js';
import { requestLog } from './http/request-log.js';
import { idempotency } from './idempotency/idempotency.middleware.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { db } from './lib/db.js';
import { OrgsService } from './orgs/orgs.service.js';

export interface AppDeps {
  /** A `command` connection (fails fast while Redis is away). */
  redis: Redis;
  operatorToken?: string | null;
}

export interface RinglaneApp {
  app: Express;
  /** Flushes batched writes; call after the HTTP server stopped accepting requests. */
  close(): Promise<void>;
  credentials: CredentialStore;
}

/** The Express application (no listen: see server.ts). */
export function createApp(deps: AppDeps): RinglaneApp {
  const credentials = new CredentialStore(db, deps.redis);
  const idempotencyService = new IdempotencyService(db);
  const orgs = new OrgsService(deps.redis);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestLog());
  app.use(express.json({ limit: '1mb' }));
  app.use(healthRoutes(db, deps.redis));

  app.use(
    '/admin/v1',
    requireOperator(deps.operatorToken === undefined ? config.operatorToken : deps.operatorToken),
    adminRoutes(orgs, idempotency(idempotencyService, () => 'operator')),
  );

  const api = new ApiRouter(idempotency(idempotencyService, (res) => actorOf(res).org.id));
  apiKeyRoutes(api, new ApiKeysService(deps.redis));
  billingRoutes(api);
  app.use('/v1', sessionRoutes(), authenticate(credentials), api.router);

  app.use(notFound);
  app.use(errorHandler);
  return { app, credentials, close: () => credentials.close() };
}
