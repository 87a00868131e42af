import type { Queue } from 'bullmq';
import type { CarrierReport, ScheduledReport } from './carrier.js';

export interface DispatchJob {
  orgId: string;
}
export interface DialJob {
  callId: string;
}
export interface ReportJob {
  callId: string;
  report: CarrierReport;
  /** ISO time the carrier's state change happened (the event's `occurred_at`). */
  at: string;
}
export interface CampaignTickJob {
  campaignId: string;
}

/** Typed producers of the `calls` queue. Payloads are ids and plain JSON only. */
export class CallJobs {
  constructor(readonly queue: Queue) {}

  /** Admit an organization's waiting calls (now, or after `delayMs`). */
  async dispatch(orgId: string, delayMs = 0): Promise<void> {
    await this.queue.add('dispatch', { orgId } satisfies DispatchJob, { delay: Math.max(0, delayMs) });
  }

  /** Dial a call that needs no admission (inbound). */
  async dial(callId: string): Promise<void> {
    await this.queue.add('dial', { callId } satisfies DialJob, { jobId: `dial-${callId}` });
  }

  /**
   * Schedules the carrier's reports of a call, each at its time. The job ids are fixed per
   * call and report, so scheduling twice (a replayed dial) adds nothing.
   */
  async reports(callId: string, scheduled: ScheduledReport[]): Promise<void> {
    const now = Date.now();
    await this.queue.addBulk(
      scheduled.map(({ report, at }) => ({
        name: 'report',
        data: { callId, report, at: at.toISOString() } satisfies ReportJob,
        opts: { jobId: `report-${callId}-${report.kind}`, delay: Math.max(0, at.getTime() - now) },
      })),
    );
  }

  async campaignTick(campaignId: string, delayMs = 0): Promise<void> {
    await this.queue.add('campaign-tick', { campaignId } satisfies CampaignTickJob, { delay: Math.max(0, delayMs) });
  }
}
