/** What customizes an endpoint's deliveries (SPEC.md §6.3). */
export interface Customization {
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
}

/**
 * The body of a delivery, serialized once (the signature covers exactly these bytes):
 * the event's SPEC.md §6.1 fields, then `field_aliases` renames keys, then `extra_payload`
 * adds its static keys. A static key never replaces a field of the event (after renaming),
 * so the envelope a receiver relies on stays intact.
 */
export function buildBody(event: Record<string, unknown>, custom: Customization): string {
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) renamed[custom.field_aliases[key] ?? key] = value;
  for (const [key, value] of Object.entries(custom.extra_payload)) {
    if (!(key in renamed)) renamed[key] = value;
  }
  return JSON.stringify(renamed);
}
