import Joi from 'joi';
import { NotFoundError } from '../lib/errors.js';
import { ID_PATTERN } from '../lib/ids.js';
import { formatMoney, MAX_RATE_MICROS, parseMoney, type Micros } from '../lib/money.js';
import { parseUtcTimestamp, UTC_TIME } from '../lib/time.js';

/**
 * A decimal amount such as "12.50" or "-3" (at most 6 fractional digits) of at most `limit`
 * either way, converted to micros.
 */
export const money = (limit: Micros) =>
  Joi.string()
    .custom((value: string, helpers) => {
      const micros = parseMoney(value);
      if (micros === null) return helpers.error('money.format');
      if (micros > limit || micros < -limit) return helpers.error('money.range', { limit: formatMoney(limit) });
      return micros;
    })
    .messages({
      'money.format': '{{#label}} must be a decimal string with at most 6 fractional digits, such as "12.50"',
      'money.range': '{{#label}} must be between -{{#limit}} and {{#limit}}',
    });

/**
 * A response body: its fields are all present (null where there is no value) unless marked
 * `.optional()`; `name` is its schema's name in the OpenAPI document.
 */
export const responseSchema = (name: string, keys: Joi.PartialSchemaMap) => Joi.object(keys).prefs({ presence: 'required' }).id(name);

/** A time as the API writes it: ISO 8601 UTC (CONTRACT.md §2 "Times"). */
export const isoTime = () => Joi.string().isoDate();

const TIME_INPUT_RULE =
  'ISO 8601 UTC ending in Z, `YYYY-MM-DDTHH:MM:SS` with an optional fraction (such as `2026-05-01T09:00:00Z`): a real calendar date and time of the years 0001 to 9999.';

/**
 * A time in a request (a body field or a query filter), the one rule of every time input:
 * ISO 8601 UTC, `YYYY-MM-DDTHH:MM:SS(.fraction)Z` (see `parseUtcTimestamp`), a real calendar
 * date of the years 0001-9999, taken as given. No `.isoDate()`: it rewrites the value (an
 * offset, a date alone, 30 February rolled over) before any other rule sees it.
 */
export const timeInput = (what?: string) =>
  Joi.string()
    .pattern(UTC_TIME)
    // The pattern refuses a malformed value; this, a well-formed one that is no real time.
    .custom((value: string, helpers) => (UTC_TIME.test(value) && !parseUtcTimestamp(value) ? helpers.error('time.invalid') : value))
    .meta({ format: 'date-time' })
    .description(`${what ? `${what}: ` : ''}${TIME_INPUT_RULE}`)
    .messages({
      'string.pattern.base': '{{#label}} must be an ISO 8601 UTC time of the form YYYY-MM-DDTHH:MM:SS(.fraction)Z, such as "2026-05-01T09:00:00Z"',
      'time.invalid': '{{#label}} must be a real date and time (UTC, years 0001 to 9999), such as "2026-05-01T09:00:00Z"',
    });

/** An amount as the API writes it: a decimal string with exactly 6 fractional digits (CONTRACT.md §2 "Money"). */
export const amount = () => Joi.string().pattern(/^-?\d+\.\d{6}$/);

/** An amount (see `money`) from 0 to `limit`. */
export const nonNegativeMoney = (limit: Micros) =>
  money(limit)
    .custom((micros: bigint, helpers) => (micros < 0n ? helpers.error('money.negative') : micros))
    .messages({ 'money.negative': '{{#label}} must not be negative' });

/** A rate (`per_minute`, `per_text`): not negative, at most MAX_RATE_MICROS. */
export const rate = () => nonNegativeMoney(MAX_RATE_MICROS);

/** Whether `zone` is an IANA time zone name this runtime knows (and can compute local times in). */
export function isIanaZone(zone: string): boolean {
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

export const currency = () =>
  Joi.string()
    .pattern(/^[A-Z]{3}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be a 3-letter ISO 4217 code' });

/** A phone number in E.164 form, such as "+14155550123". */
export const e164 = () =>
  Joi.string()
    .pattern(/^\+[1-9]\d{6,14}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be an E.164 phone number, such as "+14155550123"' });

/**
 * A phone number filter in a query string, E.164. An unencoded `+` there decodes to a space
 * (`?phone_number=+14155550123`, as the docs write it) and no E.164 number begins with one:
 * a leading space is read as `+`.
 */
export const e164Filter = () =>
  e164().replace(/^ /, '+').description('E.164, such as `+14155550123`; an unencoded `+` (read as a space in a query string) is taken as `+`.');

/**
 * An id in a body or a query naming another resource. Only its length is checked here: one
 * that names nothing of the organization's is the service's 404 `<resource>_not_found`.
 */
export const idReference = () => Joi.string().max(40);

/**
 * The path parameter `name` holding the id of a `resource` (snake_case). A value that no id
 * can have (too long, NUL, anything outside ID_PATTERN) names no such resource: 404
 * `<resource>_not_found`, as for an id that does not exist.
 */
export const idParams = (resource: string, name = 'id') =>
  Joi.object({
    [name]: Joi.string()
      .pattern(ID_PATTERN)
      .required()
      .error(() => new NotFoundError(resource)),
  }).meta({ resource });

/** The resource whose id a path parameter schema made by `idParams` holds. */
export const idParamsResource = (schema: Joi.Schema): string | undefined =>
  (schema.describe().metas as Array<{ resource?: string }> | undefined)?.find((meta) => meta.resource)?.resource;
