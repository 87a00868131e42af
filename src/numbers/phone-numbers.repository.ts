import type { DataSource, EntityManager } from 'typeorm';
import { ConflictError, NotFoundError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import { PhoneNumber } from './phone-number.entity.js';

const phoneNumberRow = rowShape('phone_numbers', {
  id: column<string>(),
  phone_number: column<string>(),
  agent_id: column<string | null>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type PhoneNumberRow = RowOf<typeof phoneNumberRow.columns>;
/** A phone number as the API shows it: the row, times in ISO 8601. */
export type PhoneNumberView = Presented<PhoneNumberRow>;

/** The conflict of a number another organization (or this one) already has. */
export const PHONE_NUMBER_TAKEN = 'phone_number_taken';

/**
 * The number an organization's outbound call goes out from: the oldest of its numbers that
 * the call's agent answers (so a callback reaches the same agent), the id breaking a tie so
 * the answer stays the same while the numbers do; none when the agent answers none. An SQL
 * expression, because `POST /v1/calls` places a call in one statement (see
 * `CallsRepository.placeOutbound`, the one path that creates outbound calls).
 *
 * @param orgId, agentId SQL expressions for the organization's and the agent's ids.
 */
export const outgoingNumberSql = (orgId: string, agentId: string) =>
  `(SELECT n.phone_number FROM phone_numbers n WHERE n.org_id = ${orgId} AND n.agent_id = ${agentId} ORDER BY n.created_at, n.id LIMIT 1)`;

/** The organizations' phone numbers: the standard resource repository, and the reads calls and texts make. */
export class PhoneNumbersRepository extends OrgResourceRepository<typeof phoneNumberRow.columns> {
  constructor(db: DataSource) {
    super(db, {
      shape: phoneNumberRow,
      resource: 'phone_number',
      idPrefix: 'pn',
      conflicts: {
        // A number belongs to one organization across the whole service.
        phone_numbers_number_key: () => new ConflictError(PHONE_NUMBER_TAKEN, 'This phone number is already in use.'),
      },
      // The agent was deleted between the check and the write.
      missingReference: () => new NotFoundError('agent'),
    });
  }

  /** The number `phoneNumber` of whichever organization has it (an inbound call's), if any. */
  findByNumber(em: EntityManager, phoneNumber: string): Promise<PhoneNumber | null> {
    return em.findOneBy(PhoneNumber, { phoneNumber });
  }

  /**
   * Whether `phoneNumber` is one of the organization's own numbers. Inside the caller's
   * transaction it also locks the number until commit, so it cannot be released meanwhile.
   */
  async lockOwn(em: EntityManager, orgId: string, phoneNumber: string): Promise<boolean> {
    const rows = await em.query('SELECT 1 FROM phone_numbers WHERE org_id = $1 AND phone_number = $2 FOR SHARE', [orgId, phoneNumber]);
    return rows.length > 0;
  }
}
