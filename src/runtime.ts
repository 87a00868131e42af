import type { DataSource } from 'typeorm';
import { AgentsRepository } from './agents/agents.repository.js';
import { ApiKeysService } from './auth/api-keys.service.js';
import { CredentialsRepository } from './auth/credentials.repository.js';
import { SessionsService } from './auth/sessions.service.js';
import { BillingService } from './billing/billing.service.js';
import { LedgerRepository } from './billing/ledger.repository.js';
import { ResalePricesService } from './billing/resale-prices.service.js';
import { BookingPageRepository } from './booking/booking-page.repository.js';
import { BookingPageService } from './booking/booking-page.service.js';
import { LocationsRepository } from './booking/locations.repository.js';
import { ServicesRepository } from './booking/services.repository.js';
import { CallLimits } from './calls/call-limits.js';
import { CallJobs } from './calls/calls.jobs.js';
import { CallsRepository } from './calls/calls.repository.js';
import { CallsService } from './calls/calls.service.js';
import { CallEngine } from './calls/engine.js';
import { CallSweeper } from './calls/sweeper.js';
import { CampaignRunner, campaignCallEndHooks } from './campaigns/campaign-runner.js';
import { CampaignsRepository } from './campaigns/campaigns.repository.js';
import { CampaignsService } from './campaigns/campaigns.service.js';
import { PhoneTimezones } from './campaigns/contact-window.js';
import { Carriers } from './carrier/carriers.js';
import { CarrierConnectionService } from './carrier/connection.service.js';
import { SimulatorCarrier } from './carrier/simulator.js';
import { config } from './config.js';
import { ContactsRepository } from './contacts/contacts.repository.js';
import { DoNotCallRepository } from './do-not-call/do-not-call.repository.js';
import { entities } from './entities.js';
import { migrations } from './migrations/index.js';
import { createQueue, type JobQueue, type QueueName } from './jobs.js';
import { EventsRepository } from './events/events.repository.js';
import { EventsService } from './events/events.service.js';
import { HistoryMaintenance, retainedHistory } from './history/history-partitions.js';
import { HistoryRepository } from './history/history.repository.js';
import { TableUpkeep } from './history/table-upkeep.js';
import { IdempotencyRepository } from './idempotency/idempotency.repository.js';
import { IdempotencyService } from './idempotency/idempotency.service.js';
import { applicationName, createDataSource, createPool } from './lib/db.js';
import { WebhookMetrics } from './lib/metrics.js';
import { listen, type Listener } from './lib/pg-listen.js';
import { Reads } from './lib/reads.js';
import type { RedisClient } from './lib/redis.js';
import { MessagesRepository } from './messaging/messages.repository.js';
import { MessagesService } from './messaging/messages.service.js';
import { SmsSenderService } from './messaging/sms-sender.service.js';
import { ConfirmationTexts } from './messaging/texts.js';
import { PhoneNumbersRepository } from './numbers/phone-numbers.repository.js';
import { PhoneNumbersService } from './numbers/phone-numbers.service.js';
import { InvitesRepository } from './orgs/invites.repository.js';
import { InvitesService } from './orgs/invites.service.js';
import { OrgResourceService } from './orgs/org-resource.service.js';
import { OrganizationService } from './orgs/organization.service.js';
import { OrganizationsRepository } from './orgs/organizations.repository.js';
import { OrgsService } from './orgs/orgs.service.js';
import { TenantEffects } from './tenants/tenant-effects.js';
import { TenantJobs } from './tenants/tenants.jobs.js';
import { SpendLimits } from './tenants/spend-limit.js';
import { SpendLimitsRepository } from './tenants/spend-limits.repository.js';
import { TenantsService } from './tenants/tenants.service.js';
import { UsageRollup } from './usage/usage-rollup.js';
import { UsageRepository } from './usage/usage.repository.js';
import { UsageService } from './usage/usage.service.js';
import { AttemptRecorder } from './webhooks/attempt-recorder.js';
import { AttemptsRepository } from './webhooks/attempts.repository.js';
import { DeliveryClaimsRepository } from './webhooks/delivery-claims.repository.js';
import { DeliveryLogRepository } from './webhooks/delivery-log.repository.js';
import { DELIVERIES_CHANNEL } from './webhooks/delivery-notifications.js';
import { DeliverySender } from './webhooks/delivery-send.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import { FailedDeliveryBoard } from './webhooks/failed-delivery-board.js';
import { OutboxRepository } from './webhooks/outbox.repository.js';
import { Relay, RelayLoop } from './webhooks/relay.js';
import { WebhookDeliveriesService } from './webhooks/webhook-deliveries.service.js';
import { WebhookEndpointsRepository } from './webhooks/webhook-endpoints.repository.js';
import { WebhookEndpointsService } from './webhooks/webhook-endpoints.service.js';
import { WebhookJobs } from './webhooks/webhook.jobs.js';

