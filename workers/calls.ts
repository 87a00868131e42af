import { config } from '../src/config.js';
import { lowerCpuPriority } from '../src/lib/cpu-priority.js';
import { logger } from '../src/lib/logger.js';
import { callsProcessors } from './processors/calls.processor.js';
import { runWorker } from './run-worker.js';

/** The `calls` worker process: the call engine on the simulated carrier, campaigns, and texts' sends. */
lowerCpuPriority(config.intakeNice);

runWorker({
  queue: 'calls',
  processors: callsProcessors,
  concurrency: config.callsWorkerConcurrency,
  // A job of a killed worker is taken over by another after its lock lapses.
  options: { lockDuration: 10_000, stalledInterval: 5_000 },
  schedules: [{ id: 'sweep', every: 5_000 }],
}).catch((err) => {
  logger.fatal({ err }, 'the calls worker could not start');
  process.exit(1);
});
