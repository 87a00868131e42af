import type { Actor } from '../auth/actor.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { db } from '../lib/db.js';
import { formatMoney } from '../lib/money.js';
import { loadOrganization } from '../orgs/organization.service.js';

/** A credit: a positive adjustment of the organization's ledger (an opening balance, a top-up). */
interface CreditRow {
  id: string;
  amount_micros: string;
  description: string;
  created_at: Date;
}

/**
 * One page of the organization's credits, newest first, each presented by `present` in the
 * organization's currency. Payments and receipts are two views of these same rows.
 * Served by the ledger's (org_id, created_at, id) index.
 */
async function listCredits<V>(orgId: string, page: PageParams, present: (row: CreditRow, currency: string) => V): Promise<Page<V>> {
  const { currency } = await loadOrganization(db.manager, orgId);
  const query = {
    select: 'id, amount_micros, description, created_at',
    from: 'ledger_entries',
    where: where("org_id = ? AND kind = 'adjustment' AND amount_micros > 0", orgId),
  };
  return listPage<CreditRow, V>(db, query, page, (row) => present(row, currency));
}

export interface PaymentView {
  id: string;
  amount: string;
  currency: string;
  description: string;
  created_at: string;
}

export interface ReceiptView {
  id: string;
  number: string;
  amount: string;
  currency: string;
  issued_at: string;
}

const presentPayment = (row: CreditRow, currency: string): PaymentView => ({
  id: row.id,
  amount: formatMoney(BigInt(row.amount_micros)),
  currency,
  description: row.description,
  created_at: row.created_at.toISOString(),
});

/** Receipt numbers are short and stable: the first characters of the ledger entry's random id. */
export const receiptNumber = (ledgerId: string): string => `R-${ledgerId.slice(ledgerId.indexOf('_') + 1).slice(0, 10)}`;

const presentReceipt = (row: CreditRow, currency: string): ReceiptView => ({
  id: row.id,
  number: receiptNumber(row.id),
  amount: formatMoney(BigInt(row.amount_micros)),
  currency,
  issued_at: row.created_at.toISOString(),
});

/** `GET /v1/payments`: the money paid into the acting organization. */
export function listPayments(actor: Actor, page: PageParams): Promise<Page<PaymentView>> {
  return listCredits(actor.org.id, page, presentPayment);
}

/** `GET /v1/receipts`: one receipt per payment. */
export function listReceipts(actor: Actor, page: PageParams): Promise<Page<ReceiptView>> {
  return listCredits(actor.org.id, page, presentReceipt);
}
