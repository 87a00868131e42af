import type { DataSource, EntityManager } from 'typeorm';
import { newId } from '../lib/ids.js';
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

/** The ledger (`ledger_entries`); the database keeps each organization's balance, on its row, from it. */
export class LedgerRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Appends ledger lines inside the caller's transaction, in one statement. The database keeps
   * each organization's balance equal to the sum of its lines (trigger in the first migration);
   * that update locks the payer's row until commit, so callers append last, just before it.
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
