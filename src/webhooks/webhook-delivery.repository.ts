import type pg from 'pg';
import type { DeliveryTarget } from './delivery-request.js';

/** An attempt as stage 3 records it, with what stage 4 decided. */
export interface RecordedAttempt {
  deliveryId: string;
  endpointId: string;
  attemptId: string;
  attemptedAt: Date;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  status: 'succeeded' | 'retrying' | 'failed';
  nextAttemptAt: Date | null;
  /** The endpoint answered 410 Gone: it is disabled now. */
  endpointGone: boolean;
}

/**
 * The due state of the deliveries of endpoints `$1` after they were disabled or enabled (see
 * `pauseOrResume`); the API runs it in the transaction of a PATCH that changes `disabled`.
 */
export const PAUSE_OR_RESUME = `UPDATE webhook_deliveries d SET next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE now() END
   FROM webhook_endpoints w
  WHERE w.id = d.endpoint_id AND d.endpoint_id = ANY($1) AND d.status IN ('pending', 'retrying')
    AND (w.disabled OR d.next_attempt_at IS NULL)`;

/** The columns an attempt needs, selected with the delivery, its endpoint and its event. */
const TARGET = `w.url, w.secret, w.field_aliases, w.extra_payload, w.custom_headers, ev.payload, ev.created_at AS event_created_at`;

/**
 * Every statement of the delivery path (SPEC.md §6, CONTRACT.md "Webhook delivery"), on a pg
 * pool of its own: named statements, planned once per connection, one round trip each.
 * Postgres is the delivery queue: a delivery is due when `status` is pending or retrying and
 * `next_attempt_at` has passed; claiming one moves `next_attempt_at` past the attempt (a
 * lease), so a worker that dies mid-attempt leaves it due again when the lease ends. A
 * delivery of a disabled endpoint waits with `next_attempt_at` null until it is enabled.
 */
