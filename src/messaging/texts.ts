import type { EntityManager } from 'typeorm';
import { textCharge } from '../billing/charges.js';
import type { LedgerLine } from '../billing/ledger.js';
import type { EndedCall } from '../calls/calls.repository.js';
import type { Carriers } from '../carrier/carriers.js';
import { loadOrganization } from '../orgs/organization.service.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { MessagesRepository } from './messages.repository.js';

/**
 * The number an organization's agent texts from (SPEC.md §4.2): its own sending number, else
 * (for a tenant) its reseller's; null when neither is set, and then no text is sent.
 */
async function senderFor(em: EntityManager, org: Organization): Promise<string | null> {
  if (org.smsSender) return org.smsSender;
  if (!org.parentId) return null;
  return (await loadOrganization(em, org.parentId)).smsSender;
}

/**
 * After a call ends `positive`, the agent texts one confirmation to the contact, in the
 * transaction that ends the call (the unique `call_id` makes a second text for the same call
 * impossible).
 */
export class ConfirmationTexts {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly carriers: Pick<Carriers, 'get'>,
  ) {}

  /** Sends the confirmation of an ended call, if it gets one; returns the ledger line of its `per_text` charge, for the caller to append. */
  async sendConfirmation(em: EntityManager, call: EndedCall, org: Organization, payer: Organization): Promise<LedgerLine | null> {
    if (call.outcome !== 'positive' || org.disabled) return null;
    const from = await senderFor(em, org);
    if (!from) return null;
    const text = {
      orgId: org.id,
      payerOrgId: payer.id,
      callId: call.id,
      fromNumber: from,
      toNumber: call.phoneNumber,
      body: `Thank you for calling ${org.name}. Your booking is confirmed; reply to this message if anything changes.`,
      chargeMicros: payer.ratePerTextMicros,
    };
    const messageId = await this.messages.insert(em, text);
    await this.carriers.get(org.carrierProvider).sendText({ from, to: text.toNumber, body: text.body });
    return textCharge({ id: messageId, orgId: org.id }, payer);
  }
}
