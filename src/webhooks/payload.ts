import { CALL_EVENT_FIELDS } from '../calls/call-event.entity.js';
import { OPERATIONAL_EVENT_FIELDS } from '../events/event-types.js';

/** Call and operational event fields: an endpoint's maps apply to every event it gets, so they are checked against all. */
const EVENT_FIELDS: readonly string[] = [...CALL_EVENT_FIELDS, ...OPERATIONAL_EVENT_FIELDS];

/** An endpoint's body customization (SPEC.md §6.3). */
export interface Customization {
  field_aliases: Record<string, string>;
  extra_payload: Record<string, unknown>;
}

/** Longest payload field name, original or alias. */
export const MAX_FIELD_NAME_LENGTH = 200;

/** Receivers copying the body into a plain object would set its prototype or shadow its constructor. */
export const RESERVED_ALIASES: readonly string[] = ['__proto__', 'constructor', 'prototype'];

const deliveredName = (field: string, aliases: Readonly<Record<string, unknown>>): string =>
  Object.hasOwn(aliases, field) ? (aliases[field] as string) : field;

/** The map and key at fault, and why. */
export interface CustomizationProblem {
  path: ['field_aliases' | 'extra_payload', string];
  message: string;
}

function aliasProblem(alias: unknown): string | null {
  if (typeof alias !== 'string') return 'must be a string';
  if (alias.length < 1 || alias.length > MAX_FIELD_NAME_LENGTH) return `must be 1 to ${MAX_FIELD_NAME_LENGTH} characters long`;
  if (alias.includes('\u0000')) return 'must not contain the NUL character';
  if (RESERVED_ALIASES.includes(alias)) return 'cannot be __proto__, constructor or prototype';
  return null;
}

/**
 * The first reason these maps would not deliver exactly what they say, or null: an alias key
 * that is no event field (a typo renames nothing), an unusable alias, or a body name given twice.
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
    const name = alias as string; // aliasProblem refuses any other
    const other = taken.get(name);
    if (other !== undefined) return { path: at, message: `renames to "${name}", the name the field "${other}" is delivered under` };
    taken.set(name, field);
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
 * The delivery body, serialized once (the signature covers these bytes): aliased event fields,
 * then `extra_payload`. Null prototype, so keys like `constructor` are delivered as configured;
 * on a name clash in stored rows the event's field wins.
 */
export function buildBody(event: Record<string, unknown>, custom: Customization): string {
  const body = Object.create(null) as Record<string, unknown>;
  const put = (name: string, value: unknown) => {
    if (!Object.hasOwn(body, name)) body[name] = value;
  };
  for (const [field, value] of Object.entries(event)) put(deliveredName(field, custom.field_aliases), value);
  for (const [key, value] of Object.entries(custom.extra_payload)) put(key, value);
  return JSON.stringify(body);
}
