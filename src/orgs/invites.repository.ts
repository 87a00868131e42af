import type { DataSource } from 'typeorm';
import type { Capability } from '../auth/capabilities.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { Reads } from '../lib/reads.js';

const INVITE = rowShape('invites', {
  id: column<string>(),
  email: column<string>(),
  capabilities: column<Capability[]>(),
  created_at: column<Date>(),
  expires_at: column<Date>(),
});

export type InviteRow = RowOf<typeof INVITE.columns>;

/** The `invites` table. */
export class InvitesRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  /**
   * One statement, safe against a concurrent invite of the same email: the unique (org_id, email) index
   * lets one insert win, and an expired invite is replaced in place. Null when one is pending.
   */
  async insertUnlessPending(invite: { id: string; orgId: string; email: string; capabilities: Capability[] }, validity: string): Promise<InviteRow | null> {
    const [row] = await this.db.query<InviteRow[]>(
      `INSERT INTO invites (id, org_id, email, capabilities, expires_at)
       VALUES ($1, $2, $3, $4, now() + $5::interval)
       ON CONFLICT (org_id, email) DO UPDATE
         SET id = EXCLUDED.id, capabilities = EXCLUDED.capabilities, expires_at = EXCLUDED.expires_at,
             created_at = now(), updated_at = now()
         WHERE invites.expires_at <= now()
       RETURNING ${INVITE.select()}`,
      [invite.id, invite.orgId, invite.email, invite.capabilities, validity],
    );
    return row ?? null;
  }

  list<V>(orgId: string, page: PageParams, present: (row: InviteRow) => V): Promise<Page<V>> {
    return this.reads.run((sql) => listPage(sql, { select: INVITE.select(), from: INVITE.from(), where: where('org_id = ?', orgId) }, page, present));
  }
}
