import type { DataSource } from 'typeorm';
import type { Actor } from '../auth/actor.js';
import { NotFoundError } from '../lib/errors.js';
import { isTenant, type Organization } from '../orgs/organization.entity.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { BookingOffer, BookingPageRepository } from './booking-page.repository.js';
import type { BookingPageChanges } from './booking-page.schemas.js';

export interface BookingPageView {
  enabled: boolean;
  headline: string | null;
  /** The public page's path, or null for a tenant, which never has one. */
  url: string | null;
}

export const bookingPageUrl = (orgId: string) => `/book/${orgId}`;

const presentBookingPage = (org: Organization): BookingPageView =>
  isTenant(org)
    ? { enabled: false, headline: org.bookingPageHeadline, url: null }
    : { enabled: org.bookingPageEnabled, headline: org.bookingPageHeadline, url: bookingPageUrl(org.id) };

/** What the public page shows. Strings are the organization's own: escape them when rendering. */
export type PublicBookingPage = BookingOffer & { headline: string };

const PAGE_ITEMS = 200;

/** The booking page's settings (kept on the organization) and the public page. */
export class BookingPageService {
  constructor(
    private readonly db: DataSource,
    private readonly pages: BookingPageRepository,
    private readonly orgs: OrganizationsRepository,
  ) {}

  async read(actor: Actor): Promise<BookingPageView> {
    return presentBookingPage(await this.orgs.load(this.db.manager, actor.org.id));
  }

  async update(actor: Actor, input: BookingPageChanges): Promise<BookingPageView> {
    const changes: Partial<Organization> = {};
    if (input.enabled !== undefined) changes.bookingPageEnabled = input.enabled;
    if (input.headline !== undefined) changes.bookingPageHeadline = input.headline;
    return presentBookingPage(await this.orgs.update(this.db.manager, actor.org.id, changes));
  }

  /** Any page not shown (no such organization, turned off, a tenant) is the same 404: the page reveals nothing. */
  async publicPage(orgId: string): Promise<PublicBookingPage> {
    const org = await this.orgs.find(this.db.manager, orgId);
    if (!org || isTenant(org) || !org.bookingPageEnabled) throw new NotFoundError('booking_page');
    return { ...(await this.pages.findOffer(orgId, PAGE_ITEMS)), headline: org.bookingPageHeadline ?? org.name };
  }
}
