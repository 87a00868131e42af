import type { DataSource } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import type { Sql } from '../lib/pagination.js';
import { column, rowShape } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { Reads } from '../lib/reads.js';

/** The one declaration of an entry's fields. */
export const doNotCallShape = rowShape('do_not_call_entries', {
  id: column<string>(),
  phone_number: column<string>(),
  reason: column<string | null>(),
  created_at: column<Date>(),
});

/** THE do-not-call rule (SQL): on `orgId`'s list or its reseller's; used by the engine and campaigns, via the (org_id, phone_number) index. */
export const onDoNotCallListSql = (orgId: string, phoneNumber: string) =>
  `EXISTS (SELECT 1 FROM do_not_call_entries dnc
            WHERE dnc.phone_number = ${phoneNumber}
              AND dnc.org_id IN (${orgId}, (SELECT o.parent_id FROM organizations o WHERE o.id = ${orgId})))`;

/** Inside a tenant, the tenant's own list; its reseller's also applies to its calls but is not shown. */
export class DoNotCallRepository extends OrgResourceRepository<typeof doNotCallShape.columns, 'phone_number'> {
  constructor(db: DataSource, reads?: Reads) {
    super(
      db,
      {
        shape: doNotCallShape,
        resource: 'do_not_call_entry',
        idPrefix: 'dnc',
        filters: ['phone_number'],
        conflicts: {
          do_not_call_entries_org_phone_key: () => new ConflictError('already_listed', 'This number is already on the do-not-call list.'),
        },
      },
      reads,
    );
  }

  /** Those of `phoneNumbers` that organization `orgId` may not call (its list or its reseller's), in one statement. */
  async listedAmong(sql: Sql, orgId: string, phoneNumbers: string[]): Promise<Set<string>> {
    if (phoneNumbers.length === 0) return new Set();
    const rows = (await sql.query(
      `SELECT n.phone_number FROM unnest($2::varchar[]) AS n(phone_number) WHERE ${onDoNotCallListSql('$1::varchar', 'n.phone_number')}`,
      [orgId, phoneNumbers],
    )) as Array<{ phone_number: string }>;
    return new Set(rows.map((r) => r.phone_number));
  }
}
