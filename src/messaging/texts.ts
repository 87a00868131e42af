import type { EntityManager } from 'typeorm';
import { textCharge } from '../billing/charges.js';
import type { LedgerLine } from '../billing/ledger.js';
import type { EndedCall } from '../calls/call-store.js';
import { carrierFor } from '../calls/simulator.js';
import { newId } from '../lib/ids.js';
import { Organization } from '../orgs/organization.entity.js';
import { Message } from './message.entity.js';

/**
 * The number an organization's agent texts from (SPEC.md §4.2): its own sending number, else
 * (for a tenant) its reseller's; null when neither is set, and then no text is sent.
 */
export async function senderFor(em: EntityManager, org: Organization): Promise<string | null> {
  if (org.smsSender) return org.smsSender;
  if (!org.parentId) return null;
  const reseller = await em.findOneByOrFail(Organization, { id: org.parentId });
  return reseller.smsSender;
}

/**
 * After a call ends `positive`, the agent texts one confirmation to the contact, in the
 * transaction that ends the call (the unique `call_id` makes a second text for the same call
 * impossible). Returns the ledger line of its `per_text` charge, for the caller to append.
 */
export async function sendConfirmation(em: EntityManager, call: EndedCall, org: Organization, payer: Organization): Promise<LedgerLine | null> {
  if (call.outcome !== 'positive' || org.disabled) return null;
  const from = await senderFor(em, org);
  if (!from) return null;
  const message = em.create(Message, {
    id: newId('msg'),
    orgId: org.id,
    payerOrgId: payer.id,
    callId: call.id,
    fromNumber: from,
    toNumber: call.phoneNumber,
    body: `Thank you for calling ${org.name}. Your booking is confirmed; reply to this message if anything changes.`,
    chargeMicros: payer.ratePerTextMicros,
  });
  await em.insert(Message, message);
  await carrierFor(org.carrierProvider).sendText({ from, to: message.toNumber, body: message.body });
  return textCharge(message, payer);
}
