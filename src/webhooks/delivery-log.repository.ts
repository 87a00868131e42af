import type { DataSource } from 'typeorm';
import { inRange, whereInRange, type HistoryRange } from '../history/history-range.js';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, presentRow, rowShape, where, type Presented, type RowOf, type Where } from '../lib/sql.js';
import { notifyDeliveries } from './delivery-notifications.js';
import type { DeliveryFilters } from './webhook-deliveries.schemas.js';
import { Reads } from '../lib/reads.js';

/**
 * Brings the deliveries of endpoints just disabled or enabled in line: a disabled endpoint's wait,
 * not due (`next_attempt_at` null), so they cost the claims nothing; an enabled one's are due at
 * once. Run in the transaction of a PATCH that changes `disabled`, and after recording attempts
 * that disabled endpoints.
 */
export async function pauseOrResume(sql: Sql, endpointIds: string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await sql.query(
    `UPDATE webhook_deliveries d SET next_attempt_at = CASE WHEN w.disabled THEN NULL ELSE now() END
       FROM webhook_endpoints w
      WHERE w.id = d.endpoint_id AND d.endpoint_id = ANY($1) AND d.status IN ('pending', 'retrying')
        AND (w.disabled OR d.next_attempt_at IS NULL)`,
    [endpointIds],
  );
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
  /** The tenant whose event it is; null for an event of an organization that is not a tenant. */
  tenant_id: column<string | null>(),
  sequence: column<number | null>(),
  status: column<string>(),
  attempt_count: column<number>(),
  next_attempt_at: column<Date | null>(),
  last_response_status: column<number | null>(),
  created_at: column<Date>(),
  attempts: column<
    AttemptView[]
  >(`COALESCE((SELECT json_agg(json_build_object('delivery_id', a.id, 'attempted_at', iso_utc(a.attempted_at), 'response_status', a.response_status,
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
  // `until` is exclusive; the retained range's end is not.
  const range = { from: filter.since ?? retained.from, to: filter.until ?? retained.to };
  return where(`d.status = 'failed'`)
    .and(...whereInRange('d.created_at', range, filter.until ? '[)' : '[]'))
    .equal('d.endpoint_id', filter.endpointId)
    .equal('d.org_id', filter.orgId);
}

/**
 * The delivery log (SPEC.md §2.6) and support's tools (retrying failed deliveries), over the
 * DataSource. Every statement is bounded by a range of `created_at` (see HistoryRange).
 */
export class DeliveryLogRepository {
  constructor(
    private readonly dataSource: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(dataSource),
  ) {}

  /** A page of the organization's deliveries among those `retained`, newest first, with the request's filters. */
  list(orgId: string, retained: HistoryRange, query: PageParams & DeliveryFilters): Promise<Page<DeliveryView>> {
    const filters = where('d.org_id = ?', orgId)
      .and(...whereInRange('d.created_at', retained))
      .matching(query, {
        endpoint_id: 'd.endpoint_id',
        status: 'd.status',
        call_id: 'd.call_id',
        event: 'd.event',
        tenant_id: 'd.tenant_id',
      });
    return this.reads.run((sql) =>
      listPage(sql, { select: deliveryRow.select('d'), from: deliveryRow.from('d'), where: filters }, query, presentRow<DeliveryRow>),
    );
  }

  /** The organization's delivery with this id among those `retained`: one primary-key probe per day. */
  async find(orgId: string, id: string, retained: HistoryRange): Promise<DeliveryRow | null> {
    const [row] = await this.dataSource.query<DeliveryRow[]>(
      `SELECT ${deliveryRow.select('d')} FROM ${deliveryRow.from('d')} WHERE d.id = $1 AND d.org_id = $2 AND ${inRange('d.created_at', '$3', '$4')}`,
      [id, orgId, retained.from, retained.to],
    );
    return row ?? null;
  }

  /** How many failed deliveries `filter` matches (within `retained`, unless it bounds them itself). */
  async countFailed(filter: FailedFilter, retained: HistoryRange): Promise<number> {
    const failed = failedWhere(filter, retained);
    const [{ n }] = await this.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM webhook_deliveries d WHERE ${failed}`, failed.params);
    return n;
  }

  /**
   * Makes up to `limit` of the failed deliveries `filter` matches due again now, oldest first,
   * from their next attempt on (rows another transaction holds are skipped), and tells the
   * webhooks workers; returns their ids.
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
    if (rows.length > 0) await notifyDeliveries(this.dataSource);
    return rows.map((r) => r.id);
  }
}
