import type { Redis } from 'ioredis';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { QUEUES } from './queues.js';
import { redisKey } from './redis.js';

// Service-wide metrics live in Redis, so that every worker process adds to the same counters
// and the API's `/metrics` shows the whole service; process metrics come from prom-client.

const ATTEMPTS = () => redisKey('metrics', 'webhook_attempts');
const LATENCY = () => redisKey('metrics', 'webhook_latency');
export const LATENCY_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];

export const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry, prefix: 'ringlane_' });

/** Counts a webhook attempt by result (succeeded, failed_status, timeout, connection_error, refused). */
export function countWebhookAttempt(redis: Redis, result: string): Promise<unknown> {
  return redis.hincrby(ATTEMPTS(), result, 1);
}

/** Observes the time from a call event's commit to its first accepted delivery. */
export function observeWebhookLatency(redis: Redis, seconds: number): Promise<unknown> {
  const bucket = LATENCY_BUCKETS.find((b) => seconds <= b) ?? '+Inf';
  return redis.multi().hincrby(LATENCY(), `le_${bucket}`, 1).hincrbyfloat(LATENCY(), 'sum', seconds).hincrby(LATENCY(), 'count', 1).exec();
}

/** The Prometheus text of the whole service: queue depths, webhook attempts and latency, and this process. */
export async function renderMetrics(redis: Redis, jobCounts: (queue: string) => Promise<Record<string, number>>): Promise<string> {
  const lines: string[] = [];
  lines.push('# HELP ringlane_queue_jobs Jobs in each BullMQ queue by state.', '# TYPE ringlane_queue_jobs gauge');
  for (const queue of Object.keys(QUEUES)) {
    const counts = await jobCounts(queue);
    for (const [state, n] of Object.entries(counts)) lines.push(`ringlane_queue_jobs{queue="${queue}",state="${state}"} ${n}`);
  }
  const attempts = await redis.hgetall(ATTEMPTS());
  lines.push('# HELP ringlane_webhook_attempts_total Webhook delivery attempts by result.', '# TYPE ringlane_webhook_attempts_total counter');
  for (const [result, n] of Object.entries(attempts)) lines.push(`ringlane_webhook_attempts_total{result="${result}"} ${n}`);
  const latency = await redis.hgetall(LATENCY());
  lines.push('# HELP ringlane_webhook_end_to_end_seconds From the call event committed to its first accepted delivery.', '# TYPE ringlane_webhook_end_to_end_seconds histogram');
  let cumulative = 0;
  for (const bucket of [...LATENCY_BUCKETS, '+Inf']) {
    cumulative += Number(latency[`le_${bucket}`] ?? 0);
    lines.push(`ringlane_webhook_end_to_end_seconds_bucket{le="${bucket}"} ${cumulative}`);
  }
  lines.push(`ringlane_webhook_end_to_end_seconds_sum ${Number(latency.sum ?? 0)}`, `ringlane_webhook_end_to_end_seconds_count ${Number(latency.count ?? 0)}`);
  return `${lines.join('\n')}\n${await processRegistry.metrics()}`;
}
