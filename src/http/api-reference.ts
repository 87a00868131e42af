import { openApiDocument, type JsonSchema, type OpenApiDocument, type Operation } from './openapi.js';
import type { RouteDoc } from './route-doc.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const cell = (text: string | undefined) => (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');

const refName = (ref: string) => ref.split('/').pop()!;

/** A schema's type in a few words: `string (date-time) or null`, `array of [Agent](#agent)`, `one of: a, b`. */
function typeOf(schema: JsonSchema): string {
  if (schema.$ref) return `[${refName(schema.$ref)}](#${refName(schema.$ref).toLowerCase()})`;
  if (schema.not && Object.keys(schema.not).length === 0) return 'nothing';
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const main = types.filter((type) => type !== 'null');
  let text = main.join(' or ') || 'any';
  if (schema.enum)
    text = `one of: ${schema.enum
      .filter((value) => value !== null)
      .map((value) => `\`${value}\``)
      .join(', ')}`;
  else if (main[0] === 'array') text = `array of ${schema.items ? typeOf(schema.items) : 'any'}`;
  else if (main[0] === 'object' && schema.patternProperties) text = `map of ${Object.values(schema.patternProperties).map(typeOf).join(' or ')}`;
  const limits = [
    schema.format,
    schema.pattern && `pattern \`${schema.pattern}\``,
    schema.minimum !== undefined && `≥ ${schema.minimum}`,
    schema.maximum !== undefined && `≤ ${schema.maximum}`,
    schema.minLength !== undefined && `≥ ${schema.minLength} chars`,
    schema.maxLength !== undefined && `≤ ${schema.maxLength} chars`,
    schema.default !== undefined && `default \`${JSON.stringify(schema.default)}\``,
  ].filter(Boolean);
  if (limits.length) text += ` (${limits.join(', ')})`;
  if (types.includes('null')) text += ' or null';
  return text;
}

function fieldRows(schema: JsonSchema, prefix = ''): string[] {
  const required = schema.required ?? [];
  const rows: string[] = [];
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    rows.push(`| \`${prefix}${name}\` | ${cell(typeOf(field))} | ${required.includes(name) ? 'yes' : 'no'} | ${cell(field.description)} |`);
    if (field.properties && !field.$ref) rows.push(...fieldRows(field, `${prefix}${name}.`));
  }
  return rows;
}

function schemaMarkdown(schema: JsonSchema): string[] {
  if (!schema.properties || schema.$ref) return [`${typeOf(schema)}${schema.additionalProperties === true ? ' (any fields)' : ''}`, ''];
  const lines = ['| Field | Type | Required | Notes |', '|---|---|---|---|', ...fieldRows(schema), ''];
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    if (schema[keyword]) lines.push(`Also: \`${keyword}\` ${cell(JSON.stringify(schema[keyword]))}`, '');
  }
  return lines;
}

function operationMarkdown(path: string, method: string, operation: Operation, document: OpenApiDocument): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, '', `**${operation.summary}**`, '', operation.description, ''];
  const params = (operation.parameters ?? []).map((p) => ('$ref' in p ? document.components.parameters[refName(p.$ref)] : p));
  if (params.length) {
    lines.push('| Parameter | In | Required | Type | Notes |', '|---|---|---|---|---|');
    for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${cell(typeOf(p.schema))} | ${cell(p.description)} |`);
    lines.push('');
  }
  if (operation.requestBody) lines.push('Request body:', '', ...schemaMarkdown(operation.requestBody.content['application/json'].schema));
  lines.push('| Status | Body | Meaning |', '|---|---|---|');
  for (const [status, response] of Object.entries(operation.responses)) {
    const schema = response.content?.['application/json']?.schema;
    const body = !schema ? 'none' : Number(status) >= 400 ? '[Error](#error)' : cell(typeOf(schema.$ref ? schema : { type: 'object' }));
    lines.push(`| ${status} | ${body} | ${cell(response.description)} |`);
  }
  lines.push('');
  for (const [status, response] of Object.entries(operation.responses)) {
    const schema = response.content?.['application/json']?.schema;
    if (Number(status) < 300 && schema && !schema.$ref) lines.push(`Response ${status}:`, '', ...schemaMarkdown(schema));
    const csv = response.content?.['text/csv']?.schema;
    if (csv) lines.push(`Response ${status} with \`Accept: text/csv\`: ${csv.description}`, '');
  }
  return lines;
}

export function apiReferenceMarkdown(document: OpenApiDocument): string {
  const lines = [
    '# Ringlane API reference',
    '',
    '<!-- Generated from the route table by `npm run docs:api`; a test fails when it is stale. Do not edit. -->',
    '',
    document.info.description,
    '',
    'The same document as OpenAPI 3.1: [`openapi.json`](openapi.json), also served at `GET /v1/openapi.json`.',
    '',
  ];
  for (const tag of document.tags) {
    lines.push(`## ${tag.name}`, '');
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation?.tags.includes(tag.name)) lines.push(...operationMarkdown(path, method, operation, document));
      }
    }
  }
  lines.push('## Schemas', '');
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    lines.push(`### ${name}`, '', ...(schema.description ? [schema.description, ''] : []), ...schemaMarkdown(schema));
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The files `npm run docs:api` writes, by path from the repository root. */
export function apiReferenceFiles(routes: readonly RouteDoc[]): Record<string, string> {
  const document = openApiDocument(routes);
  return {
    'docs/openapi.json': `${JSON.stringify(document, null, 2)}\n`,
    'docs/api-reference.md': apiReferenceMarkdown(document),
  };
}
