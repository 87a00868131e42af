import type { DataSource, EntityManager } from 'typeorm';
import type { EventsRepository } from '../events/events.repository.js';
import { newId } from '../lib/ids.js';
import { formatMoney } from '../lib/money.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import type { LedgerLine } from './ledger.js';
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

/**
 * The lines, one text whatever their number. The balance trigger runs once for the statement (see
 * the LedgerBalancePerStatement migration): it locks the payers' rows by id, then adds each one's
 * sum.
 */
const APPEND = `INSERT INTO ledger_entries (id, org_id, subject_org_id, kind, amount_micros, reference, description)
  SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[], $5::bigint[], $6::varchar[], $7::varchar[])`;

/** The ledger; the database keeps each organization's balance from it. */
export class LedgerRepository {
  constructor(
    db: DataSource,
    private readonly events: EventsRepository,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  /**
   * Appends in the caller's transaction, in one statement whatever the number of lines; its trigger
   * keeps the balances, locking the payers' rows (in id order) until commit, so append last. Every
   * balance change comes here, so the `balance.low` rule runs here.
   */
  async append(em: EntityManager, ...lines: LedgerLine[]): Promise<void> {
    if (lines.length === 0) return;
    await em.query(APPEND, [
      lines.map(() => newId('led')),
      lines.map((line) => line.orgId),
      lines.map((line) => line.subjectOrgId ?? line.orgId),
      lines.map((line) => line.kind),
      lines.map((line) => line.amountMicros.toString()),
      lines.map((line) => line.reference ?? null),
      lines.map((line) => line.description ?? ''),
    ]);
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
