import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { execResults, redisKey, type RedisClient } from '../lib/redis.js';
import type { ScheduledReport } from '../carrier/carrier.js';
import type { JobQueue, ReportJob } from '../jobs.js';

const sendTextJobId = (messageId: string) => `text-${messageId}`;

/** A dispatch already requested and not yet started covers any further request for 30 s. */
const DISPATCH_PENDING_SECONDS = 30;
/** The organizations whose dispatch was requested, and the mark of a dispatch job queued and not yet started. */
const REQUESTED = () => redisKey('calls', 'dispatch', 'requested');
const PENDING = () => redisKey('calls', 'dispatch', 'pending');

/**
 * Dial and report jobs have ids fixed by their calls, so the sweeper's redial of a call whose
 * reports are overdue adds nothing while they are queued or running. A failed one, kept, would be
 * in the way for good (BullMQ adds nothing under the id of a job it keeps): Postgres away for
 * longer than a job's attempts last (about 15 s, less than a managed database's failover takes),
 * and its calls never ended. Removed when it fails (the worker logs the failure), it is added
 * again by the next sweep.
 */
const REDRIVEN_BY_THE_SWEEPER: JobsOptions = { removeOnFail: true };

/** Payloads are ids and plain JSON only. */
export class CallJobs {
  constructor(
    readonly queue: JobQueue<'calls'>,
    private readonly redis: RedisClient,
  ) {}

  /**
   * Requests a dispatch of these organizations' waiting calls. Requests collapse: the organizations
   * join one set, and a `dispatch` job is added only when none is pending (requested and not yet
   * started), so one dispatch serves every organization whose calls came meanwhile. Two commands
   * in this order on one connection (their keys share the tag `dispatch`), not a transaction: a
   * take between them can only make the job added here find nothing, never leave an organization
   * without a dispatch; and a transaction's pipeline cost the API process more than both commands.
   */
  async dispatch(orgIds: string[]): Promise<void> {
    if (orgIds.length === 0) return;
    const [, pending] = await Promise.all([this.redis.sadd(REQUESTED(), ...orgIds), this.redis.set(PENDING(), '1', 'EX', DISPATCH_PENDING_SECONDS, 'NX')]);
    if (pending === 'OK') await this.queue.add('dispatch', {});
  }

  /** A dispatch of one organization's calls later (its starts in the hour used up until then). */
  async dispatchLater(orgId: string, delayMs: number): Promise<void> {
    await this.queue.add('dispatch', { orgId }, { delay: Math.max(0, delayMs) });
  }

  /**
   * Takes up to `max` of the organizations whose dispatch was requested, and clears the pending
   * mark in the same transaction: a request made from now on queues another dispatch, one made
   * before is in what this takes (or in what is left for the next take).
   */
  async takeRequested(max: number): Promise<string[]> {
    const [, taken] = execResults(await this.redis.multi().del(PENDING()).spop(REQUESTED(), max).exec());
    return taken as string[];
  }

  async dial(callId: string): Promise<void> {
    await this.queue.add('dial', { callId }, { ...REDRIVEN_BY_THE_SWEEPER, jobId: `dial-${callId}` });
  }

  /** One job per report and time, shared by calls; ids fixed by calls, report and time, so a replayed dial adds nothing. */
  async reports(scheduled: Array<{ callId: string } & ScheduledReport>): Promise<void> {
    const groups = new Map<string, ReportJob>();
    for (const { callId, report, at } of scheduled) {
      const key = `${JSON.stringify(report)}@${at.toISOString()}`;
      const group = groups.get(key) ?? { callIds: [], report, at: at.toISOString() };
      group.callIds.push(callId);
      groups.set(key, group);
    }
    const now = Date.now();
    await this.queue.addBulk(
      [...groups.entries()].map(([key, data]) => ({
        name: 'report',
        data,
        opts: {
          ...REDRIVEN_BY_THE_SWEEPER,
          jobId: `report-${createHash('sha256')
            .update(`${key}|${data.callIds.join(',')}`)
            .digest('hex')
            .slice(0, 32)}`,
          delay: Math.max(0, new Date(data.at).getTime() - now),
        },
      })),
    );
  }

  async campaignTick(campaignId: string, delayMs = 0): Promise<void> {
    await this.queue.add('campaign-tick', { campaignId }, { delay: Math.max(0, delayMs) });
  }

  /** One job each, `text-<message id>`: adding one whose job is still queued, running or failed adds nothing. */
  async sendTexts(messageIds: string[]): Promise<void> {
    if (messageIds.length === 0) return;
    await this.queue.addBulk(messageIds.map((messageId) => ({ name: 'send-text', data: { messageId }, opts: { jobId: sendTextJobId(messageId) } })));
  }

  /** Resends unsent texts whose job is gone (lost with Redis, or never added); returns how many. */
  async resendLostTexts(messageIds: string[]): Promise<number> {
    const jobs = await Promise.all(messageIds.map((id) => this.queue.queue.getJob(sendTextJobId(id))));
    const lost = messageIds.filter((_, i) => !jobs[i]);
    await this.sendTexts(lost);
    return lost.length;
  }
}