/** A DataSource over every domain's entities (not yet connected: `initialize()` it). */
export const openDatabase = (url: string = config.databaseUrl): DataSource => createDataSource(url, { entities, migrations });

export interface RuntimeDeps {
  db: DataSource;
  redis: RedisClient;
  /** Where the lists, feed, usage and delivery history read from (the web process's standby); default: the primary. */
  reads?: Reads;
  /** The clock of rules that depend on the time of day or the month (campaigns' calling windows, tenants' monthly spend limits); tests fix it. */
  now?: () => Date;
}

/** The composition root of the API and every worker: wired alike, so a call ended anywhere runs every domain's hooks. */
export function createRuntime({ db, redis, reads = new Reads(db), now = () => new Date() }: RuntimeDeps) {
  const queues = {
    maintenance: createQueue('maintenance', redis),
    calls: createQueue('calls', redis),
    tenants: createQueue('tenants', redis),
    usage: createQueue('usage', redis),
    webhooks: createQueue('webhooks', redis),
  } satisfies { [Q in QueueName]: JobQueue<Q> };
  const jobs = {
    calls: new CallJobs(queues.calls, redis),
    tenants: new TenantJobs(queues.tenants),
    webhooks: new WebhookJobs(queues.webhooks),
    failedDeliveries: new FailedDeliveryBoard(queues.webhooks),
  };

  // The one writer of operational events, and the feed.
  const events = new EventsRepository(db, reads);
  const repositories = {
    organizations: new OrganizationsRepository(db, reads),
    invites: new InvitesRepository(db, reads),
    credentials: new CredentialsRepository(db, reads),
    ledger: new LedgerRepository(db, events, reads),
    events,
  };
  const { organizations, credentials, ledger } = repositories;
  // Tenant provisioning creates a tenant's resources through these.
  const resources = {
    agents: new AgentsRepository(db, reads),
    contacts: new ContactsRepository(db, reads),
    locations: new LocationsRepository(db, reads),
    services: new ServicesRepository(db, reads),
  };

  const carrierConnection = new CarrierConnectionService(db, organizations);
  const carriers = new Carriers([new SimulatorCarrier()], carrierConnection);
  const calls = new CallsRepository(db, reads);
  const campaigns = new CampaignsRepository(db, reads);
  const doNotCall = new DoNotCallRepository(db, reads);
  const messages = new MessagesRepository(db, reads);
  const numbers = new PhoneNumbersRepository(db, reads);
  const smsSender = new SmsSenderService(db, numbers, organizations);
  const texts = new ConfirmationTexts(messages, carriers, organizations);
  const spend = new SpendLimits(organizations, new SpendLimitsRepository(), now);
  const engine = new CallEngine(
    db,
    calls,
    organizations,
    new CallLimits(redis),
    jobs.calls,
    carriers,
    texts,
    ledger,
    [campaignCallEndHooks(campaigns, jobs.calls)],
    spend,
  );

  const tenants = new TenantsService(db, organizations, resources, jobs.tenants, redis, events, spend);
  const apiKeys = new ApiKeysService(db, credentials, organizations, redis);
  const accountServices = {
    apiKeys,
    billing: new BillingService(db, ledger, organizations),
    invites: new InvitesService(repositories.invites),
    organization: new OrganizationService(db, organizations),
    orgs: new OrgsService(db, organizations, ledger, apiKeys, redis),
    sessions: new SessionsService(credentials, organizations, redis),
    tenants,
    resalePrices: new ResalePricesService(db, organizations, tenants),
    tenantEffects: new TenantEffects(organizations, { campaigns, calls }, engine),
  };

  const webhookEndpoints = new WebhookEndpointsRepository(db, reads);
  const deliveryLog = new DeliveryLogRepository(db, reads);
  const usage = new UsageRepository(db, reads);

  const services = {
    ...accountServices,
    agents: new OrgResourceService(resources.agents),
    bookingPage: new BookingPageService(db, new BookingPageRepository(db), organizations),
    contacts: new OrgResourceService(resources.contacts),
    doNotCall: new OrgResourceService(doNotCall),
    locations: new OrgResourceService(resources.locations),
    offeredServices: new OrgResourceService(resources.services),
    calls: new CallsService(db, calls, numbers, engine, organizations, resources.contacts, spend),
    callSweeper: new CallSweeper(engine, calls, campaigns, messages),
    campaigns: new CampaignsService(db, campaigns, jobs.calls, resources.agents, resources.contacts),
    campaignRunner: new CampaignRunner(db, campaigns, calls, organizations, engine, {
      contacts: resources.contacts,
      doNotCall,
      timezones: new PhoneTimezones(),
      now,
      spend,
    }),
    carrierConnection,
    messages: new MessagesService(messages, organizations),
    phoneNumbers: new PhoneNumbersService(db, numbers, carriers, smsSender, resources.agents),
    smsSender,
    texts,
    events: new EventsService(events, organizations),
    history: new HistoryMaintenance(new HistoryRepository(db)),
    tableUpkeep: new TableUpkeep(new HistoryRepository(db)),
    idempotency: new IdempotencyService(new IdempotencyRepository(db)),
    usage: new UsageService(usage),
    usageRollup: new UsageRollup(usage),
    webhookDeliveries: new WebhookDeliveriesService(deliveryLog, webhookEndpoints, jobs.webhooks, jobs.failedDeliveries, organizations),
    webhookEndpoints: new WebhookEndpointsService(db, webhookEndpoints, organizations),
  };

  return {
    db,
    redis,
    reads,
    queues,
    jobs,
    repositories,
    engine,
    services,
    /** Closes the producers it made (not `db` and `redis`: their owner closes them). */
    async close(): Promise<void> {
      await Promise.all(Object.values(queues).map((queue) => queue.close()));
    },
  };
}

