import type { RequestHandler } from 'express';
import Joi from 'joi';
import joiToJson from 'joi-to-json';
import type { RouteDoc } from './route-doc.js';
import { idParamsResource } from './schemas.js';

/** A JSON Schema (2020-12) as joi-to-json writes it: the keywords read here and in the reference, and any other. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  description?: string;
  enum?: Array<string | number | boolean | null>;
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
  not?: JsonSchema;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  [keyword: string]: unknown;
}

export type Parameter = { name: string; in: 'path' | 'query' | 'header'; required: boolean; description?: string; schema: JsonSchema };
type Content = Record<string, { schema: JsonSchema }>;
export type Response = { description: string; headers?: Record<string, { description: string; schema: JsonSchema }>; content?: Content };

export type Operation = {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  'x-ringlane-capability': string | null;
  'x-ringlane-tenant'?: string;
  parameters?: Array<Parameter | { $ref: string }>;
  requestBody?: { required: boolean; content: Content };
  responses: Record<string, Response>;
};

/** The OpenAPI 3.1 document, as far as it is built here. */
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: Array<{ url: string }>;
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Partial<Record<RouteDoc['method'], Operation>>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme: string; description: string }>;
    parameters: Record<string, Parameter>;
    schemas: Record<string, JsonSchema>;
  };
};

/** Writes through `ApiRouter` and the admin API honour `Idempotency-Key`; signing in does not. */
const isIdempotent = (route: RouteDoc) => route.method === 'post' && route.caller !== 'anyone';

// joi-to-json's types declare a named `parse`; at run time the CommonJS module is that function.
const parse = joiToJson as unknown as typeof joiToJson.parse;

/** CONTRACT.md §2: the shape of every error body. */
const errorSchema = Joi.object({
  error: Joi.object({
    code: Joi.string().required().description('What went wrong, such as `invalid_request` or `contact_not_found`.'),
    message: Joi.string().required().description('For people; may change.'),
    details: Joi.array()
      .items(Joi.object({ path: Joi.string().required(), message: Joi.string().required() }))
      .description('`invalid_request`: every problem with the input, with where it is.'),
    required: Joi.string().description('`missing_capability`: the capability the request needs.'),
    field: Joi.string().description('`above_reseller_limit`: the field over the ceiling.'),
    limit: Joi.number().integer().description('`above_reseller_limit`: the ceiling of `field`; `tenant_limit_reached`: how many tenants the account may have.'),
    from: Joi.string().description('`invalid_state_transition`: the current state.'),
    to: Joi.string().description('`invalid_state_transition`: the state asked for.'),
    request_id: Joi.string().description('`internal_error`: the id to quote when asking about it.'),
  }).required(),
})
  .id('Error')
  .description('Every error body: `{error: {code, message}}`, with the members some codes add (docs/api-guide.md, "Errors").');

const TITLES: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Service unavailable',
};

/** joi-to-json 5 writes `.pattern(/re/, schema)` also as a property named `/re/`, which is not in the API. */
function dropPatternNames(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as JsonSchema;
  for (const pattern of Object.keys(node.patternProperties ?? {})) delete node.properties?.[`/${pattern}/`];
  for (const value of Object.values(node)) dropPatternNames(value);
}

function toJsonSchema(schema: Joi.Schema, components: Record<string, JsonSchema>): JsonSchema {
  const { schemas, ...converted } = parse(schema, 'open-api-3.1') as JsonSchema & { schemas?: Record<string, JsonSchema> };
  dropPatternNames(converted);
  dropPatternNames(schemas);
  Object.assign(components, schemas);
  return converted;
}

/** `/v1/contacts/:id` → `/v1/contacts/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** A route's error codes by status: those its kind of route always can, plus its service's. */
export function errorCodes(route: RouteDoc): Map<number, string[]> {
  const codes = new Map<number, string[]>();
  const add = (status: number, ...more: readonly string[]) => codes.set(status, [...new Set([...(codes.get(status) ?? []), ...more])]);
  add(400, 'invalid_request');
  if (route.caller !== 'anyone') add(401, 'unauthorized');
  if (route.caller === 'member') {
    add(403, 'tenant_header_requires_api_key', 'tenant_not_allowed_for_key', 'not_a_reseller');
    if (route.capability) add(403, 'missing_capability', 'tenant_disabled');
    if (route.tenant === 'forbidden') add(403, 'not_available_for_tenant');
    add(404, 'tenant_not_found');
  }
  const resource = route.params && idParamsResource(route.params);
  if (resource) add(404, `${resource}_not_found`);
  if (isIdempotent(route)) {
    add(409, 'idempotency_key_in_use');
    add(422, 'idempotency_key_reused');
  }
  if (route.body) add(413, 'payload_too_large');
  for (const [status, more] of Object.entries(route.errors ?? {})) add(Number(status), ...more);
  add(500, 'internal_error');
  add(503, 'service_unavailable');
  return codes;
}

function describeCaller(route: RouteDoc): string {
  const lines = [];
  if (route.caller === 'anyone') lines.push('No credential needed.');
  else lines.push('Needs an API key or a session token (`Authorization: Bearer ...`).');
  if (route.caller === 'member') {
    lines.push(route.capability ? `A write: needs the \`${route.capability}\` capability.` : 'A read: needs no capability.');
    lines.push(
      route.tenant === 'forbidden'
        ? 'Closed inside a tenant: with `X-Tenant-Id` it answers 403 `not_available_for_tenant`.'
        : 'A reseller may act inside one of its tenants with `X-Tenant-Id`.',
    );
  }
  if (isIdempotent(route)) lines.push('Accepts an `Idempotency-Key` header.');
  return lines.join(' ');
}

