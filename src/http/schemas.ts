import Joi from 'joi';
import { parseMoney } from '../lib/money.js';

/** A decimal amount such as "12.50" or "-3" (at most 6 fractional digits), converted to micros. */
export const money = () =>
  Joi.string()
    .custom((value: string, helpers) => {
      const micros = parseMoney(value);
      return micros === null ? helpers.error('money.format') : micros;
    })
    .messages({ 'money.format': '{{#label}} must be a decimal string with at most 6 fractional digits, such as "12.50"' });

/** A non-negative money amount. */
export const price = () =>
  money().custom((micros: bigint, helpers) => (micros < 0n ? helpers.error('money.negative') : micros)).messages({
    'money.negative': '{{#label}} must not be negative',
  });

function isIanaZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A real IANA time zone name, such as "Europe/Berlin". */
export const timezone = () =>
  Joi.string()
    .max(64)
    .custom((value: string, helpers) => (isIanaZone(value) ? value : helpers.error('timezone.unknown')))
    .messages({ 'timezone.unknown': '{{#label}} must be an IANA time zone name, such as "America/New_York"' });

export const currency = () => Joi.string().pattern(/^[A-Z]{3}$/).messages({ 'string.pattern.base': '{{#label}} must be a 3-letter ISO 4217 code' });

/** A phone number in E.164 form, such as "+14155550123". */
export const e164 = () =>
  Joi.string()
    .pattern(/^\+[1-9]\d{6,14}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be an E.164 phone number, such as "+14155550123"' });

/** The `:id` path parameter of a resource: ids are at most 40 characters (CONTRACT.md §2 "Ids"). */
export const idParams = Joi.object({ id: Joi.string().max(40).required() });
