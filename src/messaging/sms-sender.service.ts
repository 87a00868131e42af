import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { InvalidRequestError } from '../lib/errors.js';
import { lockOwnNumber } from '../numbers/phone-numbers.service.js';
import { changeOrganization, loadOrganization } from '../orgs/organization.service.js';
import type { Organization } from '../orgs/organization.entity.js';

export interface SmsSenderView {
  phone_number: string | null;
}

const presentSender = (org: Organization): SmsSenderView => ({ phone_number: org.smsSender });

/** `GET /v1/sms-sender`: the acting organization's own sending number, if set (SPEC.md §4.2). */
export async function readSmsSender(actor: Actor): Promise<SmsSenderView> {
  return presentSender(await loadOrganization(db.manager, actor.org.id));
}

/**
 * Sets the acting organization's sending number, which must be one of its own numbers, or
 * clears it. The number stays locked until commit, so releasing it concurrently either
 * happens after (and clears the sender) or before (and this answers 400).
 */
export function setSmsSender(actor: Actor, input: SmsSenderView): Promise<SmsSenderView> {
  return db.transaction(async (em) => {
    if (input.phone_number !== null && !(await lockOwnNumber(em, actor.org.id, input.phone_number))) {
      throw new InvalidRequestError('The sending number must be one of the organization\'s own phone numbers.', [
        { path: 'phone_number', message: '"phone_number" is not one of the organization\'s phone numbers' },
      ]);
    }
    return presentSender(await changeOrganization(em, actor.org.id, { smsSender: input.phone_number }));
  });
}
