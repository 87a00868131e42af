import { createQueue } from '../lib/queues.js';
import { CallLimits } from './call-limits.js';
import { CallJobs } from './calls.jobs.js';
import { CallsService } from './calls.service.js';
import { CallEngine } from './engine.js';
import type { RedisClient } from '../lib/redis.js';

/** The engine and its producers over one Redis connection, for the API and the workers. */
export function createCallsRuntime(redis: RedisClient) {
  const queue = createQueue('calls', redis);
  const engine = new CallEngine(new CallLimits(redis), new CallJobs(queue, redis));
  return { engine, calls: new CallsService(engine), close: () => queue.close() };
}

export type CallsRuntime = ReturnType<typeof createCallsRuntime>;
