import type { EntitySchema } from 'typeorm';
import { Organization } from './orgs/organization.entity.js';
import { Member } from './orgs/member.entity.js';
import { Invite } from './orgs/invite.entity.js';
import { ApiKey } from './auth/api-key.entity.js';
import { Session } from './auth/session.entity.js';
import { LedgerEntry } from './billing/ledger-entry.entity.js';
import { IdempotencyRecord } from './idempotency/idempotency-record.entity.js';
import { Agent } from './agents/agent.entity.js';
import { PhoneNumber } from './numbers/phone-number.entity.js';
import { Contact } from './contacts/contact.entity.js';
import { Location } from './booking/location.entity.js';
import { Service } from './booking/service.entity.js';
import { Campaign } from './campaigns/campaign.entity.js';
import { CampaignContact } from './campaigns/campaign-contact.entity.js';
import { Call } from './calls/call.entity.js';
import { CallEvent } from './calls/call-event.entity.js';
import { Message } from './messaging/message.entity.js';
import { UsageBucket } from './usage/usage-bucket.entity.js';
import { WebhookEndpoint } from './webhooks/webhook-endpoint.entity.js';
import { WebhookDelivery } from './webhooks/webhook-delivery.entity.js';
import { DeliveryAttempt } from './webhooks/delivery-attempt.entity.js';
import { UsageWatermark } from './usage/usage-watermark.entity.js';
import { DoNotCallEntry } from './do-not-call/do-not-call-entry.entity.js';
import { TenantSpendNotice } from './tenants/spend-notice.entity.js';

/** A TypeORM entity class: TypeORM constructs its instances (one per row) with no arguments. */
type EntityClass = new () => object;

/** Every domain's TypeORM entities (the schema itself comes from migrations). */
export const entities: Array<EntityClass | EntitySchema> = [
  Organization,
  Member,
  ApiKey,
  Session,
  LedgerEntry,
  IdempotencyRecord,
  Agent,
  PhoneNumber,
  Contact,
  Location,
  Service,
  Campaign,
  CampaignContact,
  Call,
  CallEvent,
  Message,
  UsageBucket,
  UsageWatermark,
  WebhookEndpoint,
  WebhookDelivery,
  DeliveryAttempt,
  Invite,
  DoNotCallEntry,
  TenantSpendNotice,
];
