import { sweepCalls } from '../../src/calls/sweeper.js';
import { tickCampaign } from '../../src/campaigns/campaign-runner.js';
import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../run-worker.js';

/** The `calls` queue: admission, dialing, carrier reports, the sweeper and campaign ticks. */
export function callsProcessors({ engine }: Runtime): Processors<'calls'> {
  return {
    dispatch: (job) => engine.dispatch(job.data.orgId),
    dial: (job) => engine.dial([job.data.callId]),
    report: (job) => engine.applyReport(job.data.callIds, job.data.report, new Date(job.data.at)),
    sweep: () => sweepCalls(engine),
    'campaign-tick': (job) => tickCampaign(engine, job.data.campaignId),
  };
}
