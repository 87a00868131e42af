import type pg from 'pg';
import { eventTenantIdSql } from '../events/events.repository.js';
import { daysOf, dayStart, inRange, rangeFrom, spanning, type HistoryRange } from '../history/history-range.js';
import type { DeliveryTarget } from './delivery-request.js';
import { PACE_LATE_MS } from './delivery-lanes.js';

/**
 * The columns an attempt needs, selected with the delivery, its endpoint and its event. The
 * previous secret of a rotation only while its overlap runs (the attempt checks its expiry
 * again when it is made).
 */
const TARGET = `w.url, w.secret, w.field_aliases, w.extra_payload, w.custom_headers, ev.payload, ev.trace_parent, ${eventTenantIdSql('ev')} AS tenant_id,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
  CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END AS previous_secret_expires_at`;

/**
 * How far ahead a claim hands out send slots of a rate-limited endpoint, in seconds: it takes
 * only deliveries whose slot starts within this much of now, so none is leased long before it
 * can go, and the next claims (the workers poll every 500 ms) take the slots after.
 */
export const PACE_HORIZON_SECONDS = 1;

/**
 * The seconds that `rate` successive send slots of an endpoint span: a second, plus
 * PACE_LATE_MS. A send may leave up to PACE_LATE_MS after its slot, so with slots exactly
 * 1/rate apart a late one and the rate-th after it, on time, would be less than a second apart:
 * rate + 1 sends in one second. Spaced this way, any rate + 1 sends span at least a second,
 * however late each was within PACE_LATE_MS; the endpoint gets at most its rate in any
 * one-second window, at the cost of a pace PACE_LATE_MS/1000 (5%) under it.
 */
export const PACE_SECONDS_PER_RATE = 1 + PACE_LATE_MS / 1000;

/** An endpoint the scan found with open deliveries; `paced`: it has a rate limit. */
export interface OpenEndpoint {
  id: string;
  paced: boolean;
}

/** What a claim asks for: up to `quota` due deliveries of each endpoint. */
export type ClaimWanted = Array<{ endpointId: string; quota: number }>;

/** The due deliveries (as `d`) of the endpoint `endpoint` (SQL), in the claim's range ($4, $5). */
const DUE_OF = (endpoint: string) =>
  `d.endpoint_id = ${endpoint} AND d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() AND ${inRange('d.created_at', '$4', '$5')}`;

/**
 * A claim statement: `mine` (a CTE, after the ones it needs) chooses and locks deliveries (id,
 * created_at, send_at); they are leased for $3 seconds and what their attempts need is
 * selected, each send slot as a wait from the end of the statement (not its start, now(), so
 * how long it ran does not move the slots). `after` adds CTEs that read `claimed`.
 */
const claimStatement = (mine: string, after = '') => `WITH ${mine}, claimed AS (
    UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $3)
      FROM mine WHERE d.id = mine.id AND d.created_at = mine.created_at AND ${inRange('d.created_at', '$4', '$5')}
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.created_at, mine.send_at
  )${after}
  SELECT c.id AS delivery_id, c.attempt_count, c.endpoint_id, c.created_at,
         ceil(extract(epoch FROM c.send_at - clock_timestamp()) * 1000)::int AS wait_ms, ${TARGET}
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
    JOIN call_events ev ON ev.id = c.event_id AND ev.created_at = c.created_at AND ${inRange('ev.created_at', '$4', '$5')}`;

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

/** `claimPaced`: rate-limited endpoints, locked, their send slots ($7 / rate s apart) within the horizon ($6). */
const CLAIM_PACED = claimStatement(
  `paced AS (
    SELECT w.id, want.quota, $7::float8 / w.rate_limit_per_second AS spacing, greatest(w.paced_until, now()) AS start
      FROM unnest($1::varchar[], $2::int[]) AS want(endpoint_id, quota)
      JOIN webhook_endpoints w ON w.id = want.endpoint_id AND NOT w.disabled AND w.rate_limit_per_second IS NOT NULL
       FOR UPDATE OF w SKIP LOCKED
  ), mine AS (
    SELECT due.id, due.created_at,
           p.start + make_interval(secs => (row_number() OVER (PARTITION BY p.id ORDER BY due.next_attempt_at) - 1) * p.spacing) AS send_at
      FROM paced p CROSS JOIN LATERAL (
        SELECT d.id, d.created_at, d.next_attempt_at FROM webhook_deliveries d
         WHERE ${DUE_OF('p.id')}
         ORDER BY d.next_attempt_at
         -- The slots that start within the horizon.
         LIMIT least(p.quota, greatest(0, ceil(extract(epoch FROM now() + make_interval(secs => $6) - p.start) / p.spacing)))::int
         FOR UPDATE OF d SKIP LOCKED
      ) due
  )`,
  `, paced_on AS (
    UPDATE webhook_endpoints w SET paced_until = p.start + make_interval(secs => taken.n * p.spacing)
      FROM paced p CROSS JOIN LATERAL (SELECT count(*) AS n FROM claimed c WHERE c.endpoint_id = p.id) taken
     WHERE w.id = p.id AND taken.n > 0
  )`,
);

