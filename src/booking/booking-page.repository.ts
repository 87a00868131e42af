import type { DataSource } from 'typeorm';
import type { LocationRow } from './locations.repository.js';
import type { ServiceRow } from './services.repository.js';

/** What the public page shows of an organization: its name, its headline, what it offers and where. */
export interface PublishedPage {
  name: string;
  headline: string | null;
  services: Pick<ServiceRow, 'name' | 'description' | 'duration_minutes'>[];
  locations: Pick<LocationRow, 'name' | 'address'>[];
}

/** The public booking pages: what an organization publishes, read without a credential. */
export class BookingPageRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * The page of an ordinary organization (never a tenant's: SPEC.md §1) that has it enabled,
   * with at most `limit` services (by name) and locations (the main one first); null for any
   * other id.
   */
  async findPublished(orgId: string, limit: number): Promise<PublishedPage | null> {
    const [org] = await this.db.query(
      `SELECT name, booking_page_headline AS headline FROM organizations
        WHERE id = $1 AND parent_id IS NULL AND booking_page_enabled`,
      [orgId],
    );
    if (!org) return null;
    const [services, locations] = await Promise.all([
      this.db.query(`SELECT name, description, duration_minutes FROM services WHERE org_id = $1 ORDER BY name, id LIMIT $2`, [orgId, limit]),
      this.db.query(`SELECT name, address FROM locations WHERE org_id = $1 ORDER BY is_main DESC, name, id LIMIT $2`, [orgId, limit]),
    ]);
    return { ...org, services, locations };
  }
}
