import type { DataSource, EntityManager } from 'typeorm';
import type { EventsRepository } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import { formatMoney } from '../lib/money.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import type { LedgerLine } from './ledger.js';
import { LedgerEntry } from './ledger-entry.entity.js';
import { Reads } from '../lib/reads.js';

const CREDIT = rowShape('ledger_entries', {
  id: column<string>(),
  /** Micros; pg gives a bigint as a decimal string. */
  amount_micros: column<string>(),
  description: column<string>(),
  created_at: column<Date>(),
});

export type CreditRow = RowOf<typeof CREDIT.columns>;

/**
 * THE `balance.low` rule (CONTRACT.md §4): `low_balance_notified` follows "balance below threshold",
 * and the event is sent when it turns true. Only rows that turn are written and returned.
 */
const LOW_BALANCE_TURNS = `UPDATE organizations o SET low_balance_notified = NOT o.low_balance_notified
   WHERE o.id = ANY($1) AND o.low_balance_notified <> COALESCE(o.balance_micros < o.low_balance_threshold_micros, false)
   RETURNING o.id, o.low_balance_notified AS low, o.balance_micros, o.low_balance_threshold_micros AS threshold_micros, o.currency`;

/** The ledger; the database keeps each organization's balance from it. */
export class LedgerRepository {
  constructor(
    db: DataSource,
    private readonly events: EventsRepository,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  /**
   * Appends in the caller's transaction; a trigger keeps the balance, locking the payer's row until
   * commit, so append last. Every balance change comes here, so the `balance.low` rule runs here.
   */
  async append(em: EntityManager, ...lines: LedgerLine[]): Promise<void> {
    if (lines.length === 0) return;
    // The trigger locks each payer's row as its line goes in: lines by payer id keep the lock order (see `CallEngine`).
    const byPayer = [...lines].sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0));
    await em.insert(
      LedgerEntry,
      byPayer.map((line) => ({
        id: newId('led'),
        orgId: line.orgId,
        subjectOrgId: line.subjectOrgId ?? line.orgId,
        kind: line.kind,
        amountMicros: line.amountMicros,
        reference: line.reference ?? null,
        description: line.description ?? '',
      })),
    );
    await this.reportLowBalances(em, [...new Set(lines.map((line) => line.orgId))]);
  }

  /**
   * The `balance.low` rule for organizations whose balance or threshold changed in `em`'s transaction:
   * rows it holds already (by `append`'s trigger, in order), so this statement waits for none.
   */
  async reportLowBalances(em: EntityManager, orgIds: string[]): Promise<void> {
    // TypeORM answers an UPDATE with [rows, count].
    const [turned]: [Array<{ id: string; low: boolean; balance_micros: string; threshold_micros: string; currency: string }>] = await em.query(
      LOW_BALANCE_TURNS,
      [orgIds],
    );
    for (const org of turned.filter((o) => o.low)) {
      await this.events.record(em, {
        orgId: org.id,
        event: 'balance.low',
        fields: { balance: formatMoney(BigInt(org.balance_micros)), currency: org.currency, threshold: formatMoney(BigInt(org.threshold_micros)) },
      });
    }
  }

  /** Newest first; payments and receipts are two views of these rows. */
  credits<V>(orgId: string, page: PageParams, present: (row: CreditRow) => V): Promise<Page<V>> {
    const credits = where("org_id = ? AND kind = 'adjustment' AND amount_micros > 0", orgId);
    return this.reads.run((sql) => listPage(sql, { select: CREDIT.select(), from: CREDIT.from(), where: credits }, page, present));
  }
}
