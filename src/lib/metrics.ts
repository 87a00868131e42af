import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, Registry, collectDefaultMetrics } from 'prom-client';
import { logger } from './logger.js';
import { redisKey, type RedisClient } from './redis.js';

// Service-wide metrics live in Redis so `/metrics` shows every process's counters.

// One hash tag for both: a flush writes them in one transaction, which a cluster allows in one slot only.
const ATTEMPTS = () => redisKey('metrics', 'webhooks', 'attempts');
const LATENCY = () => redisKey('metrics', 'webhooks', 'latency');
export const LATENCY_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];

export const processRegistry = new Registry();
let collectingProcessMetrics = false;

/**
 * Node's process metrics (CPU, memory, handles, event-loop lag) in `processRegistry`, started by
 * the process that serves `/metrics` (the web, when its app is built): a worker's would be sampled
 * for no reader, and each sampling wakes an idle process (about 0.2 ms of CPU per wake-up on a
 * small virtual machine). The event-loop delay is sampled every second, not every 10 ms
 * (prom-client's default, at which the sampling timer alone was most of an idle platform's CPU): a
 * loop blocked across a sampling tick shows as lag; one blocked between two ticks does not.
 */
export function collectProcessMetrics(): void {
  if (collectingProcessMetrics) return;
  collectingProcessMetrics = true;
  collectDefaultMetrics({ register: processRegistry, prefix: 'ringlane_', eventLoopMonitoringPrecision: 1000 });
}

// With WEB_CONCURRENCY > 1 a dyno's API processes are node:cluster workers sharing one port, and a
// scrape reaches any one of them: `/metrics` shows them all, aggregated by the primary, which asks
// each worker through prom-client's AggregatorRegistry (counters and memory summed, event-loop lag
// averaged, start time left out).
const WORKERS_METRICS_REQUEST = 'ringlane:workers-metrics-request';
const WORKERS_METRICS_REPLY = 'ringlane:workers-metrics-reply';
interface WorkersMetricsReply {
  type: typeof WORKERS_METRICS_REPLY;
  id: string;
  text?: string;
  error?: string;
}
const isMessage = <T extends { type: string }>(message: unknown, type: T['type']): message is T =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === type;

if (cluster.isWorker) {
  AggregatorRegistry.setRegistries([processRegistry]);
  // Its constructor is what makes a worker answer the primary's requests for its metrics.
  new AggregatorRegistry();
}

/** In a web cluster's primary: answers a worker's `/metrics` with every worker's process metrics, aggregated. */
export function serveWorkersMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<{ type: typeof WORKERS_METRICS_REQUEST; id: string }>(message, WORKERS_METRICS_REQUEST)) return;
    const reply = (fields: Pick<WorkersMetricsReply, 'text' | 'error'>) => {
      // With a callback a worker gone meanwhile is no 'error' event, which would end the primary.
      if (worker.isConnected()) worker.send({ type: WORKERS_METRICS_REPLY, id: message.id, ...fields }, () => undefined);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (err: Error) => reply({ error: err.message }),
    );
  });
}

