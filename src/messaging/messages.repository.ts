import type { DataSource, EntityManager } from 'typeorm';
import { newId } from '../lib/ids.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { Message, type TextFailureReason, type TextStatus } from './message.entity.js';
import { Reads } from '../lib/reads.js';

const messageRow = rowShape('messages', {
  id: column<string>(),
  call_id: column<string | null>(),
  from_number: column<string>(),
  to_number: column<string>(),
  body: column<string>(),
  charge_micros: column<string>(),
  status: column<TextStatus>(),
  failure_reason: column<TextFailureReason | null>(),
  created_at: column<Date>(),
  // Whose currency the text is shown in (`OrganizationsRepository.withPayerCurrency`).
  payer_org_id: column<string>(),
});
export type MessageRow = RowOf<typeof messageRow.columns>;

const unsentRow = rowShape('messages', {
  id: column<string>(),
  org_id: column<string>(),
  from_number: column<string>(),
  to_number: column<string>(),
  body: column<string>(),
});
export type UnsentText = RowOf<typeof unsentRow.columns>;

export interface NewText {
  orgId: string;
  payerOrgId: string;
  callId: string;
  fromNumber: string;
  toNumber: string;
  body: string;
  chargeMicros: bigint;
  billableMicros: bigint | null;
  status: TextStatus;
  failureReason: TextFailureReason | null;
}

/** Recorded (and charged) first, then sent by a job; an unsent text is sent again by the sweeper (a failed one never is). */
export class MessagesRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  list<T>(orgId: string, query: PageParams & { call_id?: string }, present: (row: MessageRow) => T): Promise<Page<T>> {
    const filters = where('org_id = ?', orgId).equal('call_id', query.call_id);
    return this.reads.run((sql) => listPage(sql, { select: messageRow.select(), from: messageRow.from(), where: filters }, query, present));
  }

  async insert(em: EntityManager, text: NewText): Promise<string> {
    const id = newId('msg');
    await em.insert(Message, { id, ...text, sentAt: null });
    return id;
  }

  async findUnsent(id: string): Promise<UnsentText | null> {
    const [row] = await this.db.query<UnsentText[]>(
      `SELECT ${unsentRow.select()} FROM ${unsentRow.from()} WHERE id = $1 AND sent_at IS NULL AND status = 'sent'`,
      [id],
    );
    return row ?? null;
  }

  /** Once: a text sent already keeps its time. */
  async markSent(id: string): Promise<void> {
    await this.db.query('UPDATE messages SET sent_at = now(), updated_at = now() WHERE id = $1 AND sent_at IS NULL', [id]);
  }

  async unsentIds(graceSeconds: number, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM messages WHERE sent_at IS NULL AND status = 'sent' AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
      [graceSeconds, limit],
    );
    return rows.map((r) => r.id);
  }
}
