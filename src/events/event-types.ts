/**
 * The names of every event Ringlane delivers and lists (CONTRACT.md §4 "Event types and
 * endpoint filters"): the one list that endpoint validation (`event_types`), the feed's `type`
 * filter, the delivery log's `event` filter, the relay's matching and the docs use.
 */

/** A call's lifecycle events, in the order a call goes through them (CONTRACT.md "Calls"). */
export const CALL_EVENT_TYPES = ['call.queued', 'call.ringing', 'call.in_progress', 'call.completed'] as const;

/**
 * Events about the account rather than a call. Each goes only to the endpoints that list it in
 * `event_types`; its body is `{event, org_id, occurred_at, ...}` with the fields of
 * `OperationalEventFields`.
 */
export const OPERATIONAL_EVENT_TYPES = ['webhook_endpoint.disabled', 'tenant.disabled', 'tenant.enabled', 'balance.low'] as const;

/** Every event name, call events first. */
export const EVENT_TYPES = [...CALL_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES] as const;

export type CallEventType = (typeof CALL_EVENT_TYPES)[number];
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/** The fields each operational event carries besides `event`, `org_id` and `occurred_at` (CONTRACT.md §4). */
export interface OperationalEventFields {
  'webhook_endpoint.disabled': { endpoint_id: string; reason: 'failing' | 'gone'; last_error: string | null };
  'tenant.disabled': { tenant_id: string };
  'tenant.enabled': { tenant_id: string };
  /** Money as the API writes it: decimal strings with 6 fractional digits. */
  'balance.low': { balance: string; currency: string; threshold: string };
}

/**
 * Every field an operational event's body can have besides the three every body has: with the
 * call events' fields, the names a delivered body can hold (what `field_aliases` may rename and
 * `extra_payload` may not reuse).
 */
export const OPERATIONAL_EVENT_FIELDS = ['endpoint_id', 'reason', 'last_error', 'tenant_id', 'balance', 'currency', 'threshold'] as const satisfies readonly OperationalField[];

type OperationalField = { [E in OperationalEventType]: keyof OperationalEventFields[E] }[OperationalEventType];
/** Compiles only while OPERATIONAL_EVENT_FIELDS names every field of OperationalEventFields. */
const everyFieldListed: Exclude<OperationalField, (typeof OPERATIONAL_EVENT_FIELDS)[number]> extends never ? true : never = true;
void everyFieldListed;
