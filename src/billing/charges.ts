import type { EntityManager } from 'typeorm';
import { chargeForSeconds, type Micros } from '../lib/money.js';
import { Organization } from '../orgs/organization.entity.js';
import { appendLedger } from './ledger.js';

/**
 * The paying organization of `org`: itself, or for a tenant its reseller, whose balance and
 * rates apply (SPEC.md §1).
 */
export async function payerOf(em: EntityManager, org: Organization): Promise<Organization> {
  if (!org.parentId) return org;
  return em.findOneByOrFail(Organization, { id: org.parentId });
}

/**
 * Charges a call per started second at the payer's per-minute rate, in the caller's
 * transaction (the one that ends the call). The ledger's unique reference `call:<id>`
 * makes a second charge of the same call impossible.
 */
export async function chargeCall(em: EntityManager, call: { id: string; orgId: string }, payer: Organization, seconds: number): Promise<Micros> {
  const amount = chargeForSeconds(seconds, payer.ratePerMinuteMicros);
  if (amount > 0n) {
    await appendLedger(em, { orgId: payer.id, subjectOrgId: call.orgId, kind: 'call', amountMicros: -amount, reference: `call:${call.id}`, description: `call ${call.id}, ${seconds} s` });
  }
  return amount;
}

/** Charges one text at the payer's per-text rate, in the transaction that records it. */
export async function chargeText(em: EntityManager, message: { id: string; orgId: string }, payer: Organization): Promise<Micros> {
  const amount = payer.ratePerTextMicros;
  if (amount > 0n) {
    await appendLedger(em, { orgId: payer.id, subjectOrgId: message.orgId, kind: 'text', amountMicros: -amount, reference: `text:${message.id}`, description: `text ${message.id}` });
  }
  return amount;
}
