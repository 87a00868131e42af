import type pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import type { OperationalEventType } from '../events/event-types.js';
import { insertOperationalEvents } from '../events/events.repository.js';
import { daysOf, dayStart, rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import { newId } from '../lib/ids.js';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, presentRow, rowShape, where, type Presented, type RowOf, type Where } from '../lib/sql.js';
import type { DeliveryTarget } from './delivery-request.js';
import type { DeliveryFilters } from './webhook-deliveries.schemas.js';

/** The channel told of deliveries due now (the webhooks workers LISTEN on it; see `DeliveryLogRepository.notify`). */
export const DELIVERIES_CHANNEL = 'webhook_deliveries';

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
 * The due state of the deliveries of endpoints `$1` after they were disabled or enabled (see
 * `pauseOrResume`); the API runs it in the transaction of a PATCH that changes `disabled`.
 */
const PAUSE_OR_RESUME = `UPDATE webhook_deliveries d SET next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE now() END
   FROM webhook_endpoints w
  WHERE w.id = d.endpoint_id AND d.endpoint_id = ANY($1) AND d.status IN ('pending', 'retrying')
    AND (w.disabled OR d.next_attempt_at IS NULL)`;

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

/**
 * The columns an attempt needs, selected with the delivery, its endpoint and its event. The
 * previous secret of a rotation only while its overlap runs (the attempt checks its expiry
 * again when it is made).
 */
const TARGET = `w.url, w.secret, w.field_aliases, w.extra_payload, w.custom_headers, ev.payload,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at`;

/**
 * How far ahead a claim hands out send slots of a rate-limited endpoint, in seconds: it takes
 * only deliveries whose slot starts within this much of now, so none is leased long before it
 * can go, and the next claims (the workers poll every 500 ms) take the slots after.
 */
export const PACE_HORIZON_SECONDS = 1;

/** An endpoint the scan found with open deliveries; `paced`: it has a rate limit. */
export interface OpenEndpoint {
  id: string;
  paced: boolean;
}

/** What a claim asks for: up to `quota` due deliveries of each endpoint. */
export type ClaimWanted = Array<{ endpointId: string; quota: number }>;

/** The due deliveries (as `d`) of the endpoint `endpoint` (SQL), in the claim's range ($4, $5). */
const DUE_OF = (endpoint: string) =>
  `d.endpoint_id = ${endpoint} AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() AND d.created_at >= $4 AND d.created_at <= $5`;

/**
 * A claim statement: `mine` (a CTE, after the ones it needs) chooses and locks deliveries (id,
 * created_at, send_at); they are leased for $3 seconds and what their attempts need is
 * selected, each send slot as a wait from the end of the statement (not its start, now(), so
 * how long it ran does not move the slots). `after` adds CTEs that read `claimed`.
 */
const claimStatement = (mine: string, after = '') => `WITH ${mine}, claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $3)
      FROM mine WHERE d.id = mine.id AND d.created_at = mine.created_at AND d.created_at >= $4 AND d.created_at <= $5
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.created_at, mine.send_at
  )${after}
  SELECT c.id AS delivery_id, c.attempt_count, c.endpoint_id, c.created_at,
         ceil(extract(epoch FROM c.send_at - clock_timestamp()) * 1000)::int AS wait_ms, ${TARGET}
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
    JOIN call_events ev ON ev.id = c.event_id AND ev.created_at = c.created_at AND ev.created_at >= $4 AND ev.created_at <= $5`;

/** `claimDue`: endpoints without a rate limit. */
const CLAIM_DUE = claimStatement(`mine AS (
    SELECT due.id, due.created_at, NULL::timestamptz AS send_at FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
      JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled AND w.rate_limit_per_second IS NULL
      CROSS JOIN LATERAL (
        SELECT d.id, d.created_at FROM webhook_deliveries d
         WHERE ${DUE_OF('want.endpoint_id')}
         ORDER BY d.next_attempt_at LIMIT want.quota
         FOR UPDATE OF d SKIP LOCKED
      ) due
  )`);

