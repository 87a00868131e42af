import type { DataSource } from 'typeorm';
import { ConflictError } from '../lib/errors.js';
import { column, rowShape, type Presented, type RowOf } from '../lib/sql.js';
import { OrgResourceRepository } from '../orgs/org-resource.repository.js';

/** A contact's row: the one declaration of its fields (the API shows it with ISO times). */
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

/**
 * The organization's contacts: one per phone number within an organization (409
 * `contact_exists`); a contact a campaign holds cannot be deleted (409 `contact_in_use`).
 * Lists filter by `phone_number`.
 */
export class ContactsRepository extends OrgResourceRepository<typeof contactShape.columns, 'phone_number'> {
  constructor(db: DataSource) {
    super(db, {
      shape: contactShape,
      resource: 'contact',
      idPrefix: 'con',
      filters: ['phone_number'],
      conflicts: {
        contacts_org_phone_key: () => new ConflictError('contact_exists', 'The organization already has a contact with this phone number.'),
      },
      inUse: () => new ConflictError('contact_in_use', 'A campaign holds this contact; remove it from the campaign first.'),
    });
  }
}
