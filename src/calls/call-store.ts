import type { EntityManager } from 'typeorm';
import { payerIdSql } from '../billing/charges.js';
import { newId } from '../lib/ids.js';
import { outgoingNumberSql } from '../numbers/outgoing-number.js';
import { TERMINAL_SQL, type CallStatus, type Direction, type EndReason, type Outcome, type SimulateScript, type TerminalStatus } from './call.entity.js';

// The call engine's hot path, in plain SQL. Each status change is ONE statement that updates
// the call and writes its event (the outbox row) from the updated row, through the database
// function call_event_payload() (see the VoiceOrganization migration): atomic without a
// transaction round trip, and the event can never disagree with the row it describes.

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

const INSERT_CALL = `INSERT INTO calls AS c (id, org_id, payer_org_id, agent_id, contact_id, campaign_id, direction, status, phone_number, our_number, simulate, last_sequence, created_at, updated_at)`;

/** The `call.queued` event (sequence 1) of each call in CTE `inserted` (column `c`, the row). */
const queuedEvent = (eventId: string, at: string) => `
  INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at)
  SELECT ${eventId}, (ins.c).id, (ins.c).org_id, 1, 'call.queued', call_event_payload(ins.c, 'call.queued', ${at}), ${at} FROM inserted ins`;

/** Inserts a `queued` call and its `call.queued` event, in one statement. */
export async function insertQueuedCall(em: EntityManager, call: Omit<QueuedCall, 'id' | 'createdAt'>): Promise<QueuedCall> {
  const row: QueuedCall = { ...call, id: newId('call'), createdAt: new Date() };
  await em.query(
    `WITH inserted AS (${INSERT_CALL} VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $10, 1, $11, $11) RETURNING c)
     ${queuedEvent('$12', '$11')}`,
    [row.id, row.orgId, row.payerOrgId, row.agentId, row.contactId, row.campaignId, row.direction, row.phoneNumber, row.ourNumber, JSON.stringify(row.simulate), row.createdAt, newId('evt')],
  );
  return row;
}

export interface OutboundRequest {
  orgId: string;
  agentId: string;
  contactId: string;
  campaignId: string | null;
  simulate: SimulateScript;
}

/** Why an outbound call was not placed, or the call placed. */
export type OutboundResult =
  | { placed: true; call: QueuedCall; currency: string }
  | { placed: false; agentFound: boolean; contactFound: boolean; campaignFound: boolean; funded: boolean };

/**
 * Places an outbound call, for `POST /v1/calls` and for campaigns alike, in ONE statement (it
 * is the API's hottest write): checks the agent, the contact and the campaign belong to the
 * organization and the payer's balance is above zero, and only then inserts the call, going
 * out from the organization's outgoing number, and its `call.queued` event.
 */