function parameters(route: RouteDoc, components: Record<string, JsonSchema>): Array<Parameter | { $ref: string }> {
  const list: Array<Parameter | { $ref: string }> = [];
  for (const where of ['path', 'query'] as const) {
    const schema = where === 'path' ? route.params : route.query;
    if (!schema) continue;
    const converted = toJsonSchema(schema, components);
    const required: string[] = converted.required ?? [];
    for (const [name, property] of Object.entries<JsonSchema>(converted.properties ?? {})) {
      const { description, ...rest } = property;
      list.push({ name, in: where, required: where === 'path' || required.includes(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  if (route.caller === 'member') list.push({ $ref: '#/components/parameters/TenantId' });
  if (isIdempotent(route)) list.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return list;
}

function responses(route: RouteDoc, components: Record<string, JsonSchema>): Record<string, Response> {
  const success: Response = { description: TITLES[route.status] };
  if (route.status !== 204) {
    if (!route.response) throw new Error(`${route.method.toUpperCase()} ${route.path}: a route that answers a body must declare its response schema`);
    success.content = { 'application/json': { schema: toJsonSchema(route.response, components) } };
    if (route.csv !== undefined) {
      success.content['text/csv'] = { schema: { type: 'string', description: route.csv } };
      success.headers = {
        'Content-Disposition': { description: 'With `text/csv`: `attachment; filename="..."`.', schema: { type: 'string' } },
        Vary: { description: '`Accept`: the format follows it.', schema: { type: 'string' } },
      };
    }
  }
  const all: Record<string, Response> = { [route.status]: success };
  for (const [status, codes] of errorCodes(route)) {
    all[status] = {
      description: `${TITLES[status]}: ${codes.map((code) => `\`${code}\``).join(', ')}.`,
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 1 } } } } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error', properties: { error: { properties: { code: { enum: codes } } } } } } },
    };
  }
  return all;
}

const operationId = (route: RouteDoc) =>
  `${route.method}${route.path
    .replace(/^\/v1/, '')
    .split(/[/-]/)
    .filter(Boolean)
    .map((word) => (word.startsWith(':') ? `By${word[1].toUpperCase()}${word.slice(2)}` : `${word[0].toUpperCase()}${word.slice(1)}`))
    .join('')
    .replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}`;

const tagOf = (route: RouteDoc) => route.path.split('/')[2];

/** The `/v1` OpenAPI 3.1 document, built from the route table: Joi schemas are validation and documentation. */
export function openApiDocument(routes: readonly RouteDoc[]): OpenApiDocument {
  const components: Record<string, JsonSchema> = {};
  const errorRef = toJsonSchema(errorSchema, components);
  if (errorRef.$ref !== '#/components/schemas/Error') throw new Error('the Error schema must be named');
  const paths: OpenApiDocument['paths'] = {};
  const api = routes.filter((route) => route.path.startsWith('/v1/'));
  for (const route of api) {
    const params = parameters(route, components);
    const operation: Operation = {
      operationId: operationId(route),
      summary: route.summary,
      description: describeCaller(route),
      tags: [tagOf(route)],
      ...(route.caller === 'anyone' ? { security: [] } : {}),
      'x-ringlane-capability': route.capability ?? null,
      ...(route.caller === 'member' ? { 'x-ringlane-tenant': route.tenant ?? 'allowed' } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: toJsonSchema(route.body, components) } } } } : {}),
      responses: responses(route, components),
    };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ringlane API',
      version: '1',
      description:
        'Ringlane: a reseller platform for voice agents. Every error body is `{"error": {"code", "message", ...}}`; lists are `{"data": [...], "next_cursor"}` with `limit` (1-100, default 20) and `cursor`; ids are opaque strings with a type prefix; times are ISO 8601 UTC; money is a decimal string with 6 fractional digits beside a `currency`.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    tags: [...new Set(api.map(tagOf))].map((name) => ({ name, description: `The routes under \`/v1/${name}\`.` })),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key (`rk_live_...`) or a session token from `POST /v1/sessions`.' } },
      parameters: {
        TenantId: {
          name: 'X-Tenant-Id',
          in: 'header',
          required: false,
          description:
            "A reseller's API key acts inside this tenant (not with a session token). A key restricted to some tenants (`tenant_ids`) needs this header, naming one of them: anything else is 403 `tenant_not_allowed_for_key`.",
          schema: { type: 'string' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'The same key from the same credential, with the same body, within 24 hours replays the first success (`Idempotent-Replayed: true`); errors are not stored, so a failed request may be sent again with its key.',
          schema: { type: 'string', maxLength: 255 },
        },
      },
      schemas: components,
    },
  };
}

/** `GET /v1/openapi.json`, unauthenticated; changes only with a deploy, so built once and cacheable for an hour. */
export function openApiRoute(routes: readonly RouteDoc[]): RequestHandler {
  let document: OpenApiDocument | null = null;
  return (_req, res) => {
    document ??= openApiDocument(routes);
    res.set('Cache-Control', 'public, max-age=3600').json(document);
  };
}
