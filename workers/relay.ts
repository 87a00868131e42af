import pg from 'pg';
import { config } from '../src/config.js';
import { db } from '../src/lib/db.js';
import { logger } from '../src/lib/logger.js';
import { createQueue } from '../src/lib/queues.js';
import { createRedis } from '../src/lib/redis.js';
import { onShutdown } from '../src/lib/shutdown.js';
import { relayBatch } from '../src/webhooks/relay.js';
import { WebhookJobs } from '../src/webhooks/webhook.jobs.js';

/** How long the relay sleeps when nothing notifies it (a missed notification costs at most this). */
const POLL_MS = 1000;

/**
 * The `relay` process: moves committed call events to webhook deliveries. It wakes on the
 * database's NOTIFY for each batch of new events, and polls besides.
 */
async function main(): Promise<void> {
  await db.initialize();
  // Fails fast while Redis is away: events keep becoming deliveries, and the sweeper queues them later.
  const redis = createRedis('command');
  redis.on('error', (err) => logger.warn({ err: err.message }, 'relay: Redis unavailable'));
  const jobs = new WebhookJobs(createQueue('webhooks', redis), redis);
  const listener = new pg.Client({ connectionString: config.databaseUrl });
  let wake: (() => void) | null = null;
  let stopping = false;
  await listener.connect();
  listener.on('notification', () => wake?.());
  await listener.query('LISTEN call_events');

  const loop = (async () => {
    while (!stopping) {
      let relayed = 0;
      try {
        relayed = await relayBatch(db, jobs);
      } catch (err) {
        logger.error({ err }, 'relay batch failed; retrying');
      }
      if (relayed === 0 && !stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    }
  })();
  logger.info('relay started');

  onShutdown('relay', async () => {
    stopping = true;
    wake?.();
    await loop;
    await listener.end();
    await jobs.queue.close();
    await db.destroy();
    redis.disconnect();
  });
}

main().catch((err) => {
  logger.fatal({ err }, 'the relay could not start');
  process.exit(1);
});