export async function placeOutboundCall(em: EntityManager, request: OutboundRequest): Promise<OutboundResult> {
  const id = newId('call');
  const createdAt = new Date();
  const [ctx] = await em.query(
    `WITH ctx AS (
       SELECT o.id AS org_id, p.id AS payer_id, p.currency, p.balance_micros > 0 AS funded, a.id AS agent_id, ct.id AS contact_id, ct.phone_number,
              ${outgoingNumberSql('o.id', 'a.id')} AS our_number,
              ($4::varchar IS NULL OR EXISTS (SELECT 1 FROM campaigns k WHERE k.id = $4 AND k.org_id = o.id)) AS campaign_found
         FROM organizations o
         JOIN organizations p ON p.id = ${payerIdSql('o')}
         LEFT JOIN agents a ON a.id = $2 AND a.org_id = o.id
         LEFT JOIN contacts ct ON ct.id = $3 AND ct.org_id = o.id
        WHERE o.id = $1),
     inserted AS (
       ${INSERT_CALL}
       SELECT $5, org_id, payer_id, agent_id, contact_id, $4, 'outbound', 'queued', phone_number, our_number, $6, 1, $7, $7
         FROM ctx WHERE agent_id IS NOT NULL AND contact_id IS NOT NULL AND campaign_found AND funded
       RETURNING c),
     event AS (${queuedEvent('$8', '$7')})
     SELECT ctx.*, EXISTS (SELECT 1 FROM inserted) AS placed FROM ctx`,
    [request.orgId, request.agentId, request.contactId, request.campaignId, id, JSON.stringify(request.simulate), createdAt, newId('evt')],
  );
  if (!ctx.placed) {
    return { placed: false, agentFound: ctx.agent_id !== null, contactFound: ctx.contact_id !== null, campaignFound: ctx.campaign_found, funded: ctx.funded };
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

export interface DialedCall {
  id: string;
  orgId: string;
  dialedAt: Date;
  phoneNumber: string;
  ourNumber: string | null;
  simulate: SimulateScript;
}

/**
 * Marks calls as handed to the carrier, keeping a first dial time (a replayed dial keeps the
 * carrier's timeline). Returns the calls still unfinished; ended ones are left out.
 */
export async function markDialed(em: EntityManager, ids: string[]): Promise<DialedCall[]> {
  const rows = await em.query(
    `UPDATE calls SET dialed_at = COALESCE(dialed_at, now()), updated_at = now()
      WHERE id = ANY($1) AND status NOT IN ${TERMINAL_SQL}
      RETURNING id, org_id, dialed_at, phone_number, our_number, simulate`,
    [ids],
  );
  return (rows[0] instanceof Array ? rows[0] : rows).map((r: any) => ({
    id: r.id,
    orgId: r.org_id,
    dialedAt: r.dialed_at,
    phoneNumber: r.phone_number,
    ourNumber: r.our_number,
    simulate: r.simulate,
  }));
}

/**
 * A batch status change: `set` and `guard` apply to calls `c` joined with the input rows `i`
 * (id, at, event_id); each changed call gets its event, from its new row, at `i.at`.
 */
async function changeMany(em: EntityManager, items: Array<{ id: string; at: Date }>, event: string, set: string, guard: string, extra: { columns: string; types: string; values: unknown[][] } | null = null): Promise<Array<{ call_id: string; payload: any }>> {
  if (items.length === 0) return [];
  const columns = `id, at, event_id${extra ? `, ${extra.columns}` : ''}`;
  const types = `$1::varchar[], $2::timestamptz[], $3::varchar[]${extra ? `, ${extra.types}` : ''}`;
  return em.query(
    `WITH i AS (SELECT * FROM unnest(${types}) AS i(${columns})),
          changed AS (UPDATE calls c SET ${set}, last_sequence = c.last_sequence + 1, updated_at = now()
                        FROM i WHERE c.id = i.id AND ${guard}
                      RETURNING c AS row, i.at, i.event_id)
     INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at)
     SELECT ch.event_id, (ch.row).id, (ch.row).org_id, (ch.row).last_sequence, '${event}', call_event_payload(ch.row, '${event}', ch.at), ch.at
       FROM changed ch
     RETURNING call_id, payload`,
    [items.map((x) => x.id), items.map((x) => x.at), items.map(() => newId('evt')), ...(extra?.values ?? [])],
  );
}

/** queued → ringing, each at its time. Calls that moved on already are left alone. */
export async function markRinging(em: EntityManager, items: Array<{ id: string; at: Date }>): Promise<void> {
  await changeMany(em, items, 'call.ringing', `status = 'ringing'`, `c.status = 'queued'`);
}

/** Calls still queued that the carrier reports further along: they rang when they were dialed. */
export async function catchUpRinging(em: EntityManager, ids: string[], fallback: Date): Promise<void> {
  const rows: Array<{ id: string; dialed_at: Date | null }> = await em.query(`SELECT id, dialed_at FROM calls WHERE id = ANY($1) AND status = 'queued'`, [ids]);
  await markRinging(em, rows.map((r) => ({ id: r.id, at: r.dialed_at ?? fallback })));
}

/** ringing → in_progress (answered), each at its time. */
export async function markInProgress(em: EntityManager, items: Array<{ id: string; at: Date }>): Promise<void> {
  await changeMany(em, items, 'call.in_progress', `status = 'in_progress', started_at = i.at`, `c.status = 'ringing'`);
}

export interface Ending {
  id: string;
  status: TerminalStatus;
  endReason: EndReason;
  durationSeconds: number;
  chargeMicros: bigint;
  at: Date;
}

export interface EndedCall {
  id: string;
  orgId: string;
  campaignId: string | null;
  status: TerminalStatus;
  outcome: Outcome | null;
  phoneNumber: string;
  durationSeconds: number;
}

/**
 * Ends unfinished calls with their terminal status, reason, duration and charge, and writes
 * each one's `call.completed`. The outcome is the simulated script's for a completed call,
 * `unreachable` for one never answered, none for one canceled. Calls already ended are left out.
 */
export async function markEnded(em: EntityManager, endings: Ending[]): Promise<EndedCall[]> {
  const rows = await changeMany(
    em,
    endings,
    'call.completed',
    `status = i.status, end_reason = i.end_reason, duration_seconds = i.duration_seconds, charge_micros = i.charge_micros, ended_at = i.at,
     outcome = CASE i.status WHEN 'completed' THEN c.simulate->>'outcome' WHEN 'canceled' THEN NULL ELSE 'unreachable' END`,
    `c.status NOT IN ${TERMINAL_SQL}`,
    {
      columns: 'status, end_reason, duration_seconds, charge_micros',
      types: '$4::varchar[], $5::varchar[], $6::int[], $7::bigint[]',
      values: [endings.map((e) => e.status), endings.map((e) => e.endReason), endings.map((e) => e.durationSeconds), endings.map((e) => e.chargeMicros.toString())],
    },
  );
  return rows.map(({ payload: p }) => ({
    id: p.call_id,
    orgId: p.org_id,
    campaignId: p.campaign_id,
    status: p.status as TerminalStatus,
    outcome: p.outcome,
    phoneNumber: p.phone_number,
    durationSeconds: p.duration_seconds,
  }));
}

export interface OpenCall {
  id: string;
  status: CallStatus;
  startedAt: Date | null;
  orgId: string;
  payerOrgId: string;
}

/** The unfinished ones of `ids`, locked for the caller's transaction (in id order, so batches never deadlock). */
export async function lockOpenCalls(em: EntityManager, ids: string[]): Promise<OpenCall[]> {
  const rows = await em.query(
    `SELECT id, status, started_at, org_id, payer_org_id FROM calls WHERE id = ANY($1) AND status NOT IN ${TERMINAL_SQL} ORDER BY id FOR UPDATE`,
    [ids],
  );
  return rows.map((r: any) => ({ id: r.id, status: r.status, startedAt: r.started_at, orgId: r.org_id, payerOrgId: r.payer_org_id }));
}
