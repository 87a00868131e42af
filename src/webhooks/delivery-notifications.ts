import type { Sql } from '../lib/pagination.js';

/**
 * The NOTIFY channel that tells the webhooks workers deliveries are due: the relay after a
 * fan-out, support's tools after making failed deliveries due again, the API after enabling an
 * endpoint. The workers LISTEN on it and poll besides, so a missed notification costs a poll.
 */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** Postgres refuses NOTIFY payloads of 8,000 bytes and more. */
const MAX_PAYLOAD = 7_000;

/**
 * A notification's payload: the endpoints that have new deliveries, comma-separated, so a
 * worker whose lanes for them are full need not look; `*` (look) when they are too many to list.
 */
export function notifyPayload(endpointIds: string[]): string {
  const listed = [...new Set(endpointIds)].join(',');
  return listed.length > MAX_PAYLOAD ? '*' : listed;
}

/** The endpoints a notification names; null: look at every endpoint. */
export const notifiedEndpoints = (payload: string): string[] | null => (payload === '' || payload === '*' ? null : payload.split(','));

/** Tells the webhooks workers deliveries are due, committed with `sql`'s transaction if it is one; empty `payload`: look. */
export async function notifyDeliveries(sql: Sql, payload = ''): Promise<void> {
  await sql.query(`SELECT pg_notify($1, $2)`, [DELIVERIES_CHANNEL, payload]);
}
