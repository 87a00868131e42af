import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import { Router } from 'express';
import { collectProcessMetrics, renderMetrics } from '../lib/metrics.js';
import type { RedisClient } from '../lib/redis.js';

/** The BullMQ dashboard at `/admin/queues` and Prometheus `/metrics`, behind the operator token. */
export function queueDashboard(queues: Queue[]): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath('/admin/queues');
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: adapter, options: { uiConfig: { boardTitle: 'Ringlane queues' } } });
  // bull-board types its router as any; it is Express's.
  return adapter.getRouter() as Router;
}

export function metricsRoute(redis: RedisClient, queues: Map<string, Queue>): Router {
  collectProcessMetrics();
  const router = Router();
  router.get('/', async (_req, res) => {
    const text = await renderMetrics(redis, [...queues.keys()], (name) =>
      queues.get(name)!.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized'),
    );
    res.type('text/plain; version=0.0.4').send(text);
  });
  return router;
}