/** `claimPaced`: rate-limited endpoints, locked, their send slots within the horizon ($6). */
const CLAIM_PACED = claimStatement(
  `paced AS (
    SELECT w.id, want.quota, w.rate_limit_per_second AS rate, greatest(w.paced_until, now()) AS start
      FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
      JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled AND w.rate_limit_per_second IS NOT NULL
       FOR UPDATE OF w SKIP LOCKED
  ), mine AS (
    SELECT due.id, due.created_at,
           p.start + make_interval(secs => (row_number() OVER (PARTITION BY p.id ORDER BY due.next_attempt_at) - 1) / p.rate::float8) AS send_at
      FROM paced p CROSS JOIN LATERAL (
        SELECT d.id, d.created_at, d.next_attempt_at FROM webhook_deliveries d
         WHERE ${DUE_OF('p.id')}
         ORDER BY d.next_attempt_at
         -- The slots that start within the horizon.
         LIMIT least(p.quota, greatest(0, ceil(extract(epoch FROM now() + make_interval(secs => $6) - p.start) * p.rate)))::int
         FOR UPDATE OF d SKIP LOCKED
      ) due
  )`,
  `, paced_on AS (
    UPDATE webhook_endpoints w SET paced_until = p.start + make_interval(secs => taken.n / p.rate::float8)
      FROM paced p CROSS JOIN LATERAL (SELECT count(*) AS n FROM claimed c WHERE c.endpoint_id = p.id) taken
     WHERE w.id = p.id AND taken.n > 0
  )`,
);

/**
 * Every statement of the delivery path (SPEC.md §6, CONTRACT.md "Webhook delivery"), on a pg
 * pool of its own: named statements, parsed once per connection (Postgres still plans each
 * execution, pruning the partitions by the range given: generic plans are never chosen), one
 * round trip each.
 * Postgres is the delivery queue: a delivery is due when `status` is pending or retrying and
 * `next_attempt_at` has passed; claiming one moves `next_attempt_at` past the attempt (a
 * lease), so a worker that dies mid-attempt leaves it due again when the lease ends. A
 * delivery of a disabled endpoint waits with `next_attempt_at` null until it is enabled.
 * Every statement names the range of `created_at` its deliveries can be in (see HistoryRange),
 * so that it reads only those days' partitions.
 */
