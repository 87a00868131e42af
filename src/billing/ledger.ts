import { formatMoney, type Micros } from '../lib/money.js';
import type { LedgerKind } from './ledger-entry.entity.js';

export interface LedgerLine {
  orgId: string;
  subjectOrgId?: string;
  kind: LedgerKind;
  amountMicros: Micros;
  /** Unique: appending the same reference twice is refused by the database. */
  reference?: string;
  description?: string;
}

/** The sum of the ledger lines, kept on the organization's row by the database in each line's transaction. */
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
