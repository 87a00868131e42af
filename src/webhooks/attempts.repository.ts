import type pg from 'pg';
import type { OperationalEventType } from '../events/event-types.js';
import { insertOperationalEvents } from '../events/events.repository.js';
import { inRange, spanning } from '../history/history-range.js';
import { newId } from '../lib/ids.js';
import { pauseOrResume } from './delivery-log.repository.js';

/** An attempt as stage 3 records it, with what stage 4 decided. */
export interface RecordedAttempt {
  deliveryId: string;
  /** The delivery's `created_at` (the partition key), so that recording reads only its day. */
  deliveryCreatedAt: Date;
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
 * How an endpoint's failed attempts of one batch count: the start of its failure streak, whether
 * it answered 410 Gone, the error that would disable it (the 410's, else the latest), and the
 * id of the `webhook_endpoint.disabled` event, should this batch disable it.
 */
interface Failing {
  since: Date;
  gone: boolean;
  lastAt: Date;
  lastError: string | null;
  eventId: string;
}

/** One endpoint's failed attempts of a batch, folded into `Failing` in any order. */
function foldFailing(seen: Failing | undefined, a: RecordedAttempt): Failing {
  if (!seen) return { since: a.attemptedAt, gone: a.endpointGone, lastAt: a.attemptedAt, lastError: a.error, eventId: newId('evt') };
  const later = a.attemptedAt >= seen.lastAt;
  const reported = a.endpointGone || (later && !seen.gone);
  return {
    since: seen.since < a.attemptedAt ? seen.since : a.attemptedAt,
    gone: seen.gone || a.endpointGone,
    lastAt: later ? a.attemptedAt : seen.lastAt,
    lastError: reported ? a.error : seen.lastError,
    eventId: seen.eventId,
  };
}

const ENDPOINT_DISABLED: OperationalEventType = 'webhook_endpoint.disabled';

/** Records attempts (see AttemptRecorder, which batches them), on the webhooks workers' pool. */
export class AttemptsRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Records a batch of attempts in one statement: each attempt row, each delivery's new state,
   * and each endpoint's failure streak (ended by any success in the batch; begun by a failure;
   * past `disableAfterHours`, or on 410 Gone, the endpoint is disabled). An endpoint this batch
   * disables gets its `webhook_endpoint.disabled` event (reason `gone` or `failing`, and the
   * last error) in the same statement: the change and its event commit together. Endpoints that
   * were disabled already (by another worker meanwhile, or by hand) get none: their rows are
   * locked first and read as they are then. Returns the endpoints of the batch now disabled, whose other deliveries it pauses.
   */
  async record(attempts: RecordedAttempt[], disableAfterHours: number): Promise<string[]> {
    if (attempts.length === 0) return [];
    const succeeded = new Set(attempts.filter((a) => a.status === 'succeeded').map((a) => a.endpointId));
    const failing = new Map<string, Failing>();
    for (const a of attempts) {
      if (a.status === 'succeeded' || succeeded.has(a.endpointId)) continue;
      failing.set(a.endpointId, foldFailing(failing.get(a.endpointId), a));
    }
    const column = <K extends keyof RecordedAttempt>(key: K) => attempts.map((a) => a[key]);
    const batch = spanning(column('deliveryCreatedAt'));
    const { rows } = await this.pool.query<{ disabled: string[] }>({
      name: 'webhook_record_attempts',
      text: `WITH o AS (
               SELECT * FROM unnest($1::varchar[], $2::timestamptz[], $3::uuid[], $4::timestamptz[], $5::int[], $6::int[], $7::varchar[], $8::varchar[], $9::varchar[], $10::timestamptz[])
                 AS o(delivery_id, delivery_created_at, attempt_id, attempted_at, response_status, duration_ms, error, response_body, status, next_attempt_at)
             ), deliveries AS (
               UPDATE webhook_deliveries d
                  SET status = o.status, attempt_count = d.attempt_count + 1,
                      next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE o.next_attempt_at END,
                      last_response_status = o.response_status, updated_at = now()
                 FROM o, webhook_endpoints w
                WHERE d.id = o.delivery_id AND d.created_at = o.delivery_created_at AND ${inRange('d.created_at', '$11', '$12')} AND w.id = d.endpoint_id
               RETURNING d.id
             ), attempts AS (
               INSERT INTO webhook_attempts (id, delivery_id, delivery_created_at, attempted_at, response_status, duration_ms, error, response_body)
               SELECT o.attempt_id, o.delivery_id, o.delivery_created_at, o.attempted_at, o.response_status, o.duration_ms, o.error, o.response_body
                 FROM o JOIN deliveries ON deliveries.id = o.delivery_id
             ), recovered AS (
               UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($13::varchar[]) AND failing_since IS NOT NULL
             ), was AS (
               -- Locked in id order, and read as they are once locked (the latest committed state).
               SELECT id, disabled FROM webhook_endpoints WHERE id = ANY($14::varchar[]) ORDER BY id FOR UPDATE
             ), failing AS (
               UPDATE webhook_endpoints w
                  SET failing_since = COALESCE(w.failing_since, f.since),
                      disabled = w.disabled OR f.gone OR COALESCE(w.failing_since, f.since) <= now() - make_interval(secs => $17)
                 FROM unnest($14::varchar[], $15::timestamptz[], $16::bool[], $18::varchar[], $19::varchar[]) AS f(id, since, gone, last_error, event_id), was
                WHERE w.id = f.id AND was.id = f.id
               RETURNING w.id, w.org_id, w.disabled, w.disabled AND NOT was.disabled AS newly, f.gone, f.last_error, f.event_id
             ), events AS (
               ${insertOperationalEvents(
                 `SELECT event_id, org_id, '${ENDPOINT_DISABLED}', jsonb_build_object('endpoint_id', id, 'reason', CASE WHEN gone THEN 'gone' ELSE 'failing' END, 'last_error', last_error), now()
                    FROM failing WHERE newly`,
               )}
             )
             SELECT COALESCE(array_agg(id), '{}') AS disabled FROM failing WHERE disabled`,
      values: [
        column('deliveryId'),
        column('deliveryCreatedAt'),
        column('attemptId'),
        column('attemptedAt'),
        column('responseStatus'),
        column('durationMs'),
        column('error'),
        column('responseBody'),
        column('status'),
        column('nextAttemptAt'),
        batch.from,
        batch.to,
        [...succeeded],
        [...failing.keys()],
        [...failing.values()].map((f) => f.since),
        [...failing.values()].map((f) => f.gone),
        disableAfterHours * 3600,
        [...failing.values()].map((f) => f.lastError),
        [...failing.values()].map((f) => f.eventId),
      ],
    });
    const { disabled } = rows[0];
    // A disabled endpoint's other deliveries wait, not due, until it is enabled again.
    await pauseOrResume(this.pool, disabled);
    return disabled;
  }
}
