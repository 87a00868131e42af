import type { CampaignsRepository } from '../campaigns/campaigns.repository.js';
import { logger } from '../lib/logger.js';
import type { MessagesRepository } from '../messaging/messages.repository.js';
import type { CallsRepository } from './calls.repository.js';
import type { CallEngine } from './engine.js';

/** How long a step may lag before the sweeper assumes its job was lost. */
const GRACE_SECONDS = 10;
const SWEEP_BATCH = 5000;

/**
 * Postgres is the truth; Redis can lose a job or key (a crash between commit and enqueue, a restart).
 * Every few seconds this re-drives what the database says is unfinished; each step is idempotent.
 */
export class CallSweeper {
  constructor(
    private readonly engine: CallEngine,
    private readonly calls: CallsRepository,
    private readonly campaigns: CampaignsRepository,
    private readonly messages: MessagesRepository,
  ) {}

  async sweep(): Promise<{ requeued: number; redialed: number; released: number; texts: number }> {
    const { engine } = this;
    // 1. Slots no call uses: those of ended calls (a crash between the end and the release), and of
    //    calls admitted more than the grace period ago and still undialed: their dial failed (the
    //    connection to Postgres lost, as in a failover) or their worker died between admission and
    //    dial, and nothing else gives their slots back (or their rows are gone, with a primary
    //    failed over to a standby that was behind). Freed first: such a call leaves the waiting
    //    set too, and step 2 queues it again; left holding, they kept an organization's slots full
    //    and its calls queued for good.
    let released = 0;
    for (const orgId of await engine.limits.orgsWithActiveCalls()) {
      const holding = await engine.limits.activeCalls(orgId);
      if (holding.length === 0) continue;
      const unused = await this.calls.unusedSlotsAmong(holding, await engine.limits.admittedBefore(orgId, GRACE_SECONDS * 1000));
      await engine.limits.release(orgId, unused);
      released += unused.length;
    }

    // 2. Committed as queued, never dialed.
    const waiting = await this.calls.undialedOutbound(GRACE_SECONDS, SWEEP_BATCH);
    const byOrg = new Map<string, Array<{ id: string; createdAt: Date }>>();
    for (const row of waiting) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), { id: row.id, createdAt: row.created_at }]);
    for (const [orgId, calls] of byOrg) await engine.submitOutbound(orgId, calls);

    // 3. Inbound calls never dialed, and dialed calls with overdue reports: dialing again reschedules
    //    the same reports under the same job ids.
    const stalled = await this.calls.stalled(GRACE_SECONDS, SWEEP_BATCH);
    await engine.dial(stalled);

    // A lost wake-up is made up.
    await engine.jobs.dispatch(await engine.limits.orgsWithWaitingCalls());

    // 4. A tick lost between a call's end and its follow-up.
    for (const id of await this.campaigns.runningIds()) await engine.jobs.campaignTick(id);

    // 5. Unsent texts whose send job is gone.
    const texts = await engine.jobs.resendLostTexts(await this.messages.unsentIds(GRACE_SECONDS, SWEEP_BATCH));

    const result = { requeued: waiting.length, redialed: stalled.length, released, texts };
    if (result.requeued || result.redialed || result.released || result.texts) logger.info(result, 'call sweeper re-drove unfinished work');
    return result;
  }
}
