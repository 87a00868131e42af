import Joi from 'joi';
import { idReference, isoTime, responseSchema } from '../http/schemas.js';
import type { Outcome } from '../calls/call.entity.js';
import { OUTCOMES } from '../calls/calls.schemas.js';
import { EVENT_TYPES, type EventType } from '../events/event-types.js';
import { pageQuery } from '../http/pagination.js';
import { type PageParams } from '../lib/pagination.js';
import { InvalidRequestError } from '../lib/errors.js';
import { customizationProblem, type CustomizationProblem } from './payload.js';
import { MAX_TENANT_IDS } from './tenant-events.js';
import { STANDARD_WEBHOOKS_SECRET_PREFIX, standardWebhookKey } from './verify.js';
import { TENANT_EVENTS, type TenantEvents } from './webhook-endpoint.entity.js';

/** SPEC.md §8: `field_aliases`, `extra_payload` and `custom_headers` hold at most 20 entries each. */
export const MAX_MAP_ENTRIES = 20;
export const MAX_URL_LENGTH = 2048;
export const MIN_SECRET_LENGTH = 8;
export const MAX_SECRET_LENGTH = 512;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 1024;
/** `extra_payload` as JSON: it is added to every delivery, so it stays small. */
export const MAX_EXTRA_PAYLOAD_BYTES = 16 * 1024;
/** CONTRACT.md §4: `rate_limit_per_second` is 1–1000 (or null: no limit). */
export const MAX_RATE_LIMIT_PER_SECOND = 1000;
/** CONTRACT.md §4 "Webhook secret rotation": the previous secret keeps signing 24 h by default, 7 days at most. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/**
 * Headers a sender cannot let a caller set: they describe the connection and the framing of
 * the request, so a custom value would break or smuggle requests (compared case-insensitively).
 */
export const FORBIDDEN_CUSTOM_HEADERS: readonly string[] = ['host', 'content-length', 'transfer-encoding', 'connection'];

/** RFC 7230 §3.2.6 `token`: one or more `tchar`. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 7230 `field-value` characters as Node's HTTP client accepts them: HTAB, SP, VCHAR, obs-text. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** True when `name` is a valid HTTP header name (an RFC 7230 token) of at most 256 characters. */
export function isHeaderName(name: string): boolean {
  return name.length <= MAX_HEADER_NAME_LENGTH && TOKEN.test(name);
}

/** True for the headers `custom_headers` may not carry: Host, Content-Length, Transfer-Encoding, Connection. */
export function isForbiddenCustomHeader(name: string): boolean {
  return FORBIDDEN_CUSTOM_HEADERS.includes(name.toLowerCase());
}

/** True when `value` can be sent as a header value: no CR, LF or other control character, at most 1024 characters. */
export function isHeaderValue(value: string): boolean {
  return value.length <= MAX_HEADER_VALUE_LENGTH && FIELD_VALUE.test(value);
}

/**
 * Why `name` cannot be a custom header, or null when it can. The reserved delivery headers
 * (deliver.ts RESERVED_HEADERS: Content-Type, User-Agent, X-Ringlane-*, webhook-*) are
 * accepted: the delivery worker drops their values at send time, compared case-insensitively,
 * and sends its own.
 */
export function customHeaderNameProblem(name: string): string | null {
  if (!isHeaderName(name)) return `is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only, at most ${MAX_HEADER_NAME_LENGTH} characters)`;
  if (isForbiddenCustomHeader(name)) return 'cannot be set: Host, Content-Length, Transfer-Encoding and Connection belong to the connection';
  return null;
}

