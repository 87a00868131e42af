import { config } from '../src/config.js';
import { callsProcessors } from './processors/calls.processor.js';
import { runWorker } from './run-worker.js';

/** The `calls` worker process. */
runWorker({
  queue: {
    name: 'calls',
    concurrency: config.callsWorkerConcurrency,
    // A job of a killed worker is taken over by another after its lock lapses.
    options: { lockDuration: 10_000, stalledInterval: 5_000 },
    schedules: [{ id: 'sweep', every: 5_000 }],
  },
  nice: config.intakeNice,
  setup: (runtime) => ({ processors: callsProcessors(runtime) }),
});