export class WebhookDeliveryRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Where open (pending or retrying) deliveries are, among those `retained`: from the first
   * day holding one (or today, when none does) to now. One probe per day, each reading that
   * day's partition alone (its index of open deliveries), so the claims that follow read only
   * the days from there on. A delivery made open in an earlier day later (a recovery) is
   * claimed once the range is looked up again.
   */
  async openRange(retained: HistoryRange): Promise<HistoryRange> {
    const days = daysOf(retained);
    const { rows } = await this.pool.query<{ since: Date | null }>({
      name: 'webhook_open_range',
      text: `SELECT min(day.start) AS since
               FROM unnest($1::timestamptz[], $2::timestamptz[]) AS day(start, next)
              CROSS JOIN LATERAL (
                -- In the order of the index of open deliveries, so that even a day without
                -- statistics yet is probed through it, not read whole.
                SELECT 1 FROM webhook_deliveries d
                 WHERE d.status IN ('pending', 'retrying') AND d.created_at >= day.start AND d.created_at < day.next
                 ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1
              ) open`,
      values: [days.map((d) => d.start), days.map((d) => d.end)],
    });
    return rangeFrom(rows[0].since ?? dayStart(new Date()));
  }

  /**
   * Endpoints with open (pending or retrying) deliveries in `range`, in id order after
   * `after`, at most `limit`: a loose index scan, one probe per endpoint (and day) however
   * many deliveries each has. `paced`: the endpoint has a rate limit (its claims are
   * `claimPaced`'s).
   */
  async openEndpoints(after: string, limit: number, range: HistoryRange): Promise<OpenEndpoint[]> {
    const { rows } = await this.pool.query<OpenEndpoint>({
      name: 'webhook_open_endpoints',
      text: `WITH RECURSIVE e(endpoint_id, n) AS (
               (SELECT endpoint_id, 1 FROM webhook_deliveries
                 WHERE status IN ('pending', 'retrying') AND endpoint_id > $1 AND created_at >= $3 AND created_at <= $4
                 ORDER BY endpoint_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                        WHERE d.status IN ('pending', 'retrying') AND d.endpoint_id > e.endpoint_id AND d.created_at >= $3 AND d.created_at <= $4
                        ORDER BY d.endpoint_id LIMIT 1), e.n + 1
                 FROM e WHERE e.endpoint_id IS NOT NULL AND e.n < $2
             )
             SELECT e.endpoint_id AS id, w.rate_limit_per_second IS NOT NULL AS paced
               FROM e JOIN webhook_endpoints w ON w.id = e.endpoint_id ORDER BY e.endpoint_id`,
      values: [after, limit, range.from, range.to],
    });
    return rows;
  }

  /**
   * Claims, for each endpoint asked, up to its `quota` of due deliveries, oldest due first
   * (one index probe per endpoint: a long backlog costs nothing to the claims of others),
   * leasing each for `leaseSeconds`; a disabled endpoint's are left alone, and so are a
   * rate-limited endpoint's (`claimPaced` takes those). Rows another worker holds are skipped.
   * Only deliveries in `range` (see `openRange`); each one's event is read from its own day.
   * Returns what their attempts need.
   */
  claimDue(wanted: ClaimWanted, leaseSeconds: number, range: HistoryRange): Promise<DeliveryTarget[]> {
    return this.claim('webhook_claim_due', CLAIM_DUE, wanted, leaseSeconds, range);
  }

  /**
   * Claims due deliveries of rate-limited endpoints (`rate_limit_per_second`), as `claimDue`
   * does, paced across every worker: each endpoint's row is locked for the statement (a
   * concurrent claim skips the endpoint), the claim takes at most the deliveries whose send
   * slots (from `paced_until`, or now when that has passed, one every 1/rate s) start within
   * PACE_HORIZON_SECONDS, gives each its slot as `wait_ms` (after the statement ends; negative
   * when the slot began while it ran), and moves `paced_until` past the last slot it took. The
   * deliveries left are still due and get later slots in later claims. An endpoint without a
   * limit (any more) gets nothing here.
   */
  claimPaced(wanted: ClaimWanted, leaseSeconds: number, range: HistoryRange): Promise<DeliveryTarget[]> {
    return this.claim('webhook_claim_paced', CLAIM_PACED, wanted, leaseSeconds, range, PACE_HORIZON_SECONDS);
  }

  /** Runs a claim statement: $1, $2 what is wanted, $3 the lease, $4 and $5 the range, then `more`. */
  private async claim(name: string, text: string, wanted: ClaimWanted, leaseSeconds: number, range: HistoryRange, ...more: unknown[]): Promise<DeliveryTarget[]> {
    if (wanted.length === 0) return [];
    const values = [wanted.map((w) => w.endpointId), wanted.map((w) => w.quota), leaseSeconds, range.from, range.to, ...more];
    const { rows } = await this.pool.query<DeliveryTarget>({ name, text, values });
    return rows;
  }

  /**
   * One delivery for a support retry, whatever its status, with its status now; `range` is
   * where its `created_at` is (exactly it, when known).
   */
  async findTarget(deliveryId: string, range: HistoryRange): Promise<(DeliveryTarget & { status: string; event: string }) | null> {
    const { rows } = await this.pool.query<DeliveryTarget & { status: string; event: string }>({
      name: 'webhook_find_target',
      text: `SELECT d.id AS delivery_id, d.attempt_count, d.endpoint_id, d.created_at, d.status, d.event, ${TARGET}
               FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
               JOIN call_events ev ON ev.id = d.event_id AND ev.created_at = d.created_at AND ev.created_at >= $2 AND ev.created_at <= $3
              WHERE d.id = $1 AND d.created_at >= $2 AND d.created_at <= $3`,
      values: [deliveryId, range.from, range.to],
    });
    return rows[0] ?? null;
  }

  /**
   * Records a batch of attempts in one statement: each attempt row, each delivery's new state,
   * and each endpoint's failure streak (ended by any success in the batch; begun by a failure;
   * past `disableAfterHours`, or on 410 Gone, the endpoint is disabled). An endpoint this batch
   * disables gets its `webhook_endpoint.disabled` event (reason `gone` or `failing`, and the
   * last error) in the same statement: the change and its event commit together. Endpoints that
   * were disabled already (by another worker meanwhile, or by hand) get none: their rows are
   * locked first and read as they are then. Returns the endpoints of the batch now disabled.
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
                WHERE d.id = o.delivery_id AND d.created_at = o.delivery_created_at AND d.created_at >= $11 AND d.created_at <= $12 AND w.id = d.endpoint_id
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
    return rows[0].disabled;
  }

  /** Gives back leases of deliveries claimed but never attempted (a worker stopping): due again now. */
  async release(deliveries: Array<Pick<DeliveryTarget, 'delivery_id' | 'created_at'>>): Promise<void> {
    if (deliveries.length === 0) return;
    const batch = spanning(deliveries.map((d) => d.created_at));
    await this.pool.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now()
        WHERE id = ANY($1) AND created_at >= $2 AND created_at <= $3 AND status IN ('pending', 'retrying')`,
      [deliveries.map((d) => d.delivery_id), batch.from, batch.to],
    );
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

/** One attempt as the delivery log shows it (CONTRACT.md "Webhook delivery"). */
interface AttemptView {
  delivery_id: string;
  attempted_at: string;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
}

/**
 * A delivery as the API shows it (CONTRACT.md "Webhook delivery"). Attempts are gathered per
 * delivery in the same query, oldest first, each delivery's from its own day (the partition
 * key it shares with them).
 */
const deliveryRow = rowShape('webhook_deliveries', {
  id: column<string>(),
  endpoint_id: column<string>(),
  event_id: column<string>(),
  event: column<string>(),
  /** Null for an operational event. */
  call_id: column<string | null>(),
  sequence: column<number | null>(),
  status: column<string>(),
  attempt_count: column<number>(),
  next_attempt_at: column<Date | null>(),
  last_response_status: column<number | null>(),
  created_at: column<Date>(),
  attempts: column<AttemptView[]>(`COALESCE((SELECT json_agg(json_build_object('delivery_id', a.id, 'attempted_at', iso_utc(a.attempted_at), 'response_status', a.response_status,
                                              'duration_ms', a.duration_ms, 'error', a.error) ORDER BY a.attempted_at)
              FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.delivery_created_at = d.created_at), '[]'::json)`),
});

/** A delivery with its attempts, as selected. */
export type DeliveryRow = RowOf<typeof deliveryRow.columns>;
/** A delivery as the API shows it: the row with ISO times. */
export type DeliveryView = Presented<DeliveryRow>;

/** Which failed deliveries to send again. */
export interface FailedFilter {
  endpointId?: string;
  orgId?: string;
  since?: Date;
  until?: Date;
}

/**
 * The condition on failed deliveries (as `d`). It always bounds `created_at`, by the filter or
 * else by `retained`, so that only those days' partitions are read.
 */
function failedWhere(filter: FailedFilter, retained: HistoryRange): Where {
  return where(`d.status = 'failed' AND d.created_at >= ?`, filter.since ?? retained.from)
    .and(filter.until ? 'd.created_at < ?' : 'd.created_at <= ?', filter.until ?? retained.to)
    .equal('d.endpoint_id', filter.endpointId)
    .equal('d.org_id', filter.orgId);
}

/**
 * The deliveries outside the delivery loop, over the DataSource: the relay's fan-out, the
 * delivery log (SPEC.md §2.6) and support's tools (retrying failed deliveries, pausing the
 * deliveries of a disabled endpoint), and the NOTIFY that tells the webhooks workers. Every
 * statement is bounded by a range of `created_at` (see HistoryRange).
 */
export class DeliveryLogRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One delivery per (event, endpoint) of `matches`, due at once, each with its event's
   * `created_at` (the partition key of both; `batch` spans them): (event, endpoint, created_at)
   * is unique, so an event relayed again makes no second delivery.
   */
  async fanOut(em: EntityManager, matches: Array<{ event_id: string; endpoint_id: string }>, batch: HistoryRange): Promise<void> {
    await em.query(
      `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, call_id, event, sequence, status, attempt_count, next_attempt_at, created_at)
       SELECT m.id, ev.org_id, m.endpoint_id, ev.id, ev.call_id, ev.event, ev.sequence, 'pending', 0, now(), ev.created_at
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS m(id, event_id, endpoint_id)
         JOIN call_events ev ON ev.id = m.event_id AND ev.created_at >= $4 AND ev.created_at <= $5
       ON CONFLICT (event_id, endpoint_id, created_at) DO NOTHING`,
      [matches.map(() => newId('dlv')), matches.map((m) => m.event_id), matches.map((m) => m.endpoint_id), batch.from, batch.to],
    );
  }

  /**
   * Tells the webhooks workers that deliveries are due (committed with `sql`'s transaction, if
   * any): `payload` names the endpoints that have new ones (see `notifyPayload`); empty: look.
   */
  async notify(sql: Sql = this.dataSource, payload = ''): Promise<void> {
    await sql.query(`SELECT pg_notify($1, $2)`, [DELIVERIES_CHANNEL, payload]);
  }

  /** A page of the organization's deliveries among those `retained`, newest first, with the request's filters. */
  list(orgId: string, retained: HistoryRange, query: PageParams & DeliveryFilters): Promise<Page<DeliveryView>> {
    const filters = where('d.org_id = ? AND d.created_at >= ? AND d.created_at <= ?', orgId, retained.from, retained.to).matching(query, {
      endpoint_id: 'd.endpoint_id',
      status: 'd.status',
      call_id: 'd.call_id',
      event: 'd.event',
    });
    return listPage(this.dataSource, { select: deliveryRow.select('d'), from: deliveryRow.from('d'), where: filters }, query, presentRow<DeliveryRow>);
  }

  /** The organization's delivery with this id among those `retained`: one primary-key probe per day. */
  async find(orgId: string, id: string, retained: HistoryRange): Promise<DeliveryRow | null> {
    const [row] = await this.dataSource.query(
      `SELECT ${deliveryRow.select('d')} FROM ${deliveryRow.from('d')} WHERE d.id = $1 AND d.org_id = $2 AND d.created_at >= $3 AND d.created_at <= $4`,
      [id, orgId, retained.from, retained.to],
    );
    return row ?? null;
  }

  /** Pauses or resumes the deliveries of endpoints just disabled or enabled, in `em`'s transaction (see PAUSE_OR_RESUME). */
  async pauseOrResume(em: EntityManager, endpointIds: string[]): Promise<void> {
    await em.query(PAUSE_OR_RESUME, [endpointIds]);
  }

  /** How many failed deliveries `filter` matches (within `retained`, unless it bounds them itself). */
  async countFailed(filter: FailedFilter, retained: HistoryRange): Promise<number> {
    const failed = failedWhere(filter, retained);
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries d WHERE ${failed}`, failed.params);
    return n;
  }

  /**
   * Makes up to `limit` of the failed deliveries `filter` matches due again now, oldest first,
   * from their next attempt on (rows another transaction holds are skipped); returns their ids.
   */
  async retryFailed(filter: FailedFilter, retained: HistoryRange, limit: number): Promise<string[]> {
    const failed = failedWhere(filter, retained);
    // The subquery's `d` is its own row, not the updated one: one condition serves both.
    const [rows]: [Array<{ id: string }>] = await this.dataSource.query(
      `UPDATE webhook_deliveries d SET status = 'retrying', next_attempt_at = now(), updated_at = now()
         FROM (SELECT d.id, d.created_at FROM webhook_deliveries d WHERE ${failed} ORDER BY d.created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) f
        WHERE d.id = f.id AND d.created_at = f.created_at AND ${failed}
        RETURNING d.id`,
      failed.params,
    );
    return rows.map((r) => r.id);
  }
}
