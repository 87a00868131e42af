import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { config } from './config.js';
import { lowerCpuPriority } from './lib/cpu-priority.js';
import { logger } from './lib/logger.js';
import { Reads } from './lib/reads.js';
import { ReplicaMonitor } from './lib/replica.js';
import { createRedis } from './lib/redis.js';
import { createRuntime, openDatabase } from './runtime.js';
import { onShutdown } from './lib/shutdown.js';
import { createAppServer } from './http/app-server.js';
import { runWebCluster } from './http/web-cluster.js';

async function main(): Promise<void> {
  lowerCpuPriority(config.intakeNice);
  const db = openDatabase();
  await db.initialize();
  const redis = createRedis('command');
  // With a standby, the lists, feed, usage and delivery history may read from it (docs/scaling.md#read-replica).
  const replica = config.replica && new ReplicaMonitor(db, config.replica.url, config.replica.maxLagMs);
  await replica?.start();
  const reads = new Reads(db, replica ? { monitor: replica, redis } : null);
  const runtime = createRuntime({ db, redis, reads });
  const { app, close } = createApp({ runtime });
  const server = createAppServer(app);
  server.keepAliveTimeout = 65_000;
  // Unheard, a taken port's 'error' crashed the process with a stack dump.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  logger.info({ port: (server.address() as AddressInfo).port }, 'Ringlane API listening');

  onShutdown('web', async () => {
    // Stop accepting, let requests in flight finish, then flush batched writes; close keep-alive
    // connections as they go idle.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const reaper = setInterval(() => server.closeIdleConnections(), 100);
    await closed;
    clearInterval(reaper);
    await close();
    await runtime.close();
    await replica?.stop();
    await db.destroy();
    redis.disconnect();
  });
}

// WEB_CONCURRENCY > 1: this process only runs the workers, each of which runs main().
if (config.webConcurrency > 1 && cluster.isPrimary) runWebCluster(config.webConcurrency);
else
  main().catch((err) => {
    logger.fatal({ err }, 'the API could not start');
    process.exit(1);
  });