/** Why `url` cannot be a webhook endpoint's URL, or null when it can. */
export function webhookUrlProblem(url: string): string | null {
  if (url.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters long`;
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (!/^https?:\/\//i.test(url) || /[\s\x00-\x1f\x7f]/.test(url)) return 'must be an absolute http:// or https:// URL';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http:// or https:// URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an absolute http:// or https:// URL';
  if (parsed.hostname === '') return 'must name a host';
  // Credentials in a URL end up in logs and delivery records; use custom_headers instead.
  if (parsed.username !== '' || parsed.password !== '' || /^https?:\/\/[^/?#]*@/i.test(url)) {
    return 'must not contain credentials (user:password@); send them in custom_headers instead';
  }
  return null;
}

/** Why `secret` cannot sign deliveries, or null when it can. */
export function webhookSecretProblem(secret: string): string | null {
  if (secret.length < MIN_SECRET_LENGTH || secret.length > MAX_SECRET_LENGTH) {
    return `must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters long`;
  }
  // Any text signs (its UTF-8 bytes), but one of whitespace alone is a mistake, never a secret.
  if (secret.trim() === '') return 'must not be blank (whitespace only)';
  if (secret.startsWith(STANDARD_WEBHOOKS_SECRET_PREFIX) && standardWebhookKey(secret) === null) {
    return `must be valid base64 after "${STANDARD_WEBHOOKS_SECRET_PREFIX}"`;
  }
  return null;
}

type Helpers = Joi.CustomHelpers;

/** A `custom` error reported at `key` inside the value being validated. */
const errorAt = (helpers: Helpers, code: string, key: string, local: Record<string, unknown> = {}) =>
  helpers.error(code, { ...local, key }, { ...helpers.state, key, path: [...(helpers.state.path ?? []), key] });

const fields = {
  name: Joi.string().trim().min(1).max(200),
  url: Joi.string()
    .custom((value: string, helpers) => {
      const problem = webhookUrlProblem(value);
      return problem ? helpers.error('url.invalid', { problem }) : value;
    })
    .messages({ 'url.invalid': '{{#label}} {{#problem}}' }),
  secret: Joi.string()
    .custom((value: string, helpers) => {
      const problem = webhookSecretProblem(value);
      return problem ? helpers.error('secret.invalid', { problem }) : value;
    })
    .messages({ 'secret.invalid': '{{#label}} {{#problem}}' }),
  rate_limit_per_second: Joi.number().integer().strict().min(1).max(MAX_RATE_LIMIT_PER_SECOND).allow(null),
  outcomes: Joi.array()
    .items(Joi.string().valid(...OUTCOMES))
    .unique(),
  /** CONTRACT.md §4: `[]` (or absent) = every call event; operational events only when listed. */
  event_types: Joi.array()
    .items(Joi.string().valid(...EVENT_TYPES))
    .unique(),
  /** CONTRACT.md §5, a reseller's own endpoint: 'all' adds its tenants' events (see `tenantSelection`). */
  tenant_events: Joi.string()
    .valid(...TENANT_EVENTS)
    .description("`all`: a reseller endpoint that also gets its tenants' events (of `tenant_ids`); `none` (the default): only its own."),
  tenant_ids: Joi.array()
    .items(idReference())
    .max(MAX_TENANT_IDS)
    .unique()
    .description('With `tenant_events: "all"`, the tenants whose events it gets; `[]` (the default): every tenant, including tenants created later.'),
  /**
   * Event field → the name it is delivered under; the names are checked by
   * `customizationProblem`. No `.pattern()`: joi copies a patterned object with
   * Object.assign, which turns an own `__proto__` key into the copy's prototype, so the key
   * would vanish instead of being refused.
   */
  field_aliases: Joi.object().unknown(true).max(MAX_MAP_ENTRIES),
  extra_payload: Joi.object()
    .unknown(true)
    .max(MAX_MAP_ENTRIES)
    .custom((extra: Record<string, unknown>, helpers) => {
      if (Buffer.byteLength(JSON.stringify(extra)) > MAX_EXTRA_PAYLOAD_BYTES) return helpers.error('extra.size', { limit: MAX_EXTRA_PAYLOAD_BYTES });
      return extra;
    })
    .messages({
      'extra.size': '{{#label}} must be at most {{#limit}} bytes as JSON',
    }),
  custom_headers: Joi.object()
    .pattern(
      // Any name (checked below); a regular expression, so the OpenAPI document can say it.
      /.*/,
      Joi.string()
        .max(MAX_HEADER_VALUE_LENGTH)
        .pattern(FIELD_VALUE)
        .messages({ 'string.pattern.base': '{{#label}} must not contain CR, LF or other control characters' }),
    )
    .max(MAX_MAP_ENTRIES)
    .custom((headers: Record<string, string>, helpers) => {
      const seen = new Set<string>();
      for (const name of Object.keys(headers)) {
        const problem = customHeaderNameProblem(name);
        if (problem) return errorAt(helpers, 'header.name', name, { problem });
        // Two spellings of one header would reach the receiver as one, in no defined order.
        if (seen.has(name.toLowerCase())) return errorAt(helpers, 'header.duplicate', name);
        seen.add(name.toLowerCase());
      }
      return headers;
    })
    .messages({
      'header.name': '{{#label}} {{#problem}}',
      'header.duplicate': '{{#label}} is given twice (header names are case-insensitive)',
    }),
};

export interface WebhookEndpointInput {
  name: string;
  url: string;
  secret: string;
  outcomes: Outcome[];
  event_types?: EventType[];
  field_aliases?: Record<string, string>;
  extra_payload?: Record<string, unknown>;
  custom_headers?: Record<string, string>;
  rate_limit_per_second?: number | null;
  tenant_events?: TenantEvents;
  tenant_ids?: string[];
}

export type WebhookEndpointChanges = Partial<WebhookEndpointInput> & { disabled?: boolean };

/** How a refused customization reads in `details`, the way `validate` words joi's problems. */
const customizationDetail = ({ path, message }: CustomizationProblem) => ({ path: path.join('.'), message: `"${path.join('.')}" ${message}` });

/**
 * 400 unless an endpoint with these maps is delivered exactly as they say (`customizationProblem`).
 * Update calls it with the stored maps merged with the changed ones.
 */
export function assertCustomization(aliases: Record<string, unknown>, extra: Record<string, unknown>): void {
  const problem = customizationProblem(aliases, extra);
  if (!problem) return;
  const detail = customizationDetail(problem);
  throw new InvalidRequestError(`Invalid body: ${detail.message}`, [detail]);
}

/**
 * `POST /v1/webhook-endpoints` (SPEC.md §2.5, CONTRACT.md "Webhook endpoint"). Joi runs the
 * check of the maps together only once each field is valid on its own.
 */
export const createWebhookEndpointSchema = Joi.object({
  ...fields,
  name: fields.name.required(),
  url: fields.url.required(),
  secret: fields.secret.required(),
  outcomes: fields.outcomes.required(),
})
  .custom((input: WebhookEndpointInput, helpers) => {
    const problem = customizationProblem(input.field_aliases ?? {}, input.extra_payload ?? {});
    return problem ? helpers.error('customization.invalid', { problem: problem.message }, { ...helpers.state, path: problem.path }) : input;
  })
  .messages({ 'customization.invalid': '{{#label}} {{#problem}}' });

/**
 * `PATCH /v1/webhook-endpoints/{id}`: any field, at least one. A new `secret` rotates it;
 * `disabled: false` re-enables an endpoint switched off after failing; maps replace the stored
 * ones, and the service checks them against the stored maps (`assertCustomization`).
 */
export const updateWebhookEndpointSchema = Joi.object({ ...fields, disabled: Joi.boolean().strict() }).min(1);

/**
 * `POST /v1/webhook-endpoints/{id}/rotate-secret` (CONTRACT.md §4): the new secret, validated as
 * on create, and how long the current one keeps signing beside it (0: retired at once).
 */
export const rotateSecretSchema = Joi.object({
  secret: fields.secret.required(),
  overlap_seconds: Joi.number().integer().strict().min(0).max(MAX_SECRET_OVERLAP_SECONDS).default(DEFAULT_SECRET_OVERLAP_SECONDS),
});

export interface SecretRotationInput {
  secret: string;
  overlap_seconds: number;
}

export type WebhookEndpointsQuery = PageParams;

export const listWebhookEndpointsQuery = Joi.object(pageQuery);

/** CONTRACT.md "Webhook endpoint", as every webhook-endpoints route answers it: never the secret. */
export const webhookEndpointSchema = responseSchema('WebhookEndpoint', {
  id: Joi.string(),
  name: Joi.string(),
  url: Joi.string(),
  has_secret: Joi.boolean(),
  outcomes: Joi.array().items(Joi.string().valid(...OUTCOMES)),
  event_types: Joi.array().items(Joi.string().valid(...EVENT_TYPES)),
  field_aliases: Joi.object().pattern(/.*/, Joi.string()),
  extra_payload: Joi.object().unknown(true),
  custom_headers: Joi.object().pattern(/.*/, Joi.string()),
  disabled: Joi.boolean(),
  rate_limit_per_second: Joi.number().integer().min(1).max(MAX_RATE_LIMIT_PER_SECOND).allow(null),
  tenant_events: Joi.string().valid(...TENANT_EVENTS),
  /** `[]` = every tenant (with `tenant_events: "all"`). */
  tenant_ids: Joi.array().items(Joi.string()),
  /** While a rotation's overlap runs: when the previous secret stops signing; else null. */
  secret_rotation: Joi.object({ previous_expires_at: isoTime() }).allow(null),
  created_at: isoTime(),
});
