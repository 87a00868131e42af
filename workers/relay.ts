import { createRelayLoop } from '../src/runtime.js';
import { runWorker } from './run-worker.js';

/** The `relay` process: outbox to webhook deliveries; needs no Redis. */
runWorker({ name: 'relay', setup: createRelayLoop });
