import type Joi from 'joi';
import { AppError, InvalidRequestError } from '../lib/errors.js';

const OPTIONS: Joi.ValidationOptions = { abortEarly: false, allowUnknown: false, convert: true, errors: { wrap: { label: '"' } } };

/**
 * What each schema made of an empty query (its defaults), or null for a schema that has a default
 * made by a function (a time, say), validated each time. Most reads come without a query, and Joi's
 * walk of the schema cost them more than any other step of an authenticated read but the SQL.
 */
const emptyQueries = new WeakMap<Joi.Schema, Record<string, unknown> | null>();

/** Validating `{}` gives the same each time: no default of the schema or of its keys is a function. */
function constantDefaults(schema: Joi.Schema): boolean {
  const keys = Object.keys((schema.describe().keys as Record<string, unknown> | undefined) ?? {});
  return [schema, ...keys.map((key) => schema.extract(key))].every((s) => typeof s.$_getFlag('default') !== 'function');
}

/** Refuses unknown fields and lists every problem in `details`; returns the converted value. */
export function validate<T>(schema: Joi.Schema, input: unknown, where: 'body' | 'query' | 'params'): T {
  const empty = where === 'query' && typeof input === 'object' && input !== null && Object.keys(input).length === 0;
  if (empty) {
    const known = emptyQueries.get(schema);
    // A copy: the caller may change what it got.
    if (known) return { ...known } as T;
  }
  const result = schema.validate(input === undefined && where === 'body' ? {} : input, OPTIONS);
  const error = result.error;
  // A schema may name its own error (an id that cannot exist is a 404: see `idParams`).
  if (error instanceof AppError) throw error;
  if (error) {
    const details = error.details.map((d) => ({ path: d.path.join('.') || where, message: d.message }));
    throw new InvalidRequestError(`Invalid ${where}: ${details.map((d) => d.message).join('; ')}`, details);
  }
  if (empty && !emptyQueries.has(schema)) emptyQueries.set(schema, constantDefaults(schema) ? { ...(result.value as Record<string, unknown>) } : null);
  return result.value as T;
}
