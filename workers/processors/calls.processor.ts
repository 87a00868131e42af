import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

/** The `calls` queue: admission, dialing, carrier reports, sweeps, campaign ticks, texts. */
export function callsProcessors({ engine, services }: Runtime): Processors<'calls'> {
  return {
    dispatch: (job) => engine.dispatch(job.data.orgId),
    dial: (job) => engine.dial([job.data.callId]),
    report: (job) => engine.applyReport(job.data.callIds, job.data.report, new Date(job.data.at)),
    sweep: () => services.callSweeper.sweep(),
    'campaign-tick': (job) => services.campaignRunner.tick(job.data.campaignId),
    'send-text': (job) => services.texts.send(job.data.messageId),
  };
}
