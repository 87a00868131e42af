import type { DataSource } from 'typeorm';
import type { LocationRow } from './locations.repository.js';
import type { ServiceRow } from './services.repository.js';

/** What a public page offers: the organization's services and where. */
export interface BookingOffer {
  services: Pick<ServiceRow, 'name' | 'description' | 'duration_minutes'>[];
  locations: Pick<LocationRow, 'name' | 'address'>[];
}

/** What an organization offers, read without a credential. */
export class BookingPageRepository {
  constructor(private readonly db: DataSource) {}

  async findOffer(orgId: string, limit: number): Promise<BookingOffer> {
    const [services, locations] = await Promise.all([
      this.db.query<BookingOffer['services']>(`SELECT name, description, duration_minutes FROM services WHERE org_id = $1 ORDER BY name, id LIMIT $2`, [
        orgId,
        limit,
      ]),
      this.db.query<BookingOffer['locations']>(`SELECT name, address FROM locations WHERE org_id = $1 ORDER BY is_main DESC, name, id LIMIT $2`, [
        orgId,
        limit,
      ]),
    ]);
    return { services, locations };
  }
}
