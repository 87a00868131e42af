import express, { type Express } from 'express';
import { adminRoutes } from './admin/admin.routes.js';
import { requireOperator } from './admin/operator-auth.js';
import { apiKeyRoutes } from './auth/api-keys.routes.js';
import { CredentialStore } from './auth/credential-store.js';
import { sessionRoutes } from './auth/sessions.routes.js';
import { billingRoutes } from './billing/billing.routes.js';
import { resalePriceRoutes } from './billing/resale-prices.routes.js';
import { callRoutes } from './calls/calls.routes.js';
import { campaignRoutes } from './campaigns/campaigns.routes.js';
import { config } from './config.js';
import { eventRoutes } from './events/events.routes.js';
import { authenticate } from './http/authenticate.js';
import { ApiRouter } from './http/endpoint.js';
import { errorHandler, notFound } from './http/error-handler.js';
import { healthRoutes } from './http/health.js';
import { inSequence } from './http/in-sequence.js';
import { openApiRoute } from './http/openapi.js';
import { requestLog } from './http/request-log.js';
import { requestTracing } from './lib/telemetry.js';
import { IdempotentRequests } from './idempotency/idempotent.js';
import { literalUndecodablePath, refuseUnreadableInput } from './http/input-guard.js';
import type { RouteDoc } from './http/route-doc.js';
import { inviteRoutes } from './orgs/invites.routes.js';
import { metricsRoute, queueDashboard } from './admin/ops.routes.js';
import { webhookDeliveryRoutes } from './webhooks/webhook-deliveries.routes.js';
import { tenantRoutes } from './tenants/tenants.routes.js';
import { usageRoutes } from './usage/usage.routes.js';
import { agentRoutes } from './agents/agents.routes.js';
import { bookingPageRoutes, publicBookingPageRoutes } from './booking/booking-page.routes.js';
import { locationRoutes } from './booking/locations.routes.js';
import { serviceRoutes } from './booking/services.routes.js';
import { carrierRoutes } from './carrier/connection.routes.js';
import { contactRoutes } from './contacts/contacts.routes.js';
import { doNotCallRoutes } from './do-not-call/do-not-call.routes.js';
import { messageRoutes } from './messaging/messages.routes.js';
import { smsSenderRoutes } from './messaging/sms-sender.routes.js';
import type { Runtime } from './runtime.js';
import { phoneNumberRoutes } from './numbers/phone-numbers.routes.js';
import { organizationRoutes } from './orgs/organization.routes.js';
import { webhookEndpointRoutes } from './webhooks/webhook-endpoints.routes.js';

export interface AppDeps {
  /** Over a `command` Redis connection: fails fast while Redis is away. */
  runtime: Runtime;
  operatorToken?: string | null;
  /** Overrides TRUST_PROXY (tests stand behind a proxy of their own making). */
  trustProxy?: boolean | number;
  /** Runs first: tests check every response against the OpenAPI document. */
  inspect?: express.RequestHandler;
}

export interface RinglaneApp {
  app: Express;
  /** Flushes batched writes; call after the HTTP server stopped accepting requests, before closing the runtime. */
  close: () => Promise<void>;
  credentials: CredentialStore;
  /** Every route with its schemas (paths as mounted); the OpenAPI document is built from them. */
  routes: RouteDoc[];
}

const mounted = (prefix: string, routes: RouteDoc[]): RouteDoc[] => routes.map((route) => ({ ...route, path: `${prefix}${route.path}` }));

/** The Express application (no listen: see server.ts). */
export function createApp(deps: AppDeps): RinglaneApp {
  const { runtime } = deps;
  const { db, redis, services, repositories } = runtime;
  const credentials = new CredentialStore(repositories.credentials, repositories.organizations, redis);
  const idempotent = new IdempotentRequests(services.idempotency);
  const queues = Object.values(runtime.queues).map((q) => q.queue);
  const operatorToken = deps.operatorToken === undefined ? config.operatorToken : deps.operatorToken;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Which X-Forwarded-For entries req.ip may take: the per-address sign-in limit keys on it.
  app.set('trust proxy', deps.trustProxy ?? config.trustProxy);
  if (deps.inspect) app.use(deps.inspect);
  // Tracing on, each request's server span starts first and holds the rest of the request from the body on.
  const spans = requestTracing();
  const arrival = [requestLog(), literalUndecodablePath, express.json({ limit: '1mb' }), refuseUnreadableInput];
  app.use(inSequence(spans ? [spans.arrived, ...arrival, spans.entered] : arrival));

  const admin = adminRoutes(services.orgs, services.calls, idempotent);
  const api = new ApiRouter(idempotent, runtime.reads);
  apiKeyRoutes(api, services.apiKeys);
  billingRoutes(api, services.billing);
  inviteRoutes(api, services.invites);
  organizationRoutes(api, services.organization);
  carrierRoutes(api, services.carrierConnection);
  agentRoutes(api, services.agents);
  phoneNumberRoutes(api, services.phoneNumbers);
  contactRoutes(api, services.contacts);
  doNotCallRoutes(api, services.doNotCall);
  locationRoutes(api, services.locations);
  serviceRoutes(api, services.offeredServices);
  smsSenderRoutes(api, services.smsSender);
  messageRoutes(api, services.messages);
  bookingPageRoutes(api, services.bookingPage);
  callRoutes(api, services.calls);
  campaignRoutes(api, services.campaigns);
  tenantRoutes(api, services.tenants);
  usageRoutes(api, services.usage);
  resalePriceRoutes(api, services.resalePrices);
  webhookEndpointRoutes(api, services.webhookEndpoints);
  webhookDeliveryRoutes(api, services.webhookDeliveries);
  eventRoutes(api, services.events);
  const bookingPage = publicBookingPageRoutes(services.bookingPage);
  const sessions = sessionRoutes(services.sessions);
  const routes = [...mounted('/admin/v1', admin.routes), ...mounted('/v1', [...sessions.routes, ...api.routes]), ...bookingPage.routes];

  // The API first: its requests, nearly all of them, pass no other route's layer. Each router at its
  // own path: one mounted at `/` would be entered by every request.
  app.get('/v1/openapi.json', openApiRoute(routes));
  app.use(`/v1${sessions.path}`, sessions.router);
  app.use('/v1', inSequence([authenticate(credentials), api.router]));
  healthRoutes(app, db, redis, runtime.reads);
  app.use('/admin/queues', requireOperator(operatorToken, { browser: true }), queueDashboard(queues));
  app.use('/metrics', requireOperator(operatorToken), metricsRoute(redis, new Map(queues.map((q) => [q.name, q]))));
  app.use('/admin/v1', requireOperator(operatorToken), admin.router);
  app.use(bookingPage.path, bookingPage.router);

  app.use(notFound);
  app.use(errorHandler);
  // The runtime is the caller's: it closes it.
  const close = () => credentials.close();
  return { app, credentials, routes, close };
}