export type Runtime = ReturnType<typeof createRuntime>;

/**
 * The webhooks worker's delivery path, on a pg pool of its own (named statements, one round trip
 * each), connected directly to Postgres (`DATABASE_DIRECT_URL`) even behind a transaction pooler:
 * four connections a process, and its LISTEN one.
 */
export function createDeliveryPath({ jobs, redis }: Runtime) {
  const { webhook } = config;
  // A claim uses one connection (two with rate-limited endpoints), a record one, a support retry one.
  const pool = createPool(4);
  const metrics = new WebhookMetrics(redis);
  const recorder = new AttemptRecorder(new AttemptsRepository(pool), metrics, webhook.disableAfterHours, {
    onFailed: (reports) => jobs.failedDeliveries.list(reports),
  });
  const dispatcher = new Dispatcher(
    new DeliveryClaimsRepository(pool),
    recorder,
    new DeliverySender({ timeoutMs: webhook.timeoutMs, allowPrivateNetworks: webhook.allowPrivateNetworks }),
    {
      concurrency: config.webhooksWorkerConcurrency,
      endpointConcurrency: config.webhookEndpointConcurrency,
      // A claimed delivery may wait for one attempt of its lane, then make its own.
      leaseSeconds: Math.ceil((2 * webhook.timeoutMs) / 1000) + 10,
      pollMs: 500,
      retained: () => retainedHistory('webhook_deliveries'),
      policy: { maxAttempts: webhook.maxAttempts, backoffBaseMs: webhook.backoffBaseMs, timeoutMs: webhook.timeoutMs },
    },
  );
  let listener: Listener | null = null;
  return {
    dispatcher,
    async start(): Promise<void> {
      // Woken by the relay's NOTIFY; polls besides, so a missed notification costs at most a poll.
      listener = await listen(config.databaseDirectUrl, DELIVERIES_CHANNEL, (payload) => dispatcher.notified(payload), {
        onReconnect: () => dispatcher.rescan(),
        applicationName,
      });
      dispatcher.start();
    },
    async stop(): Promise<void> {
      await dispatcher.stop();
      await listener?.close();
      await metrics.flush();
      await pool.end();
    },
  };
}

/** The relay needs no Redis, so it is built apart from `createRuntime`. */
export const createRelay = (db: DataSource): Relay => new Relay(db, new OutboxRepository(db));

/** The relay process's loop over `createRelay`'s relay. */
export const createRelayLoop = (db: DataSource): RelayLoop => new RelayLoop(createRelay(db), new OutboxRepository(db));
