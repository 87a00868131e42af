import type { DataSource, EntityManager } from 'typeorm';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { Campaign, type CampaignState } from './campaign.entity.js';
import { Reads } from '../lib/reads.js';

const contactCount = (state?: string) =>
  column<number>(`(SELECT count(*)::int FROM campaign_contacts cc WHERE cc.campaign_id = k.id${state ? ` AND cc.state = '${state}'` : ''})`);

/** A campaign as the API shows it, with its contacts counted by state, over alias `k`. */
const campaignRow = rowShape('campaigns', {
  id: column<string>(),
  name: column<string>(),
  agent_id: column<string>(),
  state: column<CampaignState>(),
  calling_hours_start: column<string | null>(),
  calling_hours_end: column<string | null>(),
  weekdays: column<number[] | null>(),
  retry_max: column<number>(),
  retry_delay_seconds: column<number>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
  completed_at: column<Date | null>(),
  total: contactCount(),
  pending: contactCount('pending'),
  calling: contactCount('calling'),
  done: contactCount('done'),
  skipped: contactCount('skipped'),
});
export type CampaignRow = RowOf<typeof campaignRow.columns>;

export interface CampaignProgress {
  calling: number;
  pending: number;
  /** Milliseconds until the earliest pending retry is due (negative: overdue); null when none waits. */
  nextDueMs: number | null;
}

