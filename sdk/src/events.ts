// The bodies of webhook deliveries (docs/webhooks.md, "Events and their fields" and "Operational
// events"), as sent before an endpoint's `field_aliases` rename keys or its `extra_payload` adds some.
// The API document lists the event names (`Event.type`) but not these bodies, so they are written
// here; `everyEventTyped` below stops the build when the document names an event this file lacks.
import type { Call, Event } from './generated/types.gen.js';

/** Every event name the API document lists. */
export type EventType = Event['type'];

/** A call's lifecycle events, in the order a call goes through them. */
export type CallEventType = 'call.queued' | 'call.ringing' | 'call.in_progress' | 'call.completed';

/** A change of a call. Every field is present, null where there is no value yet. */
export interface CallEvent {
  event: CallEventType;
  call_id: string;
  /** The organization whose call it is: a tenant's id for a tenant's call. */
  org_id: string;
  /** The call's status after this event. */
  status: Call['status'];
  /** 1, 2, 3 ... per call, in the order of the changes: apply a call's events in this order. */
  sequence: number;
  occurred_at: string;
  /** The other party's number, E.164. */
  phone_number: string;
  direction: Call['direction'];
  outcome: Call['outcome'];
  end_reason: Call['end_reason'];
  duration_seconds: number | null;
  started_at: string | null;
  ended_at: string | null;
  agent_id: string;
  contact_id: string | null;
  campaign_id: string | null;
}

interface OperationalEventBase {
  /** The organization whose event it is. */
  org_id: string;
  occurred_at: string;
}

/** Ringlane switched an endpoint off: `gone` after a 410, `failing` after failing every delivery for long. */
export interface WebhookEndpointDisabledEvent extends OperationalEventBase {
  event: 'webhook_endpoint.disabled';
  endpoint_id: string;
  reason: 'failing' | 'gone';
  last_error: string | null;
}

/** A reseller's `PATCH /v1/tenants/{id}` changed `disabled`. */
export interface TenantDisabledEvent extends OperationalEventBase {
  event: 'tenant.disabled' | 'tenant.enabled';
  tenant_id: string;
}

/** The balance fell below the organization's `low_balance_threshold` (amounts with 6 decimals). */
export interface BalanceLowEvent extends OperationalEventBase {
  event: 'balance.low';
  balance: string;
  currency: string;
  threshold: string;
}

/** A tenant's spend this month first reached 80% or 100% of its `monthly_spend_limit` (the reseller's event). */
export interface TenantSpendThresholdEvent extends OperationalEventBase {
  event: 'tenant.spend_threshold';
  tenant_id: string;
  threshold_percent: 80 | 100;
  spent: string;
  limit: string;
  currency: string;
  /** `YYYY-MM`, UTC. */
  month: string;
}

/** What happens to the account rather than to a call; sent only to endpoints that list it in `event_types`. */
export type OperationalEvent = WebhookEndpointDisabledEvent | TenantDisabledEvent | BalanceLowEvent | TenantSpendThresholdEvent;

/** A delivered webhook body: narrow it on `event`. */
export type WebhookEvent = CallEvent | OperationalEvent;

/** Compiles only while WebhookEvent covers exactly the event names of the API document. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const everyEventTyped: Same<WebhookEvent['event'], EventType> = true;
void everyEventTyped;

/** True for the four call events (they carry `call_id` and `sequence`); false too for a body whose `event` an endpoint renamed. */
export const isCallEvent = (event: WebhookEvent): event is CallEvent => typeof event.event === 'string' && event.event.startsWith('call.');
