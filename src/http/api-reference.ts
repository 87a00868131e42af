import { openApiDocument } from './openapi.js';
import type { RouteDoc } from './route-doc.js';

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

const schemaBlock = (schema: Json) => ['```json', JSON.stringify(schema, null, 2), '```'];

const cell = (text: unknown) => String(text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** One operation of the document, as Markdown. */
function operationMarkdown(path: string, method: string, operation: Json, document: Json): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}`, '', `**${operation.summary}**`, '', operation.description, ''];
  const params = (operation.parameters ?? []).map((p: Json) => (p.$ref ? document.components.parameters[p.$ref.split('/').pop()] : p));
  if (params.length) {
    lines.push('| Parameter | In | Required | Schema | Description |', '|---|---|---|---|---|');
    for (const p of params) lines.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | \`${cell(JSON.stringify(p.schema))}\` | ${cell(p.description)} |`);
    lines.push('');
  }
  if (operation.requestBody) lines.push('Request body:', '', ...schemaBlock(operation.requestBody.content['application/json'].schema), '');
  lines.push('| Status | Meaning |', '|---|---|');
  for (const [status, response] of Object.entries<Json>(operation.responses)) lines.push(`| ${status} | ${cell(response.description)} |`);
  lines.push('');
  for (const [status, response] of Object.entries<Json>(operation.responses)) {
    const schema = response.content?.['application/json']?.schema;
    if (Number(status) < 300 && schema && Object.keys(schema).length) lines.push(`Response ${status}:`, '', ...schemaBlock(schema), '');
  }
  return lines;
}

/** The document rendered for reading: every operation, then the shared schemas. */
export function apiReferenceMarkdown(document: Json): string {
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
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const method of METHODS) if (item[method]?.tags.includes(tag.name)) lines.push(...operationMarkdown(path, method, item[method], document));
    }
  }
  lines.push('## Schemas', '');
  for (const [name, schema] of Object.entries<Json>(document.components.schemas)) lines.push(`### ${name}`, '', ...schemaBlock(schema), '');
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
