import type { EntityManager } from 'typeorm';
import { orgWithLimits } from '../calls/call-limits.js';
import { placeOutboundCall, type EndedCall, type QueuedCall } from '../calls/call-store.js';
import type { CallJobs } from '../calls/calls.jobs.js';
import type { CallEndHooks, CallEngine } from '../calls/engine.js';
import { db } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { withinCallingWindow } from './calling-hours.js';
import { Campaign } from './campaign.entity.js';

/** How often a running campaign outside its calling hours looks again. */
const OUTSIDE_HOURS_RECHECK_MS = 60_000;
const RETRY_ON = new Set(['no_answer', 'busy']);
const DEFAULT_SIMULATION = { answer: true, duration_seconds: 5, outcome: 'neutral' } as const;

/**
 * One step of a running campaign: within calling hours, dial the next due contacts, as many
 * as the organization's concurrency in force allows beside the campaign's calls already in flight.
 * The calls are placed as `POST /v1/calls` places them and go through the same engine (and
 * limits) as any other; the campaign ends when every contact is done.
 */
export async function tickCampaign(engine: CallEngine, campaignId: string): Promise<void> {
  const next = await db.transaction(async (em) => {
    const campaign = await em.findOne(Campaign, { where: { id: campaignId }, lock: { mode: 'pessimistic_write' } });
    if (!campaign || campaign.state !== 'running') return null;
    const { org, limits } = (await orgWithLimits(em, campaign.orgId))!;
    if (org.disabled) return null;
    const window = { start: campaign.callingHoursStart, end: campaign.callingHoursEnd, weekdays: campaign.weekdays };
    if (!withinCallingWindow(window, new Date(), org.timezone)) return { calls: [], orgId: org.id, recheckMs: OUTSIDE_HOURS_RECHECK_MS };

    const [{ calling }] = await em.query(`SELECT count(*)::int AS calling FROM campaign_contacts WHERE campaign_id = $1 AND state = 'calling'`, [campaign.id]);
    const capacity = Math.max(0, limits.maxConcurrentCalls - calling);
    const due: Array<{ contact_id: string }> = await em.query(
      `SELECT contact_id FROM campaign_contacts
        WHERE campaign_id = $1 AND state = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= now())
        ORDER BY position LIMIT $2`,
      [campaign.id, capacity],
    );
    const calls: QueuedCall[] = [];
    for (const contact of due) {
      const result = await placeOutboundCall(em, {
        orgId: org.id,
        agentId: campaign.agentId,
        contactId: contact.contact_id,
        campaignId: campaign.id,
        simulate: campaign.simulate ?? DEFAULT_SIMULATION,
      });
      if (!result.placed) {
        // The campaign's agent and contacts cannot be deleted while it exists: only money is missing.
        if (result.funded) throw new Error(`campaign ${campaign.id} could not call contact ${contact.contact_id}: ${JSON.stringify(result)}`);
        // Out of funds: the campaign pauses rather than failing contact after contact.
        logger.warn({ campaignId }, 'campaign paused: the paying balance is not above zero');
        await em.update(Campaign, { id: campaign.id }, { state: 'paused' });
        return { calls, orgId: org.id, recheckMs: null };
      }
      await em.query(
        `UPDATE campaign_contacts SET state = 'calling', attempts = attempts + 1, last_call_id = $3, next_attempt_at = NULL
          WHERE campaign_id = $1 AND contact_id = $2`,
        [campaign.id, contact.contact_id, result.call.id],
      );
      calls.push(result.call);
    }

    const [left] = await em.query(
      `SELECT count(*) FILTER (WHERE state = 'calling')::int AS calling,
              count(*) FILTER (WHERE state = 'pending')::int AS pending,
              extract(epoch FROM min(next_attempt_at) FILTER (WHERE state = 'pending') - now()) * 1000 AS next_due_ms
         FROM campaign_contacts WHERE campaign_id = $1`,
      [campaign.id],
    );
    if (left.calling === 0 && left.pending === 0) {
      await em.update(Campaign, { id: campaign.id }, { state: 'completed', completedAt: new Date() });
      return { calls, orgId: org.id, recheckMs: null };
    }
    // Woken by each call's end; a retry waiting for its time needs its own wake-up.
    const recheckMs = left.calling === 0 && left.next_due_ms !== null ? Math.max(0, Number(left.next_due_ms)) : null;
    return { calls, orgId: org.id, recheckMs };
  });
  if (!next) return;
  if (next.calls.length) await engine.submitOutbound(next.orgId, next.calls);
  if (next.recheckMs !== null) await engine.jobs.campaignTick(campaignId, next.recheckMs);
}

/** Records campaign calls' ends on their contacts (done, or due again for a retry), in the ending transaction. */
async function recordCampaignCallEnds(em: EntityManager, calls: EndedCall[]): Promise<void> {
  for (const call of calls) if (call.campaignId) await recordCampaignCallEnd(em, call, call.campaignId);
}

async function recordCampaignCallEnd(em: EntityManager, call: EndedCall, campaignId: string): Promise<void> {
  const [campaign] = await em.query(`SELECT retry_max, retry_delay_seconds FROM campaigns WHERE id = $1`, [campaignId]);
  if (!campaign) return;
  const retry = RETRY_ON.has(call.status);
  await em.query(
    `UPDATE campaign_contacts
        SET state = CASE WHEN $3 AND attempts <= $4 THEN 'pending' ELSE 'done' END,
            next_attempt_at = CASE WHEN $3 AND attempts <= $4 THEN now() + make_interval(secs => $5) ELSE NULL END
      WHERE campaign_id = $1 AND last_call_id = $2 AND state = 'calling'`,
    [campaignId, call.id, retry, campaign.retry_max, campaign.retry_delay_seconds],
  );
}

/** Campaign calls report their end to the campaign, which then dials on. */
export function campaignCallEndHooks(jobs: CallJobs): CallEndHooks {
  return {
    during: recordCampaignCallEnds,
    after: async (ended) => {
      const campaigns = new Set(ended.map((c) => c.campaignId).filter((id) => id !== null));
      for (const id of campaigns) await jobs.campaignTick(id);
    },
  };
}