/** In a web cluster's worker: every worker's process metrics, from the primary (prom-client gives up on a silent worker after 5 s). */
function workersMetrics(timeoutMs = 6000): Promise<string> {
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const settle = (message: unknown) => {
      if (!isMessage<WorkersMetricsReply>(message, WORKERS_METRICS_REPLY) || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', settle);
      if (message.text !== undefined) resolve(message.text);
      else reject(new Error(message.error ?? 'no metrics'));
    };
    const timer = setTimeout(() => {
      process.off('message', settle);
      reject(new Error(`the primary did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    process.on('message', settle);
    process.send!({ type: WORKERS_METRICS_REQUEST, id });
  });
}

/** This process's metrics; in a web cluster's worker, every worker's. Left out (and logged) when the primary cannot give them. */
async function processMetrics(): Promise<string> {
  if (!cluster.isWorker) return processRegistry.metrics();
  try {
    return await workersMetrics();
  } catch (err) {
    logger.warn({ err }, "the web workers' process metrics are unavailable; /metrics shows the service-wide ones only");
    return '';
  }
}

/** Added to Redis once a second in one round trip; a killed process loses its last second (dashboards, not billing). */
export class WebhookMetrics {
  private attempts = new Map<string, number>();
  private latency = new Map<string, number>();
  private latencySum = 0;
  private latencyCount = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly flushMs = 1000,
  ) {}

  /** Counts an attempt by result: succeeded, failed_status, timeout, connection_error, refused. */
  countAttempt(result: string): void {
    this.attempts.set(result, (this.attempts.get(result) ?? 0) + 1);
    this.schedule();
  }

  observeLatency(seconds: number): void {
    const bucket = `le_${LATENCY_BUCKETS.find((b) => seconds <= b) ?? '+Inf'}`;
    this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + 1);
    this.latencySum += seconds;
    this.latencyCount++;
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Kept for the next flush if Redis is away. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.attempts.size === 0 && this.latencyCount === 0) return;
    const [attempts, latency, sum, count] = [this.attempts, this.latency, this.latencySum, this.latencyCount];
    this.attempts = new Map();
    this.latency = new Map();
    this.latencySum = 0;
    this.latencyCount = 0;
    const multi = this.redis.multi();
    for (const [result, n] of attempts) multi.hincrby(ATTEMPTS(), result, n);
    for (const [bucket, n] of latency) multi.hincrby(LATENCY(), bucket, n);
    if (count > 0) multi.hincrbyfloat(LATENCY(), 'sum', sum).hincrby(LATENCY(), 'count', count);
    try {
      await multi.exec();
    } catch {
      for (const [result, n] of attempts) this.attempts.set(result, (this.attempts.get(result) ?? 0) + n);
      for (const [bucket, n] of latency) this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + n);
      this.latencySum += sum;
      this.latencyCount += count;
      this.schedule();
    }
  }
}

/** Prometheus text for the whole service: queue depths, webhook attempts and latency, and this process (or this dyno's web workers). */
export async function renderMetrics(
  redis: RedisClient,
  queues: readonly string[],
  jobCounts: (queue: string) => Promise<Record<string, number>>,
): Promise<string> {
  const lines: string[] = [];
  lines.push('# HELP ringlane_queue_jobs Jobs in each BullMQ queue by state.', '# TYPE ringlane_queue_jobs gauge');
  for (const queue of queues) {
    const counts = await jobCounts(queue);
    for (const [state, n] of Object.entries(counts)) lines.push(`ringlane_queue_jobs{queue="${queue}",state="${state}"} ${n}`);
  }
  const attempts = await redis.hgetall(ATTEMPTS());
  lines.push('# HELP ringlane_webhook_attempts_total Webhook delivery attempts by result.', '# TYPE ringlane_webhook_attempts_total counter');
  for (const [result, n] of Object.entries(attempts)) lines.push(`ringlane_webhook_attempts_total{result="${result}"} ${n}`);
  const latency = await redis.hgetall(LATENCY());
  lines.push(
    '# HELP ringlane_webhook_end_to_end_seconds From the call event committed to its first accepted delivery.',
    '# TYPE ringlane_webhook_end_to_end_seconds histogram',
  );
  let cumulative = 0;
  for (const bucket of [...LATENCY_BUCKETS, '+Inf']) {
    cumulative += Number(latency[`le_${bucket}`] ?? 0);
    lines.push(`ringlane_webhook_end_to_end_seconds_bucket{le="${bucket}"} ${cumulative}`);
  }
  lines.push(`ringlane_webhook_end_to_end_seconds_sum ${Number(latency.sum ?? 0)}`, `ringlane_webhook_end_to_end_seconds_count ${Number(latency.count ?? 0)}`);
  return `${lines.join('\n')}\n${await processMetrics()}`;
}
