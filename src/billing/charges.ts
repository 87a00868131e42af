import { chargeForSeconds, type Micros } from '../lib/money.js';
import { isTenant, type Organization } from '../orgs/organization.entity.js';
import type { LedgerLine } from './ledger.js';

/**
 * THE payer rule: the payer of `org` (an `organizations` alias) is itself, or a tenant's reseller.
 * In SQL because `POST /v1/calls` places a call in one statement; everything needing a payer uses it.
 */
export const payerIdSql = (org: string) => `COALESCE(${org}.parent_id, ${org}.id)`;

/** The unique reference `call:<id>` makes a second charge of one call impossible. */
export function callCharge(call: { id: string; orgId: string }, payer: Organization, seconds: number): { amount: Micros; line: LedgerLine | null } {
  const amount = chargeForSeconds(seconds, payer.ratePerMinuteMicros);
  const line: LedgerLine = {
    orgId: payer.id,
    subjectOrgId: call.orgId,
    kind: 'call',
    amountMicros: -amount,
    reference: `call:${call.id}`,
    description: `call ${call.id}, ${seconds} s`,
  };
  return { amount, line: amount > 0n ? line : null };
}

/** A text's charge at the payer's per-text rate, referenced `text:<message id>`. */
export function textCharge(message: { id: string; orgId: string }, payer: Organization): LedgerLine | null {
  const amount = payer.ratePerTextMicros;
  return amount > 0n
    ? { orgId: payer.id, subjectOrgId: message.orgId, kind: 'text', amountMicros: -amount, reference: `text:${message.id}`, description: `text ${message.id}` }
    : null;
}

export interface Prices {
  perMinute: Micros;
  perText: Micros;
}

/**
 * THE resale price rule: the prices the reseller set for tenant `org`, else its own rates; null for
 * a non-tenant. Read at a call's end, so each call keeps the prices in force when it ended.
 */
export function resalePrices(org: Organization, payer: Organization): Prices | null {
  if (!isTenant(org)) return null;
  return {
    perMinute: org.resalePerMinuteMicros ?? payer.ratePerMinuteMicros,
    perText: org.resalePerTextMicros ?? payer.ratePerTextMicros,
  };
}

/** A tenant's charge for `seconds` at the resale price (per started second, rounded up); null for a non-tenant. */
export function callBillable(org: Organization, payer: Organization, seconds: number): Micros | null {
  const prices = resalePrices(org, payer);
  return prices && chargeForSeconds(seconds, prices.perMinute);
}

/** What a tenant owes for a text: the resale `per_text`; null for a non-tenant. */
export const textBillable = (org: Organization, payer: Organization): Micros | null => resalePrices(org, payer)?.perText ?? null;
