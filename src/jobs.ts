import type { CarrierReport } from './carrier/carrier.js';
import { createQueue as createBullQueue, type JobQueue as Queue, type TypedJob } from './lib/queues.js';
import type { RedisClient } from './lib/redis.js';

/** The job table (see docs/architecture.md#code-layout). Payloads are plain JSON, ids and times as strings. */

/** For jobs without payload (scheduled sweeps). */
export type NoPayload = Record<string, never>;

/** Without `orgId`: the organizations requested meanwhile (CallJobs.dispatch); with it, that one's too (a delayed dispatch). */
export interface DispatchJob {
  orgId?: string;
}
export interface DialJob {
  callId: string;
}
/** One carrier report shared by calls dialed together. */
export interface ReportJob {
  callIds: string[];
  report: CarrierReport;
  /** ISO time of the state change (the events' `occurred_at`). */
  at: string;
}
export interface CampaignTickJob {
  campaignId: string;
}
export interface SendTextJob {
  messageId: string;
}
export interface ApplyStateJob {
  tenantId: string;
}
/** Support's retry through the API: one attempt now, whatever its status. */
export interface DeliverJob {
  deliveryId: string;
  /** ISO; locates the delivery's partition. */
  createdAt: string;
}
/** A failed delivery as the queue dashboard lists it (see failed-delivery-board.ts). */
export interface FailedDeliveryJob extends DeliverJob {
  endpointId: string;
  event: string;
  error: string | null;
  responseStatus: number | null;
  attempts: number;
  /** Set once listed as failed: the job's next run is support's retry. */
  listed?: boolean;
}
export interface RecoverJob {
  endpointId: string;
  since: string;
}

export interface Jobs {
  maintenance: { 'purge-expired': NoPayload; 'history-partitions': NoPayload; 'table-upkeep': NoPayload };
  calls: { dispatch: DispatchJob; dial: DialJob; report: ReportJob; sweep: NoPayload; 'campaign-tick': CampaignTickJob; 'send-text': SendTextJob };
  tenants: { 'apply-state': ApplyStateJob; sweep: NoPayload };
  usage: { rollup: NoPayload };
  webhooks: { deliver: DeliverJob; 'failed-delivery': FailedDeliveryJob; recover: RecoverJob };
}

export type QueueName = keyof Jobs;
export type JobName<Q extends QueueName> = keyof Jobs[Q] & string;
export type JobOf<Q extends QueueName, N extends JobName<Q>> = TypedJob<Jobs[Q], N>;
export type JobQueue<Q extends QueueName> = Queue<Jobs[Q]>;

/** The job names at run time (boot check, dashboard, metrics). */
export const QUEUES: { readonly [Q in QueueName]: ReadonlyArray<JobName<Q>> } = {
  maintenance: ['purge-expired', 'history-partitions', 'table-upkeep'],
  calls: ['dispatch', 'dial', 'report', 'sweep', 'campaign-tick', 'send-text'],
  tenants: ['apply-state', 'sweep'],
  usage: ['rollup'],
  webhooks: ['deliver', 'failed-delivery', 'recover'],
};

export const createQueue = <Q extends QueueName>(name: Q, connection: RedisClient): JobQueue<Q> => createBullQueue<Jobs[Q]>(name, connection);

/** Processors throw to be retried (`UnrecoverableError` for a permanent failure); they never swallow errors. */
export type Processors<Q extends QueueName> = { [N in JobName<Q>]: (job: JobOf<Q, N>, token?: string) => Promise<unknown> };
