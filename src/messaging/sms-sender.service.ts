import type { DataSource, EntityManager } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { InvalidRequestError } from '../lib/errors.js';
import type { PhoneNumbersRepository } from '../numbers/phone-numbers.repository.js';
import type { Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';

export interface SmsSenderView {
  phone_number: string | null;
}

const presentSender = (org: Organization): SmsSenderView => ({ phone_number: org.smsSender });

/** The organization's texting sender (SPEC.md §4.2): one of its own numbers, or none. */
export class SmsSenderService {
  constructor(
    private readonly db: DataSource,
    private readonly numbers: PhoneNumbersRepository,
    private readonly orgs: OrganizationsRepository,
  ) {}

  async read(actor: Actor): Promise<SmsSenderView> {
    return presentSender(await this.orgs.load(this.db.manager, actor.org.id));
  }

  /** The number stays locked until commit, so a concurrent release comes after (clearing it) or before (400). */
  set(actor: Actor, input: SmsSenderView): Promise<SmsSenderView> {
    return this.db.transaction(async (em) => {
      if (input.phone_number !== null && !(await this.numbers.lockOwn(em, actor.org.id, input.phone_number))) {
        throw new InvalidRequestError("The sending number must be one of the organization's own phone numbers.", [
          { path: 'phone_number', message: '"phone_number" is not one of the organization\'s phone numbers' },
        ]);
      }
      return presentSender(await this.orgs.update(em, actor.org.id, { smsSender: input.phone_number }));
    });
  }

  /** In the releasing transaction: if the organization texted from it, it has no sending number now. */
  async numberReleased(em: EntityManager, orgId: string, phoneNumber: string): Promise<void> {
    await this.orgs.clearSmsSender(em, orgId, phoneNumber);
  }
}
