import type { EntityManager } from 'typeorm';
import { newId } from '../lib/ids.js';
import { TERMINAL_STATUSES, type CallStatus, type Direction, type EndReason, type Outcome, type SimulateScript, type TerminalStatus } from './call.entity.js';

// The call engine's hot path, in plain SQL. Each status change is ONE statement that updates
// the call and writes its event (the outbox row) from the updated row, through the database
// function call_event_payload() (see the VoiceOrganization migration): atomic without a
// transaction round trip, and the event can never disagree with the row it describes.

const TERMINAL = `(${TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** `changed` is a CTE of updated/inserted call rows; appends the event of each. */
const withEvent = (changed: string, event: string, eventId: string, at: string) => `
  WITH changed AS (${changed} RETURNING *)
  INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at)
  SELECT ${eventId}, c.id, c.org_id, c.last_sequence, '${event}', call_event_payload(ROW(c.*)::calls, '${event}', ${at}), ${at}
    FROM changed c
  RETURNING call_id, payload`;

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

/** Inserts a `queued` call and its `call.queued` event (sequence 1), in one statement. */
export async function insertQueuedCall(em: EntityManager, call: Omit<QueuedCall, 'id' | 'createdAt'>): Promise<QueuedCall> {
  const row: QueuedCall = { ...call, id: newId('call'), createdAt: new Date() };
  await em.query(
    withEvent(
      `INSERT INTO calls (id, org_id, payer_org_id, agent_id, contact_id, campaign_id, direction, status, phone_number, our_number, simulate, last_sequence, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $10, 1, $11, $11)`,
      'call.queued',
      '$12',
      '$11',
    ),
    [row.id, row.orgId, row.payerOrgId, row.agentId, row.contactId, row.campaignId, row.direction, row.phoneNumber, row.ourNumber, JSON.stringify(row.simulate), row.createdAt, newId('evt')],
  );
  return row;
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
      WHERE id = ANY($1) AND status NOT IN ${TERMINAL}
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

/** queued → ringing, at the time the carrier started ringing. False when it already moved on. */
export async function markRinging(em: EntityManager, callId: string, at: Date): Promise<boolean> {
  const rows = await em.query(
    withEvent(`UPDATE calls SET status = 'ringing', last_sequence = last_sequence + 1, updated_at = now() WHERE id = $1 AND status = 'queued'`, 'call.ringing', '$3', '$2'),
    [callId, at, newId('evt')],
  );
  return rows.length > 0;
}

/** ringing → in_progress (answered) at `at`. False when it was not ringing. */
export async function markInProgress(em: EntityManager, callId: string, at: Date): Promise<boolean> {
  const rows = await em.query(
    withEvent(
      `UPDATE calls SET status = 'in_progress', started_at = $2, last_sequence = last_sequence + 1, updated_at = now() WHERE id = $1 AND status = 'ringing'`,
      'call.in_progress',
      '$3',
      '$2',
    ),
    [callId, at, newId('evt')],
  );
  return rows.length > 0;
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
 * Ends an unfinished call with its terminal status, reason, duration and charge, and writes
 * `call.completed`. The outcome is the simulated script's for a completed call, `unreachable`
 * for one never answered, none for one canceled. Null when the call had already ended.
 */
export async function markEnded(
  em: EntityManager,
  callId: string,
  end: { status: TerminalStatus; endReason: EndReason; durationSeconds: number; chargeMicros: bigint; at: Date },
): Promise<EndedCall | null> {
  const rows = await em.query(
    withEvent(
      `UPDATE calls SET status = $2::varchar, end_reason = $3, duration_seconds = $4, charge_micros = $5, ended_at = $6,
              outcome = CASE $2::varchar WHEN 'completed' THEN simulate->>'outcome' WHEN 'canceled' THEN NULL ELSE 'unreachable' END,
              last_sequence = last_sequence + 1, updated_at = now()
        WHERE id = $1 AND status NOT IN ${TERMINAL}`,
      'call.completed',
      '$7',
      '$6',
    ),
    [callId, end.status, end.endReason, end.durationSeconds, end.chargeMicros.toString(), end.at, newId('evt')],
  );
  if (rows.length === 0) return null;
  const p = rows[0].payload;
  return {
    id: callId,
    orgId: p.org_id,
    campaignId: p.campaign_id,
    status: p.status as TerminalStatus,
    outcome: p.outcome,
    phoneNumber: p.phone_number,
    durationSeconds: p.duration_seconds,
  };
}

/** The current status of a call, locking it for the caller's transaction. */
export async function lockCall(em: EntityManager, callId: string): Promise<{ status: CallStatus; startedAt: Date | null; dialedAt: Date | null; orgId: string; payerOrgId: string; simulate: SimulateScript } | null> {
  const [row] = await em.query('SELECT status, started_at, dialed_at, org_id, payer_org_id, simulate FROM calls WHERE id = $1 FOR UPDATE', [callId]);
  return row ? { status: row.status, startedAt: row.started_at, dialedAt: row.dialed_at, orgId: row.org_id, payerOrgId: row.payer_org_id, simulate: row.simulate } : null;
}
