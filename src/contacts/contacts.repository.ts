import type { DataSource, EntityManager } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';
import type { Reads } from '../lib/reads.js';

/** The one declaration of a contact's fields. */
export const contactShape = rowShape('contacts', {
  id: column<string>(),
  name: column<string>(),
  phone_number: column<string>(),
  email: column<string | null>(),
  metadata: column<Record<string, unknown>>(),
  created_at: column<Date>(),
  updated_at: column<Date>(),
});

export type ContactRow = RowOf<typeof contactShape.columns>;
export type ContactView = Presented<ContactRow>;

/** One per phone number within an organization (409 `contact_exists`); one a campaign holds cannot be deleted. */
export class ContactsRepository extends OrgResourceRepository<typeof contactShape.columns, 'phone_number'> {
  constructor(db: DataSource, reads?: Reads) {
    super(
      db,
      {
        shape: contactShape,
        resource: 'contact',
        idPrefix: 'con',
        filters: ['phone_number'],
        conflicts: {
          contacts_org_phone_key: () => new ConflictError('contact_exists', 'The organization already has a contact with this phone number.'),
        },
        inUse: () => new ConflictError('contact_in_use', 'A campaign holds this contact; remove it from the campaign first.'),
      },
      reads,
    );
  }

  async unknownContact(em: EntityManager, orgId: string, ids: string[]): Promise<string | undefined> {
    const found: Array<{ id: string }> = await em.query(`SELECT id FROM ${contactShape.from()} WHERE org_id = $1 AND id = ANY($2)`, [orgId, ids]);
    const known = new Set(found.map((r) => r.id));
    return ids.find((id) => !known.has(id));
  }

  async numbersOf(em: EntityManager, orgId: string, ids: string[]): Promise<Map<string, string>> {
    const rows: Array<{ id: string; phone_number: string }> = await em.query(
      `SELECT id, phone_number FROM ${contactShape.from()} WHERE org_id = $1 AND id = ANY($2)`,
      [orgId, ids],
    );
    return new Map(rows.map((r) => [r.id, r.phone_number]));
  }

  async idByNumber(em: EntityManager, orgId: string, phoneNumber: string): Promise<string | null> {
    const [row] = await em.query<Array<{ id: string }>>(`SELECT id FROM ${contactShape.from()} WHERE org_id = $1 AND phone_number = $2`, [orgId, phoneNumber]);
    return row?.id ?? null;
  }
}
