import { ConflictError } from '../lib/errors.js';
import { OrgResourceTable } from '../orgs/org-resource-table.js';
import { Contact } from './contact.entity.js';
import type { ContactInput, ContactsQuery } from './contacts.schemas.js';

export interface ContactView {
  id: string;
  name: string;
  phone_number: string;
  email: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface ContactRow {
  id: string;
  name: string;
  phone_number: string;
  email: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const presentContact = (row: ContactRow): ContactView => ({
  id: row.id,
  name: row.name,
  phone_number: row.phone_number,
  email: row.email,
  metadata: row.metadata,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

/**
 * The organization's contacts: one per phone number within an organization (409
 * `contact_exists`); a contact a campaign holds cannot be deleted (409 `contact_in_use`).
 */
export const contactsService = new OrgResourceTable<Contact, ContactRow, ContactView, ContactInput, Partial<ContactInput>, ContactsQuery>({
  entity: Contact,
  table: 'contacts',
  resource: 'contact',
  idPrefix: 'con',
  columns: 'id, name, phone_number, email, metadata, created_at, updated_at',
  present: presentContact,
  fields: { name: 'name', phone_number: 'phoneNumber', email: 'email', metadata: 'metadata' },
  filters: ['phone_number'],
  conflicts: {
    contacts_org_phone_key: () => new ConflictError('contact_exists', 'The organization already has a contact with this phone number.'),
  },
  inUse: () => new ConflictError('contact_in_use', 'A campaign holds this contact; remove it from the campaign first.'),
});
