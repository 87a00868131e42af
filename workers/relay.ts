import { config } from '../src/config.js';
import { applicationName } from '../src/lib/db.js';
import { logger } from '../src/lib/logger.js';
import { listen, type Listener } from '../src/lib/pg-listen.js';
import { onShutdown } from '../src/lib/shutdown.js';
import { createRelay, openDatabase } from '../src/runtime.js';
import { RELAY_BATCH } from '../src/webhooks/relay.js';

/** How long the relay sleeps when nothing notifies it (a missed notification costs at most this). */
const POLL_MS = 1000;
/**
 * After a partial batch, the relay waits this long before the next: events commit one status
 * change at a time, and relaying each trickle at once would cost a transaction (and a wake-up
 * of every webhooks worker) per few events. Gathering them costs this much latency.
 */
const GATHER_MS = 20;

/**
 * The `relay` process: moves committed call events to webhook deliveries. It wakes on the
 * database's NOTIFY for each batch of new events, and polls besides, so it relays while its
 * LISTEN connection is down and reconnecting too. It needs no Redis.
 */
async function main(): Promise<void> {
  const db = openDatabase();
  let stopping = false;
  let wake: (() => void) | null = null;
  let loop: Promise<void> = Promise.resolve();
  let listener: Listener | null = null;
  // Registered before anything else can take time, so an early SIGTERM still closes cleanly.
  onShutdown('relay', async () => {
    stopping = true;
    wake?.();
    await loop;
    await listener?.close();
    if (db.isInitialized) await db.destroy();
  });

  await db.initialize();
  const relay = createRelay(db);
  // Events committed while the LISTEN connection was away notified no one: look at once.
  listener = await listen(config.databaseUrl, 'call_events', () => wake?.(), { onReconnect: () => wake?.(), applicationName });
  if (stopping) return;

  loop = (async () => {
    while (!stopping) {
      let relayed = 0;
      try {
        relayed = await relay.batch();
      } catch (err) {
        logger.error({ err }, 'relay batch failed; retrying');
      }
      if (relayed > 0 && relayed < RELAY_BATCH && !stopping) await new Promise((r) => setTimeout(r, GATHER_MS));
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
}

main().catch((err) => {
  logger.fatal({ err }, 'the relay could not start');
  process.exit(1);
});
