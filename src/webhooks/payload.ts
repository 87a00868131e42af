import { CALL_EVENT_FIELDS } from '../calls/call-event.entity.js';
import { OPERATIONAL_EVENT_FIELDS } from '../events/event-types.js';

/**
 * Every field a delivered body can hold: a call event's (SPEC.md §6.1), and those operational
 * events add (CONTRACT.md §4). An endpoint's maps apply to every event it gets, so they are
 * checked against all of them: no event's body can then hold a name twice.
 */
const EVENT_FIELDS: readonly string[] = [...CALL_EVENT_FIELDS, ...OPERATIONAL_EVENT_FIELDS];

/** What customizes an endpoint's deliveries (SPEC.md §6.3). */
export interface Customization {
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
}

/** A payload field name, original or alias. */
export const MAX_FIELD_NAME_LENGTH = 200;

/**
 * Names an alias may not take: receivers that copy the body into a plain object would set its
 * prototype or shadow its constructor instead of reading a field.
 */
export const RESERVED_ALIASES: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** The name `field` is delivered under: its alias, else its own name. */
const deliveredName = (field: string, aliases: Readonly<Record<string, unknown>>): string =>
  Object.hasOwn(aliases, field) ? (aliases[field] as string) : field;

/** Why a customization cannot be delivered as configured: the map and key at fault, and why. */
export interface CustomizationProblem {
  path: ['field_aliases' | 'extra_payload', string];
  message: string;
}

/** Why `alias` cannot be a delivered name, or null when it can. */
function aliasProblem(alias: unknown): string | null {
  if (typeof alias !== 'string') return 'must be a string';
  if (alias.length < 1 || alias.length > MAX_FIELD_NAME_LENGTH) return `must be 1 to ${MAX_FIELD_NAME_LENGTH} characters long`;
  if (alias.includes('\u0000')) return 'must not contain the NUL character';
  if (RESERVED_ALIASES.includes(alias)) return 'cannot be __proto__, constructor or prototype';
  return null;
}

/**
 * The first reason the body an endpoint with these maps would receive is not exactly what
 * they say, or null: every `field_aliases` key is an event field (of a call event or an
 * operational one, EVENT_FIELDS; a typo would rename nothing),
 * every alias a usable name, every top-level name of the body (fields under their delivered
 * names, then `extra_payload` keys) given once, and no `__proto__` key. Create validates the
 * new maps with it, update the maps the endpoint will have after the change.
 */
export function customizationProblem(aliases: Readonly<Record<string, unknown>>, extra: Readonly<Record<string, unknown>>): CustomizationProblem | null {
  const fields = EVENT_FIELDS;
  // Delivered name → the field delivered under it. Fields kept under their own name come first,
  // so an alias onto one of them is the entry at fault, whatever the order of the aliases.
  const taken = new Map<string, string>();
  for (const field of fields) if (!Object.hasOwn(aliases, field)) taken.set(field, field);
  for (const [field, alias] of Object.entries(aliases)) {
    const at: CustomizationProblem['path'] = ['field_aliases', field];
    if (!fields.includes(field)) return { path: at, message: `is not an event field; the fields are ${fields.join(', ')}` };
    const problem = aliasProblem(alias);
    if (problem) return { path: at, message: problem };
    const other = taken.get(alias as string);
    if (other !== undefined) return { path: at, message: `renames to "${alias}", the name the field "${other}" is delivered under` };
    taken.set(alias as string, field);
  }
  for (const key of Object.keys(extra)) {
    const at: CustomizationProblem['path'] = ['extra_payload', key];
    if (key === '__proto__') return { path: at, message: 'cannot be __proto__' };
    const field = taken.get(key);
    if (field !== undefined) return { path: at, message: `is already in the body: the field "${field}" is delivered under this name` };
  }
  return null;
}

/**
 * The body of a delivery, serialized once (the signature covers exactly these bytes): the
 * event's fields (its stored payload: SPEC.md §6.1 for a call event, CONTRACT.md §4 for an
 * operational one) under their delivered names, then the `extra_payload` keys.
 * Built on a null-prototype object, so every own key (`constructor`, `toString`, ...) is
 * delivered as configured. A name already in the body is never overwritten: endpoints accepted
 * under `customizationProblem` have none twice, and for rows stored before that rule the
 * event's fields keep winning over static keys, as they always did.
 */
export function buildBody(event: Record<string, unknown>, custom: Customization): string {
  const body: Record<string, unknown> = Object.create(null);
  const put = (name: string, value: unknown) => {
    if (!Object.hasOwn(body, name)) body[name] = value;
  };
  for (const [field, value] of Object.entries(event)) put(deliveredName(field, custom.field_aliases), value);
  for (const [key, value] of Object.entries(custom.extra_payload)) put(key, value);
  return JSON.stringify(body);
}
