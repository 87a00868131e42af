import type { EntityManager } from 'typeorm';
import { newId } from '../lib/ids.js';
import type { Call } from './call.entity.js';
import { CallEvent } from './call-event.entity.js';

export type CallEventName = 'call.queued' | 'call.ringing' | 'call.in_progress' | 'call.completed';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The event body of SPEC.md §6.1, as of the call's current state. */
export function eventPayload(call: Call, event: CallEventName, sequence: number, occurredAt: Date): Record<string, string | number | null> {
  return {
    event,
    call_id: call.id,
    org_id: call.orgId,
    status: call.status,
    sequence,
    occurred_at: occurredAt.toISOString(),
    phone_number: call.phoneNumber,
    direction: call.direction,
    outcome: call.outcome,
    end_reason: call.endReason,
    duration_seconds: call.durationSeconds,
    started_at: iso(call.startedAt),
    ended_at: iso(call.endedAt),
    agent_id: call.agentId,
    contact_id: call.contactId,
    campaign_id: call.campaignId,
  };
}

/**
 * Writes the next event of a call into the outbox, in the caller's transaction (the same one
 * that changed the call's status), with the next `sequence`. The caller saves `call` after.
 */
export async function appendCallEvent(em: EntityManager, call: Call, event: CallEventName, occurredAt: Date): Promise<void> {
  call.lastSequence += 1;
  const row = em.create(CallEvent, {
    id: newId('evt'),
    callId: call.id,
    orgId: call.orgId,
    sequence: call.lastSequence,
    event,
    payload: eventPayload(call, event, call.lastSequence, occurredAt),
    occurredAt,
    relayedAt: null,
  });
  await em.insert(CallEvent, row);
}
