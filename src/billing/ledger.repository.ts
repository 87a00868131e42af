import type { DataSource, EntityManager } from 'typeorm';
import type { EventsRepository } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import { formatMoney } from '../lib/money.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import type { LedgerLine } from './ledger.js';
import { LedgerEntry } from './ledger-entry.entity.js';

/** A credit: a positive adjustment of the organization's ledger (an opening balance, a top-up). */
const CREDIT = rowShape('ledger_entries', {
  id: column<string>(),
  /** Micro-units, as Postgres gives a bigint: a decimal string. */
  amount_micros: column<string>(),
  description: column<string>(),
  created_at: column<Date>(),
});

export type CreditRow = RowOf<typeof CREDIT.columns>;

/**
 * THE `balance.low` rule (CONTRACT.md §4): an organization's `low_balance_notified` follows
 * "its balance is below its `low_balance_threshold`" (never, without a threshold); the event is
 * sent when it turns true. So it is sent once when the balance falls below the threshold, and
 * again only after the balance was at or above it since. Only rows whose state turns are
 * written; each is returned with what the event says.
 */
const LOW_BALANCE_TURNS = `UPDATE organizations o SET low_balance_notified = NOT o.low_balance_notified
   WHERE o.id = ANY($1) AND o.low_balance_notified <> COALESCE(o.balance_micros < o.low_balance_threshold_micros, false)
   RETURNING o.id, o.low_balance_notified AS low, o.balance_micros, o.low_balance_threshold_micros AS threshold_micros, o.currency`;

/** The ledger (`ledger_entries`); the database keeps each organization's balance, on its row, from it. */
export class LedgerRepository {
  constructor(
    private readonly db: DataSource,
    private readonly events: EventsRepository,
  ) {}

  /**
   * Appends ledger lines inside the caller's transaction, in one statement. The database keeps
   * each organization's balance equal to the sum of its lines (trigger in the first migration);
   * that update locks the payer's row until commit, so callers append last, just before it.
   * Every change of a balance comes through here (charges of calls and texts, the operator's
   * adjustments), so here, under that lock, the `balance.low` rule runs (`reportLowBalances`).
   */
  async append(em: EntityManager, ...lines: LedgerLine[]): Promise<void> {
    if (lines.length === 0) return;
    await em.insert(
      LedgerEntry,
      lines.map((line) => ({
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
   * Applies the `balance.low` rule (LOW_BALANCE_TURNS) to organizations whose balance or
   * threshold just changed in `em`'s transaction, writing a `balance.low` event (the paying
   * organization's: a tenant's calls charge its reseller) for each that fell below. Runs with
   * every append, and when the operator changes a threshold.
   */
  async reportLowBalances(em: EntityManager, orgIds: string[]): Promise<void> {
    // An UPDATE answers [rows, count] through TypeORM.
    const [turned]: [Array<{ id: string; low: boolean; balance_micros: string; threshold_micros: string; currency: string }>] = await em.query(LOW_BALANCE_TURNS, [orgIds]);
    for (const org of turned.filter((o) => o.low)) {
      await this.events.record(em, {
        orgId: org.id,
        event: 'balance.low',
        fields: { balance: formatMoney(BigInt(org.balance_micros)), currency: org.currency, threshold: formatMoney(BigInt(org.threshold_micros)) },
      });
    }
  }

  /**
   * A page of the organization's credits, newest first. Payments and receipts are two views of
   * these same rows. Served by the ledger's (org_id, created_at, id) index.
   */
  credits<V>(orgId: string, page: PageParams, present: (row: CreditRow) => V): Promise<Page<V>> {
    const credits = where("org_id = ? AND kind = 'adjustment' AND amount_micros > 0", orgId);
    return listPage(this.db, { select: CREDIT.select(), from: CREDIT.from(), where: credits }, page, present);
  }
}
