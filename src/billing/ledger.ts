import type { EntityManager } from 'typeorm';
import { newId } from '../lib/ids.js';
import { formatMoney, type Micros } from '../lib/money.js';
import { Organization } from '../orgs/organization.entity.js';
import { LedgerEntry, type LedgerKind } from './ledger-entry.entity.js';

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
 * Appends ledger lines inside the caller's transaction, in one statement. The database keeps
 * each organization's balance equal to the sum of its lines (trigger in the first migration);
 * that update locks the payer's row until commit, so callers append last, just before it.
 */
export async function appendLedger(em: EntityManager, ...lines: LedgerLine[]): Promise<void> {
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

export interface BalanceView {
  balance: string;
  currency: string;
}

export async function balanceOf(em: EntityManager, orgId: string): Promise<BalanceView> {
  const org = await em.findOneByOrFail(Organization, { id: orgId });
  return { balance: formatMoney(org.balanceMicros), currency: org.currency };
}
