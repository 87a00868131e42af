import type { Express } from 'express';
import type { DataSource } from 'typeorm';
import { pingDatabase } from '../lib/db.js';
import type { Reads } from '../lib/reads.js';
import type { RedisClient } from '../lib/redis.js';

const withTimeout = <T>(work: Promise<T>, ms: number): Promise<T> =>
  Promise.race([work, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

async function check(work: () => Promise<unknown>): Promise<string> {
  try {
    await withTimeout(work(), 2000);
    return 'ok';
  } catch (err) {
    return `unavailable: ${(err as Error).message}`;
  }
}

/**
 * `GET /healthz`: the process is up. `GET /readyz`: Postgres and Redis answer; it also says whether
 * the read replica serves (`checks.replica`), which never makes the process unready: the primary
 * serves its reads meanwhile. On `app` itself: a router of their own would be entered by every request.
 */
export function healthRoutes(app: Pick<Express, 'get'>, dataSource: DataSource, redis: RedisClient, reads: Pick<Reads, 'replicaState'>): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const [postgres, redisState] = await Promise.all([check(() => pingDatabase(dataSource)), check(() => redis.ping())]);
    const ready = postgres === 'ok' && redisState === 'ok';
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks: { postgres, redis: redisState, replica: reads.replicaState } });
  });
}
