import type { Job } from 'bullmq';
import type { CampaignTickJob, DialJob, DispatchJob, ReportJob } from '../../src/calls/calls.jobs.js';
import type { CallsRuntime } from '../../src/calls/calls.runtime.js';
import { sweepCalls } from '../../src/calls/sweeper.js';
import { tickCampaign } from '../../src/campaigns/campaign-runner.js';
import type { Processors } from '../run-worker.js';

/** The `calls` queue: admission, dialing, carrier reports, the sweeper and campaign ticks. */
export function callsProcessors({ engine }: CallsRuntime): Processors<'calls'> {
  return {
    dispatch: (job: Job<DispatchJob>) => engine.dispatch(job.data.orgId),
    dial: (job: Job<DialJob>) => engine.dial([job.data.callId]),
    report: (job: Job<ReportJob>) => engine.applyReport(job.data.callIds, job.data.report, new Date(job.data.at)),
    sweep: () => sweepCalls(engine),
    'campaign-tick': (job: Job<CampaignTickJob>) => tickCampaign(engine, job.data.campaignId),
  };
}
