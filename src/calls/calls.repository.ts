import type { DataSource, EntityManager } from 'typeorm';
import { payerIdSql } from '../billing/charges.js';
import { onDoNotCallListSql } from '../do-not-call/do-not-call.repository.js';
import { namedQuery } from '../lib/db.js';
import { newId } from '../lib/ids.js';
import { currentTraceparent } from '../lib/telemetry.js';
import { listPage, type Page, type PageParams, type Sql } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { outgoingNumberSql } from '../numbers/phone-numbers.repository.js';
import { IS_TENANT } from '../orgs/organizations.repository.js';
import { spendLimitReachedSql, type SpendMonth } from '../tenants/spend-limits.repository.js';
import { TERMINAL_STATUSES, type CallStatus, type Direction, type EndReason, type Outcome, type SimulateScript, type TerminalStatus } from './call.entity.js';
import { Reads } from '../lib/reads.js';

// The call engine's hot path, in plain SQL. Each status change is ONE statement that updates
// the call and writes its event (the outbox row) from the updated row, through the database
// function call_event_payload() (see the VoiceOrganization migration): atomic without a
// transaction round trip, and the event can never disagree with the row it describes.

/**
 * The terminal statuses as an SQL list, for `status IN ...` / `status NOT IN ...`: spelled in SQL
 * here and nowhere else. Other domains ask this repository (`openCallIds`, `orgsWithOpenCalls`).
 */
