import type { DataSource } from 'typeorm';
import { TERMINAL_SQL } from '../calls/call.entity.js';
import type { TenantActivity } from './tenant-effects.js';

/**
 * TODO(merge): the campaigns' and calls' own SQL, which a disabled tenant's effects need, until
 * their repositories (A) offer it: pausing an organization's running campaigns, and the calls
 * not yet ended (the terminal statuses are the calls domain's rule). Then the runtime gives
 * `TenantEffects` their methods and this file goes.
 */
export class TenantActivityRepository implements TenantActivity {
  constructor(private readonly db: DataSource) {}

  async pauseRunningCampaigns(orgId: string): Promise<number> {
    const [, paused] = await this.db.query(`UPDATE campaigns SET state = 'paused', updated_at = now() WHERE org_id = $1 AND state = 'running'`, [orgId]);
    return paused;
  }

  async openCallIds(orgId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM calls WHERE org_id = $1 AND status NOT IN ${TERMINAL_SQL}`, [orgId]);
    return rows.map((r) => r.id);
  }

  async withActivity(orgIds: string[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT o.id FROM unnest($1::varchar[]) AS o(id)
        WHERE EXISTS (SELECT 1 FROM campaigns k WHERE k.org_id = o.id AND k.state = 'running')
           OR EXISTS (SELECT 1 FROM calls c WHERE c.org_id = o.id AND c.status NOT IN ${TERMINAL_SQL})`,
      [orgIds],
    );
    return rows.map((r) => r.id);
  }
}
