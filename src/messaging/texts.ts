import type { EntityManager } from 'typeorm';
import { chargeText } from '../billing/charges.js';
import type { Call } from '../calls/call.entity.js';
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
 * After a call ends `positive`, the agent texts one confirmation to the contact, charged
 * `per_text` to the payer, in the transaction that ends the call (the unique `call_id`
 * makes a second text for the same call impossible).
 */
export async function sendConfirmation(em: EntityManager, call: Call, org: Organization, payer: Organization): Promise<Message | null> {
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
  await chargeText(em, message, payer);
  await carrierFor(org.carrierProvider).sendText({ from, to: message.toNumber, body: message.body });
  return message;
}