const TERMINAL_SQL = `(${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** A call as the API shows it (CONTRACT.md "Calls"), over alias `c`. */
const callRow = rowShape('calls', {
  id: column<string>(),
  org_id: column<string>(),
  agent_id: column<string>(),
  contact_id: column<string | null>(),
  campaign_id: column<string | null>(),
  direction: column<Direction>(),
  status: column<CallStatus>(),
  outcome: column<Outcome | null>(),
  end_reason: column<EndReason | null>(),
  phone_number: column<string>(),
  our_number: column<string | null>(),
  duration_seconds: column<number | null>(),
  charge_micros: column<string | null>(),
  billable_micros: column<string | null>(),
  started_at: column<Date | null>(),
  ended_at: column<Date | null>(),
  created_at: column<Date>(),
  // Whose currency the call is shown in (`OrganizationsRepository.withPayerCurrency`).
  payer_org_id: column<string>(),
});
export type CallRow = RowOf<typeof callRow.columns>;

/** A call handed to the carrier: what it dials. */
const dialedRow = rowShape('calls', {
  id: column<string>(),
  org_id: column<string>(),
  dialed_at: column<Date>(),
  phone_number: column<string>(),
  our_number: column<string | null>(),
  simulate: column<SimulateScript>(),
});
export type DialedCall = RowOf<typeof dialedRow.columns>;

/** An unfinished call as its ending needs it. */
const openRow = rowShape('calls', {
  id: column<string>(),
  status: column<CallStatus>(),
  started_at: column<Date | null>(),
  org_id: column<string>(),
  payer_org_id: column<string>(),
});
export type OpenCall = RowOf<typeof openRow.columns>;

/** An outbound call committed as queued and never dialed (the sweeper's). */
const undialedRow = rowShape('calls', { id: column<string>(), org_id: column<string>(), created_at: column<Date>() });
export type UndialedCall = RowOf<typeof undialedRow.columns>;

export interface QueuedCall {
  id: string;
  orgId: string;
  payerOrgId: string;
  agentId: string;
  contactId: string | null;
  campaignId: string | null;
  direction: Direction;
  phoneNumber: string;
  ourNumber: string | null;
  simulate: SimulateScript;
  createdAt: Date;
}

export interface OutboundRequest {
  orgId: string;
  agentId: string;
  contactId: string;
  campaignId: string | null;
  simulate: SimulateScript;
  /** The calendar month whose spend a tenant's limit applies to (now's). */
  month: SpendMonth;
}

/**
 * The call placed, or why none was: something named is not the organization's, the payer's balance
 * is not above zero, or the organization's monthly spend limit is reached.
 */
export type OutboundResult =
  { placed: true; call: QueuedCall; currency: string } | { placed: false; reason: 'agent' | 'contact' | 'campaign' | 'unfunded' | 'spend_limit' };

export interface Ending {
  id: string;
  status: TerminalStatus;
  endReason: EndReason;
  durationSeconds: number;
  chargeMicros: bigint;
  /** A tenant's call: what the tenant owes at its resale price; null for any other. */
  billableMicros: bigint | null;
  at: Date;
}

export interface EndedCall {
  id: string;
  orgId: string;
  campaignId: string | null;
  status: TerminalStatus;
  endReason: EndReason;
  outcome: Outcome | null;
  phoneNumber: string;
  durationSeconds: number;
}

/** What placeOutbound's statement answers: what it checked and, when it placed the call, what the call needs. */
type PlacementRow = { payer_id: string; currency: string; our_number: string | null } & (
  | { placed: true; agent_id: string; contact_id: string; phone_number: string }
  | { placed: false; agent_id: string | null; contact_id: string | null; campaign_found: boolean; funded: boolean }
);

/** Calls to dial only while `orgId`'s spend limit allows (see src/tenants/spend-limit.ts). */
export interface SpendGate {
  orgId: string;
  month: SpendMonth;
}

/** The fields of an event's payload (SQL's call_event_payload) that a batch change reads back: those of `call.completed`. */
interface ChangedPayload {
  call_id: string;
  org_id: string;
  campaign_id: string | null;
  status: CallStatus;
  end_reason: EndReason | null;
  outcome: Outcome | null;
  phone_number: string;
  duration_seconds: number;
}

const INSERT_CALL = `INSERT INTO calls AS c (id, org_id, payer_org_id, agent_id, contact_id, campaign_id, direction, status, phone_number, our_number, simulate, last_sequence, created_at, updated_at, trace_parent)`;

/** The `call.queued` event (sequence 1) of each call in CTE `inserted` (column `c`, the row). */
const queuedEvent = (eventId: string, at: string) => `
  INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent)
  SELECT ${eventId}, (ins.c).id, (ins.c).org_id, (ins.c).payer_org_id, 1, 'call.queued', call_event_payload(ins.c, 'call.queued', ${at}), ${at}, (ins.c).trace_parent
    FROM inserted ins`;

/** Calls, their status changes and their events (the outbox rows). */
export class CallsRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  /** Inserts a `queued` call and its `call.queued` event, in one statement. */
  async insertQueued(em: EntityManager, call: Omit<QueuedCall, 'id' | 'createdAt'>): Promise<QueuedCall> {
    const row: QueuedCall = { ...call, id: newId('call'), createdAt: new Date() };
    await em.query(
      `WITH inserted AS (${INSERT_CALL} VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $10, 1, $11, $11, $13) RETURNING c)
       ${queuedEvent('$12', '$11')}`,
      [
        row.id,
        row.orgId,
        row.payerOrgId,
        row.agentId,
        row.contactId,
        row.campaignId,
        row.direction,
        row.phoneNumber,
        row.ourNumber,
        JSON.stringify(row.simulate),
        row.createdAt,
        newId('evt'),
        currentTraceparent(),
      ],
    );
    return row;
  }

  /**
   * Places an outbound call, for `POST /v1/calls` and for campaigns alike, in ONE statement (it
   * is the API's hottest write): checks the agent, the contact and the campaign belong to the
   * organization, the payer's balance is above zero and the organization's spend limit (a
   * tenant's, when it has one) is not reached, and only then inserts the call, going out from the
   * organization's outgoing number, and its `call.queued` event.
   *
   * The one place this repository reads other domains' tables, on purpose: the organization
   * and its payer (by the billing domain's `payerIdSql`), the agent, the contact and the
   * campaign (only whether each is the organization's), and the outgoing number (by the numbers
   * domain's `outgoingNumberSql`). Asked of their repositories one by one, that would be five
   * more round trips on every call placed. It writes only calls and call_events.
   */
  async placeOutbound(em: DataSource | EntityManager, request: OutboundRequest): Promise<OutboundResult> {
    const id = newId('call');
    const createdAt = new Date();
    const [ctx] = await namedQuery<PlacementRow>(
      em,
      'call_place_outbound',
      `WITH ctx AS (
         SELECT o.id AS org_id, p.id AS payer_id, p.currency, p.balance_micros > 0 AS funded, a.id AS agent_id, ct.id AS contact_id, ct.phone_number,
                ${outgoingNumberSql('o.id', 'a.id')} AS our_number,
                ($4::varchar IS NULL OR EXISTS (SELECT 1 FROM campaigns k WHERE k.id = $4 AND k.org_id = o.id)) AS campaign_found,
                ${spendLimitReachedSql('o', '$9::timestamptz', '$10::timestamptz')} AS spend_limit_reached
           FROM organizations o
           JOIN organizations p ON p.id = ${payerIdSql('o')}
           LEFT JOIN agents a ON a.id = $2 AND a.org_id = o.id
           LEFT JOIN contacts ct ON ct.id = $3 AND ct.org_id = o.id
          WHERE o.id = $1),
       inserted AS (
         ${INSERT_CALL}
         SELECT $5, org_id, payer_id, agent_id, contact_id, $4, 'outbound', 'queued', phone_number, our_number, $6, 1, $7, $7, $11
           FROM ctx WHERE agent_id IS NOT NULL AND contact_id IS NOT NULL AND campaign_found AND funded AND NOT spend_limit_reached
         RETURNING c),
       event AS (${queuedEvent('$8', '$7')})
       SELECT ctx.*, EXISTS (SELECT 1 FROM inserted) AS placed FROM ctx`,
      [
        request.orgId,
        request.agentId,
        request.contactId,
        request.campaignId,
        id,
        JSON.stringify(request.simulate),
        createdAt,
        newId('evt'),
        request.month.since,
        request.month.until,
        currentTraceparent(),
      ],
    );
    if (!ctx.placed) {
      const reason =
        ctx.agent_id === null ? 'agent' : ctx.contact_id === null ? 'contact' : !ctx.campaign_found ? 'campaign' : !ctx.funded ? 'unfunded' : 'spend_limit';
      return { placed: false, reason };
    }
    const call: QueuedCall = {
      id,
      orgId: request.orgId,
      payerOrgId: ctx.payer_id,
      agentId: ctx.agent_id,
      contactId: ctx.contact_id,
      campaignId: request.campaignId,
      direction: 'outbound',
      phoneNumber: ctx.phone_number,
      ourNumber: ctx.our_number,
      simulate: request.simulate,
      createdAt,
    };
    return { placed: true, call, currency: ctx.currency };
  }

  /** A page of the organization's calls, newest first, filtered by status, direction and campaign. */
  list<T>(orgId: string, query: PageParams & { status?: string; direction?: string; campaign_id?: string }, present: (row: CallRow) => T): Promise<Page<T>> {
    const filters = where('c.org_id = ?', orgId).matching(query, { status: 'c.status', direction: 'c.direction', campaign_id: 'c.campaign_id' });
    return this.reads.run((sql) => listPage(sql, { select: callRow.select('c'), from: callRow.from('c'), where: filters }, query, present));
  }

  /** The call `id`; only if it is the organization's, when `orgId` is given. */
  async find(id: string, orgId?: string): Promise<CallRow | null> {
    const filter = where('c.id = ?', id).equal('c.org_id', orgId);
    const [row] = await this.db.query<CallRow[]>(`SELECT ${callRow.select('c')} FROM ${callRow.from('c')} WHERE ${filter}`, filter.params);
    return row ?? null;
  }

  /**
   * Marks calls as handed to the carrier, keeping a first dial time (a replayed dial keeps the
   * carrier's timeline). Returns the calls still unfinished; ended ones are left out. Locks them by
   * id first (the lock order: see `CallEngine`); alone, the UPDATE would lock them in its plan's
   * order, often the table's (a bitmap scan, as for the sweeper's thousands of calls).
   *
   * A disabled tenant's calls never dialed are left out (SPEC.md §3.1; the `apply-state` job ends
   * them): the tenants' rows are share-locked after the calls, so a disable either committed before
   * and is seen, or waits for this dial's commit and then ends what it dialed. A dispatch that read
   * the tenant enabled just before a disable dials nothing after it.
   *
   * With a `gate`, in the transaction that locked the calls and then the organization's row (see
   * src/tenants/spend-limit.ts), an outbound call never dialed is marked only while the
   * organization's spend limit is not reached (its spend read once for the batch); the others are
   * left out. The dial time is the clock's once the rows are locked, one for the whole batch: calls
   * dialed together share the carrier's report times, and so their report jobs.
   */
  async markDialed(sql: Sql, ids: string[], gate: SpendGate | null = null): Promise<DialedCall[]> {
    const allowed = gate
      ? `AND (c.dialed_at IS NOT NULL OR c.direction <> 'outbound' OR c.org_id <> $2
              OR NOT (SELECT ${spendLimitReachedSql('o', '$3::timestamptz', '$4::timestamptz')} FROM organizations o WHERE o.id = $2))`
      : '';
    const [rows] = (await sql.query(
      `WITH locked AS (SELECT id, org_id FROM calls WHERE id = ANY($1) AND status NOT IN ${TERMINAL_SQL} ORDER BY id FOR NO KEY UPDATE),
       tenants AS MATERIALIZED (
         SELECT o.id, o.disabled FROM organizations o WHERE o.id IN (SELECT org_id FROM locked) AND o.${IS_TENANT} ORDER BY o.id FOR SHARE),
       dial AS MATERIALIZED (SELECT clock_timestamp() AS at FROM (SELECT count(*) FROM locked) c, (SELECT count(*) FROM tenants) t)
       UPDATE calls c SET dialed_at = COALESCE(c.dialed_at, dial.at), updated_at = now()
         FROM locked, dial WHERE c.id = locked.id
          AND (c.dialed_at IS NOT NULL OR NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.org_id AND t.disabled)) ${allowed}
       RETURNING ${dialedRow.select('c')}`,
      gate ? [ids, gate.orgId, gate.month.since, gate.month.until] : [ids],
    )) as [DialedCall[], number];
    return rows;
  }

  /** The unfinished ones of `ids`, locked by id for the caller's dialing transaction (the lock order: see `CallEngine`). */
  async lockForDial(em: EntityManager, ids: string[]): Promise<Array<{ id: string; org_id: string }>> {
    return em.query(`SELECT id, org_id FROM calls WHERE id = ANY($1) AND status NOT IN ${TERMINAL_SQL} ORDER BY id FOR NO KEY UPDATE`, [ids]);
  }

  /**
   * Those of `ids` never to be dialed: outbound calls not yet handed to the carrier whose number
   * is on a do-not-call list (the organization's or its reseller's, by the do-not-call domain's
   * `onDoNotCallListSql`). One statement for a batch about to be dialed.
   */
  async barredAmong(ids: string[]): Promise<Array<{ id: string; org_id: string }>> {
    return this.db.query(
      `SELECT c.id, c.org_id FROM calls c
        WHERE c.id = ANY($1) AND c.direction = 'outbound' AND c.status = 'queued' AND c.dialed_at IS NULL
          AND ${onDoNotCallListSql('c.org_id', 'c.phone_number')}`,
      [ids],
    );
  }

  /** The organization of each of the calls `ids`. */
  async orgsOf(ids: string[]): Promise<Array<{ id: string; org_id: string }>> {
    return this.db.query('SELECT id, org_id FROM calls WHERE id = ANY($1)', [ids]);
  }

  /**
   * A batch status change: `set` and `guard` apply to calls `c` joined with the input rows `i`
   * (id, at, event_id); each changed call gets its event, from its new row, at `i.at`. The calls
   * are locked by id first (the lock order: see `CallEngine`): alone, the UPDATE would lock them in
   * its plan's order, the batch's or the table's, not an ending's. Held already (in an ending, after
   * `lockOpen`), taking them again costs no wait.
   */
  private async changeMany(
    em: Sql,
    items: Array<{ id: string; at: Date }>,
    event: string,
    set: string,
    guard: string,
    extra: { columns: string; types: string; values: unknown[][] } | null = null,
  ): Promise<Array<{ call_id: string; payload: ChangedPayload }>> {
    if (items.length === 0) return [];
    const columns = `id, at, event_id${extra ? `, ${extra.columns}` : ''}`;
    const types = `$1::varchar[], $2::timestamptz[], $3::varchar[]${extra ? `, ${extra.types}` : ''}`;
    // created_at is the time of the INSERT, after the call's row lock, not the transaction's start
    // (now()): a change that began first but waited for another change of the same call would else
    // be older than it, and the events feed (newest first) would show the call's events out of order.
    return em.query(
      `WITH input AS (SELECT * FROM unnest(${types}) AS input(${columns})),
            i AS (SELECT input.* FROM input JOIN calls c ON c.id = input.id WHERE ${guard} ORDER BY c.id FOR NO KEY UPDATE OF c),
            changed AS (UPDATE calls c SET ${set}, last_sequence = c.last_sequence + 1, updated_at = now()
                          FROM i WHERE c.id = i.id
                        RETURNING c AS row, i.at, i.event_id)
       INSERT INTO call_events (id, call_id, org_id, account_id, sequence, event, payload, occurred_at, trace_parent, created_at)
       SELECT ch.event_id, (ch.row).id, (ch.row).org_id, (ch.row).payer_org_id, (ch.row).last_sequence, '${event}', call_event_payload(ch.row, '${event}', ch.at), ch.at,
              (ch.row).trace_parent, clock_timestamp()
         FROM changed ch
       RETURNING call_id, payload`,
      [items.map((x) => x.id), items.map((x) => x.at), items.map(() => newId('evt')), ...(extra?.values ?? [])],
    ) as Promise<Array<{ call_id: string; payload: ChangedPayload }>>;
  }

  /** queued → ringing, each at its time. Calls that moved on already are left alone. */
  async markRinging(em: Sql, items: Array<{ id: string; at: Date }>): Promise<void> {
    await this.changeMany(em, items, 'call.ringing', `status = 'ringing'`, `c.status = 'queued'`);
  }

  /** Calls still queued that the carrier reports further along: they rang when they were dialed. */
  async catchUpRinging(em: Sql, ids: string[], fallback: Date): Promise<void> {
    const rows = (await em.query(`SELECT id, dialed_at FROM calls WHERE id = ANY($1) AND status = 'queued'`, [ids])) as Array<{
      id: string;
      dialed_at: Date | null;
    }>;
    await this.markRinging(
      em,
      rows.map((r) => ({ id: r.id, at: r.dialed_at ?? fallback })),
    );
  }

  /** ringing → in_progress (answered), each at its time. */
  async markInProgress(em: Sql, items: Array<{ id: string; at: Date }>): Promise<void> {
    await this.changeMany(em, items, 'call.in_progress', `status = 'in_progress', started_at = i.at`, `c.status = 'ringing'`);
  }

  /**
   * Ends unfinished calls with their terminal status, reason, duration, charge and billable
   * amount, and writes each one's `call.completed`. The outcome is the simulated script's for a
   * completed call, `unreachable` for one never answered, none for one canceled. Calls already
   * ended are left out.
   */
  async markEnded(em: EntityManager, endings: Ending[]): Promise<EndedCall[]> {
    const rows = await this.changeMany(
      em,
      endings,
      'call.completed',
      `status = i.status, end_reason = i.end_reason, duration_seconds = i.duration_seconds, charge_micros = i.charge_micros,
       billable_micros = i.billable_micros, ended_at = i.at,
       outcome = CASE i.status WHEN 'completed' THEN c.simulate->>'outcome' WHEN 'canceled' THEN NULL ELSE 'unreachable' END`,
      `c.status NOT IN ${TERMINAL_SQL}`,
      {
        columns: 'status, end_reason, duration_seconds, charge_micros, billable_micros',
        types: '$4::varchar[], $5::varchar[], $6::int[], $7::bigint[], $8::bigint[]',
        values: [
          endings.map((e) => e.status),
          endings.map((e) => e.endReason),
          endings.map((e) => e.durationSeconds),
          endings.map((e) => e.chargeMicros.toString()),
          endings.map((e) => e.billableMicros?.toString() ?? null),
        ],
      },
    );
    return rows.map(({ payload: p }) => ({
      id: p.call_id,
      orgId: p.org_id,
      campaignId: p.campaign_id,
      status: p.status as TerminalStatus,
      endReason: p.end_reason!,
      outcome: p.outcome,
      phoneNumber: p.phone_number,
      durationSeconds: p.duration_seconds,
    }));
  }

  /** The unfinished ones of `ids`, locked for the caller's transaction in id order (the lock order: see `CallEngine`). */
  lockOpen(em: EntityManager, ids: string[]): Promise<OpenCall[]> {
    return em.query(`SELECT ${openRow.select()} FROM ${openRow.from()} WHERE id = ANY($1) AND status NOT IN ${TERMINAL_SQL} ORDER BY id FOR UPDATE`, [ids]);
  }

  /** The ids of the organization's unfinished calls (a disabled tenant's, to end them). */
  async openCallIds(orgId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(`SELECT id FROM calls WHERE org_id = $1 AND status NOT IN ${TERMINAL_SQL}`, [orgId]);
    return rows.map((r) => r.id);
  }

  /** Those of `orgIds` that have an unfinished call. */
  async orgsWithOpenCalls(orgIds: string[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT o.id FROM unnest($1::varchar[]) AS o(id) WHERE EXISTS (SELECT 1 FROM calls c WHERE c.org_id = o.id AND c.status NOT IN ${TERMINAL_SQL})`,
      [orgIds],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Those of `holding` (calls holding a concurrency slot) that no longer use it: the ended ones,
   * and those of `admittedLongAgo` still queued and never dialed (their dial was lost) or not
   * there at all (lost with the last transactions of a primary whose standby was behind).
   */
  async unusedSlotsAmong(holding: string[], admittedLongAgo: string[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT h.id FROM unnest($1::varchar[]) AS h(id) LEFT JOIN calls c ON c.id = h.id
        WHERE c.status IN ${TERMINAL_SQL} OR (h.id = ANY($2) AND (c.id IS NULL OR (c.status = 'queued' AND c.dialed_at IS NULL)))`,
      [holding, admittedLongAgo],
    );
    return rows.map((r) => r.id);
  }

  /** Outbound calls committed as queued more than `graceSeconds` ago and never dialed, oldest first. */
  undialedOutbound(graceSeconds: number, limit: number): Promise<UndialedCall[]> {
    return this.db.query(
      `SELECT ${undialedRow.select()} FROM ${undialedRow.from()}
        WHERE ended_at IS NULL AND status = 'queued' AND dialed_at IS NULL AND direction = 'outbound' AND created_at < now() - make_interval(secs => $1)
        ORDER BY created_at LIMIT $2`,
      [graceSeconds, limit],
    );
  }

  /** Inbound calls never dialed, and dialed calls unchanged, for more than `graceSeconds`: their carrier reports are overdue. */
  async stalled(graceSeconds: number, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM calls
        WHERE ended_at IS NULL AND status NOT IN ${TERMINAL_SQL}
          AND ((dialed_at IS NULL AND direction = 'inbound' AND created_at < now() - make_interval(secs => $1))
            OR (dialed_at IS NOT NULL AND updated_at < now() - make_interval(secs => $1)))
        LIMIT $2`,
      [graceSeconds, limit],
    );
    return rows.map((r) => r.id);
  }
}
