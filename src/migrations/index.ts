import type { MigrationInterface } from 'typeorm';
import { Foundation1795366114383 } from './1795366114383-Foundation.js';
import { VoiceOrganization1795368039388 } from './1795368039388-VoiceOrganization.js';
import { Tenants1795369794608 } from './1795369794608-Tenants.js';
import { Invites1795369913187 } from './1795369913187-Invites.js';
import { Webhooks1795370287462 } from './1795370287462-Webhooks.js';
import { IdempotencyPerCredential1795400000000 } from './1795400000000-IdempotencyPerCredential.js';
import { DeliveryQueuePerEndpoint1795500000000 } from './1795500000000-DeliveryQueuePerEndpoint.js';
import { HistoryPartitions1795600000000 } from './1795600000000-HistoryPartitions.js';
import { TextsSentByJob1795731000000 } from './1795731000000-TextsSentByJob.js';
import { WebhookRotationAndThrottle1795800000000 } from './1795800000000-WebhookRotationAndThrottle.js';
import { EventsFeed1795810000000 } from './1795810000000-EventsFeed.js';
import { DoNotCall1795820000000 } from './1795820000000-DoNotCall.js';
import { ResalePrices1795830000000 } from './1795830000000-ResalePrices.js';
import { RelayWakeup1795840000000 } from './1795840000000-RelayWakeup.js';
import { TenantExternalRefIndex1795850000000 } from './1795850000000-TenantExternalRefIndex.js';
import { EventAccount1795860000000 } from './1795860000000-EventAccount.js';
import { ResellerWideEndpoints1795870000000 } from './1795870000000-ResellerWideEndpoints.js';
import { UsageBucketsCovering1795880000000 } from './1795880000000-UsageBucketsCovering.js';
import { TenantSpendLimit1795890000000 } from './1795890000000-TenantSpendLimit.js';
import { TenantRestrictedApiKeys1795900000000 } from './1795900000000-TenantRestrictedApiKeys.js';
import { TraceParent1795910000000 } from './1795910000000-TraceParent.js';
import { CallsStatusInPlace1795920000000 } from './1795920000000-CallsStatusInPlace.js';
import { LedgerBalancePerStatement1795930000000 } from './1795930000000-LedgerBalancePerStatement.js';

/** Every migration, in order. Listed explicitly so the compiled build and tsx load the same set. */
export const migrations: Array<new () => MigrationInterface> = [
  Foundation1795366114383,
  VoiceOrganization1795368039388,
  Tenants1795369794608,
  Invites1795369913187,
  Webhooks1795370287462,
  IdempotencyPerCredential1795400000000,
  DeliveryQueuePerEndpoint1795500000000,
  HistoryPartitions1795600000000,
  TextsSentByJob1795731000000,
  WebhookRotationAndThrottle1795800000000,
  EventsFeed1795810000000,
  DoNotCall1795820000000,
  ResalePrices1795830000000,
  RelayWakeup1795840000000,
  TenantExternalRefIndex1795850000000,
  EventAccount1795860000000,
  ResellerWideEndpoints1795870000000,
  UsageBucketsCovering1795880000000,
  TenantSpendLimit1795890000000,
  TenantRestrictedApiKeys1795900000000,
  TraceParent1795910000000,
  CallsStatusInPlace1795920000000,
  LedgerBalancePerStatement1795930000000,
];
