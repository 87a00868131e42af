import { chargeForSeconds, type Micros } from '../lib/money.js';
import { isTenant, type Organization } from '../orgs/organization.entity.js';
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

/** Prices per minute (per started second) and per text, in micros. */
export interface Prices {
  perMinute: Micros;
  perText: Micros;
}

/**
 * THE resale price rule (CONTRACT.md §4 "Resale prices"): what a tenant `org` is billed by its
 * reseller `payer`: the prices the reseller set for it, else the reseller's own rates. Null for
 * an organization that is no tenant (it bills no one). Read at a call's end, like the rates its
 * charge is taken at, so each call keeps the prices in force when it ended.
 */
export function resalePrices(org: Organization, payer: Organization): Prices | null {
  if (!isTenant(org)) return null;
  return {
    perMinute: org.resalePerMinuteMicros ?? payer.ratePerMinuteMicros,
    perText: org.resalePerTextMicros ?? payer.ratePerTextMicros,
  };
}

/** What a tenant owes for a call of `seconds`: its charge's rule (per started second, rounded up) at the resale price; null for a non-tenant. */
export function callBillable(org: Organization, payer: Organization, seconds: number): Micros | null {
  const prices = resalePrices(org, payer);
  return prices && chargeForSeconds(seconds, prices.perMinute);
}

/** What a tenant owes for a text: the resale `per_text`; null for a non-tenant. */
export const textBillable = (org: Organization, payer: Organization): Micros | null => resalePrices(org, payer)?.perText ?? null;
