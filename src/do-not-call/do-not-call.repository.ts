import type { DataSource } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import type { Sql } from '../lib/pagination.js';
import { column, rowShape } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';

/** An entry of a do-not-call list as the API shows it (CONTRACT.md §4): the one declaration of its fields. */
export const doNotCallShape = rowShape('do_not_call_entries', {
  id: column<string>(),
  phone_number: column<string>(),
  reason: column<string | null>(),
  created_at: column<Date>(),
});

/**
 * THE do-not-call rule, in SQL: whether the number `phoneNumber` is on the list of the
 * organization `orgId` or, for a tenant, on its reseller's (both are SQL expressions of the
 * caller's statement). Everything that decides whether a number may be called uses it: the
 * engine before it dials (`CallsRepository.barredAmong`, one statement per batch) and campaigns
 * before they place a call (`DoNotCallRepository.listedAmong`). It reads the organization's
 * `parent_id` (its reseller) in the same statement, and probes the (org_id, phone_number) index.
 */
export const onDoNotCallListSql = (orgId: string, phoneNumber: string) =>
  `EXISTS (SELECT 1 FROM do_not_call_entries dnc
            WHERE dnc.phone_number = ${phoneNumber}
              AND dnc.org_id IN (${orgId}, (SELECT o.parent_id FROM organizations o WHERE o.id = ${orgId})))`;

/**
 * The organization's do-not-call list (`/v1/do-not-call`): a number at most once per
 * organization (409 `already_listed`); lists filter by `phone_number`. Inside a tenant it is the
 * tenant's own list; its reseller's list applies to the tenant's calls as well, but is not shown.
 */
export class DoNotCallRepository extends OrgResourceRepository<typeof doNotCallShape.columns, 'phone_number'> {
  constructor(db: DataSource) {
    super(db, {
      shape: doNotCallShape,
      resource: 'do_not_call_entry',
      idPrefix: 'dnc',
      filters: ['phone_number'],
      conflicts: {
        do_not_call_entries_org_phone_key: () => new ConflictError('already_listed', 'This number is already on the do-not-call list.'),
      },
    });
  }

  /** Those of `phoneNumbers` that organization `orgId` may not call (its list or its reseller's), in one statement. */
  async listedAmong(sql: Sql, orgId: string, phoneNumbers: string[]): Promise<Set<string>> {
    if (phoneNumbers.length === 0) return new Set();
    const rows: Array<{ phone_number: string }> = await sql.query(
      `SELECT n.phone_number FROM unnest($2::varchar[]) AS n(phone_number) WHERE ${onDoNotCallListSql('$1::varchar', 'n.phone_number')}`,
      [orgId, phoneNumbers],
    );
    return new Set(rows.map((r) => r.phone_number));
  }
}