export class WebhookDeliveryRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Endpoints with open (pending or retrying) deliveries, in id order after `after`, at most
   * `limit`: a loose index scan, one probe per endpoint however many deliveries each has.
   */
  async openEndpoints(after: string, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ endpoint_id: string }>({
      name: 'webhook_open_endpoints',
      text: `WITH RECURSIVE e(endpoint_id, n) AS (
               (SELECT endpoint_id, 1 FROM webhook_deliveries
                 WHERE status IN ('pending', 'retrying') AND endpoint_id > $1 ORDER BY endpoint_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                        WHERE d.status IN ('pending', 'retrying') AND d.endpoint_id > e.endpoint_id ORDER BY d.endpoint_id LIMIT 1), e.n + 1
                 FROM e WHERE e.endpoint_id IS NOT NULL AND e.n < $2
             )
             SELECT endpoint_id FROM e WHERE endpoint_id IS NOT NULL`,
      values: [after, limit],
    });
    return rows.map((r) => r.endpoint_id);
  }

  /**
   * Claims, for each endpoint asked, up to its `quota` of due deliveries, oldest due first
   * (one index probe per endpoint: a long backlog costs nothing to the claims of others),
   * leasing each for `leaseSeconds`; a disabled endpoint's are left alone. Rows another
   * worker holds are skipped. Returns what their attempts need.
   */
  async claimDue(wanted: Array<{ endpointId: string; quota: number }>, leaseSeconds: number): Promise<DeliveryTarget[]> {
    if (wanted.length === 0) return [];
    const { rows } = await this.pool.query<DeliveryTarget>({
      name: 'webhook_claim_due',
      text: `WITH mine AS (
               SELECT due.id FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
                 JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled
                 CROSS JOIN LATERAL (
                   SELECT d.id FROM webhook_deliveries d
                    WHERE d.endpoint_id = want.endpoint_id AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
                    ORDER BY d.next_attempt_at LIMIT want.quota
                    FOR UPDATE OF d SKIP LOCKED
                 ) due
             ), claimed AS (
               UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $3)
                 FROM mine WHERE d.id = mine.id
               RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count
             )
             SELECT c.id AS delivery_id, c.attempt_count, c.endpoint_id, ${TARGET}
               FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN call_events ev ON ev.id = c.event_id`,
      values: [wanted.map((w) => w.endpointId), wanted.map((w) => w.quota), leaseSeconds],
    });
    return rows;
  }

  /** One delivery for a support retry, whatever its status, with its status now. */
  async findTarget(deliveryId: string): Promise<(DeliveryTarget & { status: string; event: string }) | null> {
    const { rows } = await this.pool.query<DeliveryTarget & { status: string; event: string }>({
      name: 'webhook_find_target',
      text: `SELECT d.id AS delivery_id, d.attempt_count, d.endpoint_id, d.status, d.event, ${TARGET}
               FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN call_events ev ON ev.id = d.event_id
              WHERE d.id = $1`,
      values: [deliveryId],
    });
    return rows[0] ?? null;
  }

  /**
   * Records a batch of attempts in one statement: each attempt row, each delivery's new state,
   * and each endpoint's failure streak (ended by any success in the batch; begun by a failure;
   * past `disableAfterHours`, or on 410 Gone, the endpoint is disabled). Returns the endpoints
   * this batch disabled.
   */
  async record(attempts: RecordedAttempt[], disableAfterHours: number): Promise<string[]> {
    if (attempts.length === 0) return [];
    const succeeded = new Set(attempts.filter((a) => a.status === 'succeeded').map((a) => a.endpointId));
    const failing = new Map<string, { since: Date; gone: boolean }>();
    for (const a of attempts) {
      if (a.status === 'succeeded' || succeeded.has(a.endpointId)) continue;
      const seen = failing.get(a.endpointId);
      failing.set(a.endpointId, { since: seen && seen.since < a.attemptedAt ? seen.since : a.attemptedAt, gone: (seen?.gone ?? false) || a.endpointGone });
    }
    const column = <K extends keyof RecordedAttempt>(key: K) => attempts.map((a) => a[key]);
    const { rows } = await this.pool.query<{ disabled: string[] }>({
      name: 'webhook_record_attempts',
      text: `WITH o AS (
               SELECT * FROM unnest($1::varchar[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::varchar[], $7::varchar[], $8::varchar[], $9::timestamptz[])
                 AS o(delivery_id, attempt_id, attempted_at, response_status, duration_ms, error, response_body, status, next_attempt_at)
             ), deliveries AS (
               UPDATE webhook_deliveries d
                  SET status = o.status, attempt_count = d.attempt_count + 1,
                      next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE o.next_attempt_at END,
                      last_response_status = o.response_status, updated_at = now()
                 FROM o, webhook_endpoints w
                WHERE d.id = o.delivery_id AND w.id = d.endpoint_id
               RETURNING d.id
             ), attempts AS (
               INSERT INTO webhook_attempts (id, delivery_id, attempted_at, response_status, duration_ms, error, response_body)
               SELECT o.attempt_id, o.delivery_id, o.attempted_at, o.response_status, o.duration_ms, o.error, o.response_body
                 FROM o JOIN deliveries ON deliveries.id = o.delivery_id
             ), recovered AS (
               UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($10::varchar[]) AND failing_since IS NOT NULL
             ), failing AS (
               UPDATE webhook_endpoints w
                  SET failing_since = COALESCE(w.failing_since, f.since),
                      disabled = w.disabled OR f.gone OR COALESCE(w.failing_since, f.since) <= now() - make_interval(secs => $14)
                 FROM unnest($11::varchar[], $12::timestamptz[], $13::bool[]) AS f(id, since, gone)
                WHERE w.id = f.id
               RETURNING w.id, w.disabled, f.gone
             )
             SELECT COALESCE(array_agg(id), '{}') AS disabled FROM failing WHERE disabled`,
      values: [
        column('deliveryId'),
        column('attemptId'),
        column('attemptedAt'),
        column('responseStatus'),
        column('durationMs'),
        column('error'),
        column('responseBody'),
        column('status'),
        column('nextAttemptAt'),
        [...succeeded],
        [...failing.keys()],
        [...failing.values()].map((f) => f.since),
        [...failing.values()].map((f) => f.gone),
        disableAfterHours * 3600,
      ],
    });
    return rows[0].disabled;
  }

  /** Gives back leases of deliveries claimed but never attempted (a worker stopping): due again now. */
  async release(deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    await this.pool.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = ANY($1) AND status IN ('pending', 'retrying')`, [deliveryIds]);
  }

  /**
   * The deliveries of disabled endpoints wait, not due (next_attempt_at null), so they cost the
   * claims nothing; those of enabled ones are due again at once.
   */
  async pauseOrResume(endpointIds: string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.pool.query(PAUSE_OR_RESUME, [endpointIds]);
  }
}
