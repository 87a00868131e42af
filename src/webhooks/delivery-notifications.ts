import type { Sql } from '../lib/pagination.js';

/** NOTIFY channel telling webhooks workers deliveries are due; they poll too, so a missed one costs a poll. */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

/** Below Postgres's 8,000-byte NOTIFY payload limit. */
const MAX_PAYLOAD = 7_000;

/** Comma-separated endpoint ids, so a worker whose lanes for them are full need not claim; `*` when too many. */
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
