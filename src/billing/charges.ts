import { chargeForSeconds, type Micros } from '../lib/money.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { LedgerLine } from './ledger.js';

/**
 * THE payer rule: the id of the paying organization of `org` (an alias of `organizations` in
 * the query): itself, or for a tenant its reseller, whose balance and rates apply (SPEC.md §1).
 * In SQL, because `POST /v1/calls` places a call in one statement; a call records its payer
 * when it is placed, and its charge and texts go to that payer. Everything that needs a payer
 * (`OrganizationsRepository.payerOf`, `CallsRepository.placeOutbound`) uses this.
 */
export const payerIdSql = (org: string) => `COALESCE(${org}.parent_id, ${org}.id)`;

/**
 * A call's charge: per started second at the payer's per-minute rate. The ledger line's unique
 * reference `call:<id>` makes a second charge of the same call impossible.
 */
export function callCharge(call: { id: string; orgId: string }, payer: Organization, seconds: number): { amount: Micros; line: LedgerLine | null } {
  const amount = chargeForSeconds(seconds, payer.ratePerMinuteMicros);
  const line: LedgerLine = { orgId: payer.id, subjectOrgId: call.orgId, kind: 'call', amountMicros: -amount, reference: `call:${call.id}`, description: `call ${call.id}, ${seconds} s` };
  return { amount, line: amount > 0n ? line : null };
}

/** A text's charge at the payer's per-text rate, referenced `text:<message id>`. */
export function textCharge(message: { id: string; orgId: string }, payer: Organization): LedgerLine | null {
  const amount = payer.ratePerTextMicros;
  return amount > 0n ? { orgId: payer.id, subjectOrgId: message.orgId, kind: 'text', amountMicros: -amount, reference: `text:${message.id}`, description: `text ${message.id}` } : null;
}
