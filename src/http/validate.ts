import type Joi from 'joi';
import { AppError, InvalidRequestError } from '../lib/errors.js';

const OPTIONS: Joi.ValidationOptions = { abortEarly: false, allowUnknown: false, convert: true, errors: { wrap: { label: '"' } } };

/**
 * What each schema made of an empty query (its defaults): most reads come without one, and Joi's
 * walk of the schema cost them more than any other step of an authenticated read but the query
 * itself. A schema's defaults are constants here (none is a function), so the answer cannot change.
 */
const emptyQueries = new WeakMap<Joi.Schema, Record<string, unknown>>();

const isEmpty = (input: unknown): boolean => {
  for (const key in input as object) if (Object.hasOwn(input as object, key)) return false;
  return true;
};

/** Refuses unknown fields and lists every problem in `details`; returns the converted value. */
export function validate<T>(schema: Joi.Schema, input: unknown, where: 'body' | 'query' | 'params'): T {
  const cacheable = where === 'query' && typeof input === 'object' && input !== null && isEmpty(input);
  if (cacheable) {
    const known = emptyQueries.get(schema);
    // A copy: the caller may add to what it got.
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
  if (cacheable && typeof result.value === 'object' && result.value !== null) emptyQueries.set(schema, { ...(result.value as Record<string, unknown>) });
  return result.value as T;
}
