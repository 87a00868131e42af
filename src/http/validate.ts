import type Joi from 'joi';
import { AppError, InvalidRequestError } from '../lib/errors.js';

const OPTIONS: Joi.ValidationOptions = { abortEarly: false, allowUnknown: false, convert: true, errors: { wrap: { label: '"' } } };

/** Refuses unknown fields and lists every problem in `details`; returns the converted value. */
export function validate<T>(schema: Joi.Schema, input: unknown, where: 'body' | 'query' | 'params'): T {
  const result = schema.validate(input === undefined && where === 'body' ? {} : input, OPTIONS);
  const error = result.error;
  // A schema may name its own error (an id that cannot exist is a 404: see `idParams`).
  if (error instanceof AppError) throw error;
  if (error) {
    const details = error.details.map((d) => ({ path: d.path.join('.') || where, message: d.message }));
    throw new InvalidRequestError(`Invalid ${where}: ${details.map((d) => d.message).join('; ')}`, details);
  }
  return result.value as T;
}
