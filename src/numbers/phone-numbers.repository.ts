import type { DataSource, EntityManager } from 'typeorm';
import { ConflictError, NotFoundError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import { PhoneNumber } from './phone-number.entity.js';
import type { Reads } from '../lib/reads.js';

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
 * The oldest number the call's agent answers (a callback reaches the same agent; id breaks ties), or none.
 * SQL, because `POST /v1/calls` places a call in one statement. `orgId`, `agentId` are SQL expressions.
 */
export const outgoingNumberSql = (orgId: string, agentId: string) =>
  `(SELECT n.phone_number FROM phone_numbers n WHERE n.org_id = ${orgId} AND n.agent_id = ${agentId} ORDER BY n.created_at, n.id LIMIT 1)`;

/** The standard resource repository, plus the reads calls and texts make. */
export class PhoneNumbersRepository extends OrgResourceRepository<typeof phoneNumberRow.columns> {
  constructor(db: DataSource, reads?: Reads) {
    super(
      db,
      {
        shape: phoneNumberRow,
        resource: 'phone_number',
        idPrefix: 'pn',
        conflicts: {
          phone_numbers_number_key: () => new ConflictError(PHONE_NUMBER_TAKEN, 'This phone number is already in use.'),
        },
        // The agent was deleted between the check and the write.
        missingReference: () => new NotFoundError('agent'),
      },
      reads,
    );
  }

  findByNumber(em: EntityManager, phoneNumber: string): Promise<PhoneNumber | null> {
    return em.findOneBy(PhoneNumber, { phoneNumber });
  }

  /** In the caller's transaction it also locks the number until commit, so it cannot be released meanwhile. */
  async lockOwn(em: EntityManager, orgId: string, phoneNumber: string): Promise<boolean> {
    const rows = await em.query<unknown[]>('SELECT 1 FROM phone_numbers WHERE org_id = $1 AND phone_number = $2 FOR SHARE', [orgId, phoneNumber]);
    return rows.length > 0;
  }
}
