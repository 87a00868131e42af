import { createRelay } from '../src/runtime.js';
import { RelayLoop } from '../src/webhooks/relay.js';
import { runWorker } from './run-worker.js';

/** The `relay` process: outbox to webhook deliveries; needs no Redis. */
runWorker({ name: 'relay', setup: (db) => new RelayLoop(createRelay(db)) });
