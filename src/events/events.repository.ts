import type { DataSource } from 'typeorm';
import { payerIdSql } from '../billing/charges.js';
import { inRange, whereInRange, type HistoryRange } from '../history/history-range.js';
import { newId } from '../lib/ids.js';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, presentRow, rowShape, where, type Presented, type RowOf } from '../lib/sql.js';
import type { OperationalEventFields, OperationalEventType } from './event-types.js';
import type { EventFilters } from './events.schemas.js';
import { Reads } from '../lib/reads.js';

/**
 * THE tenant of an event (CONTRACT.md §5), for the `call_events` alias `ev`: its organization when
 * that is a tenant (its account, the reseller, differs from it), else null. The feed shows it as
 * `tenant_id`; deliveries of the event carry it.
 */
export const eventTenantIdSql = (ev: string) => `CASE WHEN ${ev}.account_id <> ${ev}.org_id THEN ${ev}.org_id END`;

/**
 * An event as the feed shows it (CONTRACT.md §4 "Events feed"): `data` is the stored payload,
 * exactly the body a delivery of it carries before an endpoint's customization.
 */
const eventRow = rowShape('call_events', {
  id: column<string>(),
  type: column<string>('ev.event'),
  created_at: column<Date>(),
  tenant_id: column<string | null>(eventTenantIdSql('ev')),
  data: column<Record<string, unknown>>('ev.payload'),
});

export type EventRow = RowOf<typeof eventRow.columns>;
/** `{id, type, created_at, tenant_id, data}`, times as ISO strings. */
export type EventView = Presented<EventRow>;

/**
 * Whose events a read covers: one organization's (`org_id`), or an account's (`account_id`: a
 * reseller's own and all its tenants', one index range newest first however many tenants).
 */
export interface EventScope {
  by: 'org_id' | 'account_id';
  id: string;
}

/** What `record` writes: an operational event of `orgId`, with the fields of its type. */
export interface OperationalEvent<E extends OperationalEventType> {
  orgId: string;
  event: E;
  fields: OperationalEventFields[E];
  /** When it happened; default: the transaction's start (`now()`). */
  occurredAt?: Date;
}

/**
 * The INSERT of operational events from `source`, a query (or VALUES) yielding, in order, the
 * columns `id, org_id, event, fields, occurred_at` (`fields` a jsonb object); each event's
 * `account_id` is its organization's payer (a tenant's reseller). THE shape of an
 * operational event's body: `{event, org_id, occurred_at, ...fields}` (CONTRACT.md §4). For a
 * statement of the delivery path that writes the events of its own change in the same
 * statement (the outbox rule, without another round trip); anything else calls
 * `EventsRepository.record`, which is built on it.
 */
export function insertOperationalEvents(source: string): string {
  return `INSERT INTO call_events (id, org_id, account_id, event, payload, occurred_at)
          SELECT e.id, e.org_id, ${payerIdSql('o')}, e.event, jsonb_build_object('event', e.event, 'org_id', e.org_id, 'occurred_at', iso_utc(e.occurred_at)) || e.fields, e.occurred_at
            FROM (${source}) AS e(id, org_id, event, fields, occurred_at) JOIN organizations o ON o.id = e.org_id`;
}

const RECORD = insertOperationalEvents(`VALUES ($1::varchar, $2::varchar, $3::varchar, $4::jsonb, COALESCE($5::timestamptz, now()))`);

/**
 * Every event of an organization: call events (written by the call engine with each status
 * change) and operational events, all rows of `call_events` (see docs/decisions.md). The relay
 * delivers them; the feed reads them here, within a range of `created_at` (the partition key),
 * so that only the retained days' partitions are read.
 */
export class EventsRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  /**
   * Writes an operational event in `sql`'s transaction: the transaction of the change it reports
   * (the outbox rule), so the event exists exactly when the change committed. Returns its id.
   */
  async record<E extends OperationalEventType>(sql: Sql, event: OperationalEvent<E>): Promise<string> {
    const id = newId('evt');
    await sql.query(RECORD, [id, event.orgId, event.event, JSON.stringify(event.fields), event.occurredAt ?? null]);
    return id;
  }

  /**
   * A page of the events of `scope` in `retained`, newest first, with the request's
   * filters. `created_after`/`created_before` narrow the range; never widen it.
   */
  list(scope: EventScope, retained: HistoryRange, query: EventFilters & PageParams): Promise<Page<EventView>> {
    const filters = where(`ev.${scope.by} = ?`, scope.id)
      .and(...eventsBetween(retained, query))
      .matching(query, { type: 'ev.event', call_id: 'ev.call_id' });
    return this.reads.run((sql) => listPage(sql, { select: eventRow.select('ev'), from: eventRow.from('ev'), where: filters }, query, presentRow<EventRow>));
  }

  /** The event of `scope` with this id in `retained`: one primary-key probe per day (an id says nothing of its time). */
  async find(scope: EventScope, id: string, retained: HistoryRange): Promise<EventRow | null> {
    const [row] = await this.db.query<EventRow[]>(
      `SELECT ${eventRow.select('ev')} FROM ${eventRow.from('ev')} WHERE ev.id = $1 AND ev.${scope.by} = $2 AND ${inRange('ev.created_at', '$3', '$4')}`,
      [id, scope.id, retained.from, retained.to],
    );
    return row ?? null;
  }
}

/**
 * The condition on `created_at` of a list: the retained range, narrowed by the filters (each
 * exclusive). A filter's time is brought into the range first, so the database only ever sees
 * times of the range, however far off the one asked for.
 */
function eventsBetween(retained: HistoryRange, { created_after: after, created_before: before }: EventFilters): [string, Date, Date] {
  const within = (t: Date) => new Date(Math.min(Math.max(t.getTime(), retained.from.getTime()), retained.to.getTime()));
  const from = after && after > retained.from ? within(after) : null;
  const to = before && before < retained.to ? within(before) : null;
  return whereInRange('ev.created_at', { from: from ?? retained.from, to: to ?? retained.to }, `${from ? '(' : '['}${to ? ')' : ']'}`);
}
