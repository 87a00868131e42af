import type { CarrierReport } from './carrier/carrier.js';
import { createQueue as createBullQueue, type JobQueue as Queue, type TypedJob } from './lib/queues.js';
import type { RedisClient } from './lib/redis.js';

/**
 * The one table of jobs: each queue, its job names, and the payload of each. Producers
 * (`*.jobs.ts`) and processors (`workers/processors/`) are typed from it, so a processor cannot
 * read a field its producer never sends. Payloads are plain JSON, ids and times as strings. This
 * module imports no producer and no handler.
 */

/** The payload of a job that carries none (a scheduled sweep). */
export type NoPayload = Record<string, never>;

export interface DispatchJob {
  orgId: string;
}
export interface DialJob {
  callId: string;
}
/** One carrier report for calls that share it and its time (calls dialed together). */
export interface ReportJob {
  callIds: string[];
  report: CarrierReport;
  /** ISO time the carrier's state change happened (the events' `occurred_at`). */
  at: string;
}
export interface CampaignTickJob {
  campaignId: string;
}
/** A text recorded when its call ended, to hand to the carrier. */
export interface SendTextJob {
  messageId: string;
}
export interface ApplyStateJob {
  tenantId: string;
}
/** One attempt of a delivery now, whatever its status (support's retry through the API). */
export interface DeliverJob {
  deliveryId: string;
  /** The delivery's `created_at` (ISO): the partition it is in. */
  createdAt: string;
}
/** A delivery whose attempts are used up, as the queue dashboard lists it (src/webhooks/failed-delivery-board.ts). */
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
  maintenance: { 'purge-expired': NoPayload; 'history-partitions': NoPayload };
  calls: { dispatch: DispatchJob; dial: DialJob; report: ReportJob; sweep: NoPayload; 'campaign-tick': CampaignTickJob; 'send-text': SendTextJob };
  tenants: { 'apply-state': ApplyStateJob; sweep: NoPayload };
  usage: { rollup: NoPayload };
  webhooks: { deliver: DeliverJob; 'failed-delivery': FailedDeliveryJob; recover: RecoverJob };
}

export type QueueName = keyof Jobs;
export type JobName<Q extends QueueName> = keyof Jobs[Q] & string;
/** A job of queue `Q` named `N`, as its processor receives it. */
export type JobOf<Q extends QueueName, N extends JobName<Q>> = TypedJob<Jobs[Q], N>;
/** A typed producer of queue `Q`. */
export type JobQueue<Q extends QueueName> = Queue<Jobs[Q]>;

/** The job names of each queue, at run time (the boot check, the dashboard, the metrics). */
export const QUEUES: { readonly [Q in QueueName]: ReadonlyArray<JobName<Q>> } = {
  maintenance: ['purge-expired', 'history-partitions'],
  calls: ['dispatch', 'dial', 'report', 'sweep', 'campaign-tick', 'send-text'],
  tenants: ['apply-state', 'sweep'],
  usage: ['rollup'],
  webhooks: ['deliver', 'failed-delivery', 'recover'],
};

export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];

/** A producer of queue `name`, typed by the table. */
export const createQueue = <Q extends QueueName>(name: Q, connection: RedisClient): JobQueue<Q> => createBullQueue<Jobs[Q]>(name, connection);

/**
 * What a job of each name of queue `Q` does. Processors throw to have BullMQ retry (a permanent
 * failure throws BullMQ's `UnrecoverableError`, which is not retried); they never swallow errors.
 */
export type Processors<Q extends QueueName> = { [N in JobName<Q>]: (job: JobOf<Q, N>, token?: string) => Promise<unknown> };
