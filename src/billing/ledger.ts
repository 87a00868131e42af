import { formatMoney, type Micros } from '../lib/money.js';
import type { LedgerKind } from './ledger-entry.entity.js';

export interface LedgerLine {
  /** The paying organization. */
  orgId: string;
  /** Whose activity it was (the tenant, or the payer itself). */
  subjectOrgId?: string;
  kind: LedgerKind;
  amountMicros: Micros;
  /** Unique: appending the same reference twice is refused by the database. */
  reference?: string;
  description?: string;
}

/**
 * An organization's balance: the sum of its ledger lines, kept on its row (`Organization`
 * has both fields) by the database in the same transaction as every line.
 */
export interface Balance {
  balanceMicros: Micros;
  currency: string;
}

export interface BalanceView {
  balance: string;
  currency: string;
}

/** `{balance, currency}` (CONTRACT.md "Other areas: closed to tenants"). */
export const presentBalance = (b: Balance): BalanceView => ({ balance: formatMoney(b.balanceMicros), currency: b.currency });
