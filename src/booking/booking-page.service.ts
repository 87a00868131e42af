import type { Actor } from '../auth/actor.js';
import { db } from '../lib/db.js';
import { NotFoundError } from '../lib/errors.js';
import type { Organization } from '../orgs/organization.entity.js';
import { changeOrganization, loadOrganization } from '../orgs/organization.service.js';
import type { BookingPageChanges } from './booking-page.schemas.js';

export interface BookingPageView {
  enabled: boolean;
  headline: string | null;
  /** The public page's path, or null for a tenant, which never has one. */
  url: string | null;
}

/** Where an organization's public page lives. */
export const bookingPageUrl = (orgId: string) => `/book/${orgId}`;

/** A tenant never gets a public booking page (SPEC.md §1). */
const isTenant = (org: Pick<Organization, 'parentId'>) => org.parentId !== null;

const presentBookingPage = (org: Organization): BookingPageView =>
  isTenant(org)
    ? { enabled: false, headline: org.bookingPageHeadline, url: null }
    : { enabled: org.bookingPageEnabled, headline: org.bookingPageHeadline, url: bookingPageUrl(org.id) };

/** `GET /v1/booking-page`: the acting organization's booking page settings. */
export async function readBookingPage(actor: Actor): Promise<BookingPageView> {
  return presentBookingPage(await loadOrganization(db.manager, actor.org.id));
}

/** Turns the page on or off, or changes its headline (never inside a tenant: see the route). */
export async function updateBookingPage(actor: Actor, input: BookingPageChanges): Promise<BookingPageView> {
  const changes: Partial<Organization> = {};
  if (input.enabled !== undefined) changes.bookingPageEnabled = input.enabled;
  if (input.headline !== undefined) changes.bookingPageHeadline = input.headline;
  return presentBookingPage(await changeOrganization(db.manager, actor.org.id, changes));
}

/** What the public page shows. Strings are the organization's own: escape them when rendering. */
export interface PublicBookingPage {
  headline: string;
  services: { name: string; description: string; duration_minutes: number }[];
  locations: { name: string; address: string }[];
}

/** The most services and locations a page lists. */
const PAGE_ITEMS = 200;

/**
 * The public page of an ordinary organization that has it enabled; anything else (no such
 * organization, the page turned off, a tenant) is the same 404, so the page reveals nothing.
 */
export async function publicBookingPage(orgId: string): Promise<PublicBookingPage> {
  const [org] = await db.query(
    `SELECT id, name, booking_page_headline FROM organizations
      WHERE id = $1 AND parent_id IS NULL AND booking_page_enabled`,
    [orgId],
  );
  if (!org) throw new NotFoundError('booking_page');
  const [services, locations] = await Promise.all([
    db.query(
      `SELECT name, description, duration_minutes FROM services WHERE org_id = $1 ORDER BY name, id LIMIT ${PAGE_ITEMS}`,
      [orgId],
    ),
    db.query(`SELECT name, address FROM locations WHERE org_id = $1 ORDER BY is_main DESC, name, id LIMIT ${PAGE_ITEMS}`, [orgId]),
  ]);
  return { headline: org.booking_page_headline ?? org.name, services, locations };
}
