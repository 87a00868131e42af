import { formatMoney } from '../lib/money.js';
import type { CreditRow } from './ledger.repository.js';

// Payments and receipts: two views of the organization's credits (see `LedgerRepository.credits`).

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

export const presentPayment = (row: CreditRow, currency: string): PaymentView => ({
  id: row.id,
  amount: formatMoney(BigInt(row.amount_micros)),
  currency,
  description: row.description,
  created_at: row.created_at.toISOString(),
});

/** Receipt numbers are short and stable: the first characters of the ledger entry's random id. */
export const receiptNumber = (ledgerId: string): string => `R-${ledgerId.slice(ledgerId.indexOf('_') + 1).slice(0, 10)}`;

export const presentReceipt = (row: CreditRow, currency: string): ReceiptView => ({
  id: row.id,
  number: receiptNumber(row.id),
  amount: formatMoney(BigInt(row.amount_micros)),
  currency,
  issued_at: row.created_at.toISOString(),
});