/**
 * The webhooks workers' claims, on a pg pool of their own: named statements, parsed once per
 * connection (Postgres still plans each execution, pruning the partitions by the range given),
 * one round trip each. Postgres is the delivery queue: a delivery is due when `status` is
 * pending or retrying and `next_attempt_at` has passed; claiming one moves `next_attempt_at`
 * past the attempt (a lease), so a worker that dies mid-attempt leaves it due again when the
 * lease ends. A delivery of a disabled endpoint waits with `next_attempt_at` null. Every
 * statement names the range of `created_at` its deliveries can be in (see HistoryRange).
 */
export class DeliveryClaimsRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Where open (pending or retrying) deliveries are, among those `retained`: from the first
   * day holding one (or today, when none does) to now. One probe per day before today, each
   * reading that day's partition alone (its index of open deliveries), so the claims that follow
   * read only the days from there on. Today is in the range whatever it holds, so it is not
   * probed: its index, the one written all day, holds an entry for each version a delivery had
   * while open until vacuum removes them, and the probe read them from the oldest on (63 ms an
   * execution: 636 ms in `npm run bench:load`'s burst after its rates, whose Postgres backends used
   * 4,940 ms of CPU in all). A delivery made open in an earlier day later (a recovery) is claimed
   * once the range is looked up again.
   */
  async openRange(retained: HistoryRange): Promise<HistoryRange> {
    const today = dayStart(new Date());
    const days = daysOf(retained).filter((day) => day.start < today);
    const { rows } = await this.pool.query<{ since: Date | null }>({
      name: 'webhook_open_range',
      text: `SELECT min(day.start) AS since
               FROM unnest($1::timestamptz[], $2::timestamptz[]) AS day(start, next)
              CROSS JOIN LATERAL (
                -- In the order of the index of open deliveries, so that even a day without
                -- statistics yet is probed through it, not read whole.
                SELECT 1 FROM webhook_deliveries d
                 WHERE d.status IN ('pending', 'retrying') AND ${inRange('d.created_at', 'day.start', 'day.next', '[)')}
                 ORDER BY d.endpoint_id, d.next_attempt_at LIMIT 1
              ) open`,
      values: [days.map((d) => d.start), days.map((d) => d.end)],
    });
    return rangeFrom(rows[0].since ?? today);
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
                 WHERE status IN ('pending', 'retrying') AND endpoint_id > $1 AND ${inRange('created_at', '$3', '$4')}
                 ORDER BY endpoint_id LIMIT 1)
               UNION ALL
               SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                        WHERE d.status IN ('pending', 'retrying') AND d.endpoint_id > e.endpoint_id AND ${inRange('d.created_at', '$3', '$4')}
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
   * slots (from `paced_until`, or now when that has passed, one every PACE_SECONDS_PER_RATE/rate s) start within
   * PACE_HORIZON_SECONDS, gives each its slot as `wait_ms` (after the statement ends; negative
   * when the slot began while it ran), and moves `paced_until` past the last slot it took. The
   * deliveries left are still due and get later slots in later claims. An endpoint without a
   * limit (any more) gets nothing here.
   */
  claimPaced(wanted: ClaimWanted, leaseSeconds: number, range: HistoryRange): Promise<DeliveryTarget[]> {
    return this.claim('webhook_claim_paced', CLAIM_PACED, wanted, leaseSeconds, range, PACE_HORIZON_SECONDS, PACE_SECONDS_PER_RATE);
  }

  /** Runs a claim statement: $1, $2 what is wanted, $3 the lease, $4 and $5 the range, then `more`. */
  private async claim(
    name: string,
    text: string,
    wanted: ClaimWanted,
    leaseSeconds: number,
    range: HistoryRange,
    ...more: unknown[]
  ): Promise<DeliveryTarget[]> {
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
               JOIN call_events ev ON ev.id = d.event_id AND ev.created_at = d.created_at AND ${inRange('ev.created_at', '$2', '$3')}
              WHERE d.id = $1 AND ${inRange('d.created_at', '$2', '$3')}`,
      values: [deliveryId, range.from, range.to],
    });
    return rows[0] ?? null;
  }

  /** Gives back leases of deliveries claimed but never attempted (a worker stopping): due again now. */
  async release(deliveries: Array<Pick<DeliveryTarget, 'delivery_id' | 'created_at'>>): Promise<void> {
    if (deliveries.length === 0) return;
    const batch = spanning(deliveries.map((d) => d.created_at));
    await this.pool.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now()
        WHERE id = ANY($1) AND ${inRange('created_at', '$2', '$3')} AND status IN ('pending', 'retrying')`,
      [deliveries.map((d) => d.delivery_id), batch.from, batch.to],
    );
  }
}