/** Campaigns and their contacts (`campaign_contacts`). */
export class CampaignsRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  list<T>(orgId: string, query: PageParams & { state?: string }, present: (row: CampaignRow) => T): Promise<Page<T>> {
    const filters = where('k.org_id = ?', orgId).equal('k.state', query.state);
    return this.reads.run((sql) => listPage(sql, { select: campaignRow.select('k'), from: campaignRow.from('k'), where: filters }, query, present));
  }

  async find(em: Sql, orgId: string, id: string): Promise<CampaignRow | null> {
    const [row] = (await em.query(`SELECT ${campaignRow.select('k')} FROM ${campaignRow.from('k')} WHERE k.id = $1 AND k.org_id = $2`, [
      id,
      orgId,
    ])) as CampaignRow[];
    return row ?? null;
  }

  /** Contacts in the order given: the order they are dialed in. */
  async insert(em: EntityManager, campaign: Partial<Campaign>, contactIds: string[]): Promise<void> {
    await em.insert(Campaign, campaign);
    await em.query(
      `INSERT INTO campaign_contacts (campaign_id, contact_id, position) SELECT $1, id, ord FROM unnest($2::varchar[]) WITH ORDINALITY AS t(id, ord)`,
      [campaign.id, contactIds],
    );
  }

  /** Only if it is `orgId`'s when given; locked until the transaction ends. */
  lock(em: EntityManager, id: string, orgId?: string): Promise<Campaign | null> {
    return em.findOne(Campaign, { where: orgId === undefined ? { id } : { id, orgId }, lock: { mode: 'pessimistic_write' } });
  }

  async save(em: EntityManager, campaign: Campaign): Promise<void> {
    await em.save(campaign);
  }

  async setState(em: EntityManager, id: string, state: 'paused' | 'completed'): Promise<void> {
    await em.update(Campaign, { id }, state === 'completed' ? { state, completedAt: new Date() } : { state });
  }

  async callingCount(em: EntityManager, campaignId: string): Promise<number> {
    const [{ calling }] = await em.query<Array<{ calling: number }>>(
      `SELECT count(*)::int AS calling FROM campaign_contacts WHERE campaign_id = $1 AND state = 'calling'`,
      [campaignId],
    );
    return calling;
  }

  async dueContacts(em: EntityManager, campaignId: string, limit: number, after = 0): Promise<Array<{ contactId: string; position: number }>> {
    const due: Array<{ contact_id: string; position: number }> = await em.query(
      `SELECT contact_id, position FROM campaign_contacts
        WHERE campaign_id = $1 AND state = 'pending' AND (next_attempt_at IS NULL OR next_attempt_at <= now()) AND position > $3
        ORDER BY position LIMIT $2`,
      [campaignId, limit, after],
    );
    return due.map((d) => ({ contactId: d.contact_id, position: d.position }));
  }

  async markSkipped(em: EntityManager, campaignId: string, contactIds: string[]): Promise<void> {
    if (contactIds.length === 0) return;
    await em.query(
      `UPDATE campaign_contacts SET state = 'skipped', next_attempt_at = NULL WHERE campaign_id = $1 AND contact_id = ANY($2) AND state = 'pending'`,
      [campaignId, contactIds],
    );
  }

  async markCalling(em: EntityManager, campaignId: string, contactId: string, callId: string): Promise<void> {
    await em.query(
      `UPDATE campaign_contacts SET state = 'calling', attempts = attempts + 1, last_call_id = $3, next_attempt_at = NULL
        WHERE campaign_id = $1 AND contact_id = $2`,
      [campaignId, contactId, callId],
    );
  }

  async progress(em: EntityManager, campaignId: string): Promise<CampaignProgress> {
    // next_due_ms is numeric, which node-postgres reads as a string.
    const [left] = await em.query<Array<{ calling: number; pending: number; next_due_ms: string | null }>>(
      `SELECT count(*) FILTER (WHERE state = 'calling')::int AS calling,
              count(*) FILTER (WHERE state = 'pending')::int AS pending,
              extract(epoch FROM min(next_attempt_at) FILTER (WHERE state = 'pending') - now()) * 1000 AS next_due_ms
         FROM campaign_contacts WHERE campaign_id = $1`,
      [campaignId],
    );
    return { calling: left.calling, pending: left.pending, nextDueMs: left.next_due_ms === null ? null : Number(left.next_due_ms) };
  }

  /**
   * `retry`: due again after the retry delay while attempts are left, else done; `done`; `undialed`:
   * the call was never dialed, so the contact is due again at once and the attempt is not counted.
   */
  async recordCallEnd(em: EntityManager, campaignId: string, callId: string, next: 'retry' | 'done' | 'undialed'): Promise<void> {
    if (next === 'undialed') {
      await em.query(
        `UPDATE campaign_contacts SET state = 'pending', attempts = attempts - 1, next_attempt_at = NULL
          WHERE campaign_id = $1 AND last_call_id = $2 AND state = 'calling'`,
        [campaignId, callId],
      );
      return;
    }
    const [campaign] = await em.query<Array<{ retry_max: number; retry_delay_seconds: number }>>(
      `SELECT retry_max, retry_delay_seconds FROM campaigns WHERE id = $1`,
      [campaignId],
    );
    if (!campaign) return;
    await em.query(
      `UPDATE campaign_contacts
          SET state = CASE WHEN $3 AND attempts <= $4 THEN 'pending' ELSE 'done' END,
              next_attempt_at = CASE WHEN $3 AND attempts <= $4 THEN now() + make_interval(secs => $5) ELSE NULL END
        WHERE campaign_id = $1 AND last_call_id = $2 AND state = 'calling'`,
      [campaignId, callId, next === 'retry', campaign.retry_max, campaign.retry_delay_seconds],
    );
  }

  async runningIds(): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM campaigns WHERE state = 'running'`);
    return rows.map((r) => r.id);
  }

  async pauseRunning(orgId: string): Promise<number> {
    const [, paused] = await this.db.query<[unknown[], number]>(
      `UPDATE campaigns SET state = 'paused', updated_at = now() WHERE org_id = $1 AND state = 'running'`,
      [orgId],
    );
    return paused;
  }

  async orgsWithRunning(orgIds: string[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT o.id FROM unnest($1::varchar[]) AS o(id) WHERE EXISTS (SELECT 1 FROM campaigns k WHERE k.org_id = o.id AND k.state = 'running')`,
      [orgIds],
    );
    return rows.map((r) => r.id);
  }
}
