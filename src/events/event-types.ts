// The one list of event names: endpoint validation, feed and delivery-log filters, the relay and the docs.

/** A call's lifecycle events, in the order a call goes through them (CONTRACT.md "Calls"). */
export const CALL_EVENT_TYPES = ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'] as const;

/** Account events; each goes only to endpoints listing it in `event_types`. */
export const OPERATIONAL_EVENT_TYPES = ['webhook_endpoint.disabled', 'tenant.disabled', 'tenant.enabled', 'balance.low', 'tenant.spend_threshold'] as const;

/** Every event name, call events first. */
export const EVENT_TYPES = [...CALL_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES] as const;

export type CallEventType = (typeof CALL_EVENT_TYPES)[number];
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/** Fields of each operational event besides `event`, `org_id`, `occurred_at` (CONTRACT.md §4). */
export interface OperationalEventFields {
  'webhook_endpoint.disabled': { endpoint_id: string; reason: 'failing' | 'gone'; last_error: string | null };
  'tenant.disabled': { tenant_id: string };
  'tenant.enabled': { tenant_id: string };
  /** Money as the API writes it: decimal strings with 6 fractional digits. */
  'balance.low': { balance: string; currency: string; threshold: string };
  /** A reseller's: its tenant's month's spend reached a threshold of its limit (CONTRACT.md §5); `month` is `YYYY-MM`. */
  'tenant.spend_threshold': { tenant_id: string; threshold_percent: 80 | 100; spent: string; limit: string; currency: string; month: string };
}

/** With the call events' fields, what a delivered body can hold (`field_aliases` may rename, `extra_payload` not reuse). */
export const OPERATIONAL_EVENT_FIELDS = [
  'endpoint_id',
  'reason',
  'last_error',
  'tenant_id',
  'balance',
  'currency',
  'threshold',
  'threshold_percent',
  'spent',
  'limit',
  'month',
] as const satisfies readonly OperationalField[];

type OperationalField = { [E in OperationalEventType]: keyof OperationalEventFields[E] }[OperationalEventType];
/** Compiles only while OPERATIONAL_EVENT_FIELDS names every field of OperationalEventFields. */
const everyFieldListed: Exclude<OperationalField, (typeof OPERATIONAL_EVENT_FIELDS)[number]> extends never ? true : never = true;
void everyFieldListed;
