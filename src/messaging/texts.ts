import type { EntityManager } from 'typeorm';
import { textBillable, textCharge } from '../billing/charges.js';
import type { LedgerLine } from '../billing/ledger.js';
import type { EndedCall } from '../calls/calls.repository.js';
import type { Carriers } from '../carrier/carriers.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { MessagesRepository, NewText } from './messages.repository.js';

export interface RecordedText {
  messageId: string;
  /** The ledger line of its `per_text` charge (none at a rate of zero, nor for a failed text), for the caller to append. */
  charge: LedgerLine | null;
  /** To send after commit; false: recorded `failed`, never sent. */
  sent: boolean;
}

/**
 * Recorded with its charge in the ending transaction (unique `call_id`), sent by a `send-text` job after commit, never inside.
 * A text that would be charged while its tenant's monthly spend limit is reached is recorded `failed`
 * (`spend_limit_reached`), uncharged and unbilled, and never sent (CONTRACT.md §5).
 */
export class ConfirmationTexts {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly carriers: Pick<Carriers, 'ofOrg'>,
    private readonly orgs: Pick<OrganizationsRepository, 'load'>,
  ) {}

  async record(em: EntityManager, call: EndedCall, org: Organization, payer: Organization, spendLimitReached: boolean): Promise<RecordedText | null> {
    if (call.outcome !== 'positive' || org.disabled) return null;
    const from = await this.senderFor(em, org);
    if (!from) return null;
    const failed = spendLimitReached && payer.ratePerTextMicros > 0n;
    const text: NewText = {
      orgId: org.id,
      payerOrgId: payer.id,
      callId: call.id,
      fromNumber: from,
      toNumber: call.phoneNumber,
      body: `Thank you for calling ${org.name}. Your booking is confirmed; reply to this message if anything changes.`,
      chargeMicros: failed ? 0n : payer.ratePerTextMicros,
      billableMicros: failed ? 0n : textBillable(org, payer),
      status: failed ? 'failed' : 'sent',
      failureReason: failed ? 'spend_limit_reached' : null,
    };
    const messageId = await this.messages.insert(em, text);
    return { messageId, charge: failed ? null : textCharge({ id: messageId, orgId: org.id }, payer), sent: !failed };
  }

  /** Its own sending number, else a tenant's reseller's; null: no text is sent (SPEC.md §4.2). */
  private async senderFor(em: EntityManager, org: Organization): Promise<string | null> {
    if (org.smsSender) return org.smsSender;
    if (!org.parentId) return null;
    return (await this.orgs.load(em, org.parentId)).smsSender;
  }

  /** A text sent already is skipped, so a job run twice (or re-run by the sweep) sends once. */
  async send(messageId: string): Promise<'sent' | 'already sent'> {
    const text = await this.messages.findUnsent(messageId);
    if (!text) return 'already sent';
    const carrier = await this.carriers.ofOrg(text.org_id);
    await carrier.sendText({ reference: text.id, from: text.from_number, to: text.to_number, body: text.body });
    await this.messages.markSent(text.id);
    return 'sent';
  }
}
