import type { RequestHandler } from 'express';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Json;
}

/** Responses outside the document, since the last `takeViolations()`. */
const violations: string[] = [];

/** The responses that broke the document since the last call; the root hooks fail the test that got them. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

/** A JSON pointer as a URI fragment. */
const pointer = (...parts: string[]) => parts.map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

/** Compiles the document's operations, and validates a body with the schema at a pointer into it. */
function compile(document: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi');
  const validators = new Map<string, ValidateFunction>();
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Json>(document.paths)) {
    // Express matches paths case-insensitively and with or without a trailing slash.
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i');
    for (const [method, operation] of Object.entries<Json>(item)) operations.push({ method, template, pattern, responses: operation.responses });
  }
  const validatorAt = (ref: string) => {
    let validator = validators.get(ref);
    if (!validator) validators.set(ref, (validator = ajv.compile({ $ref: `openapi#/${ref}` })));
    return validator;
  };
  return { operations, validatorAt };
}

/**
 * A middleware that checks every response of a documented `/v1` route against the OpenAPI
 * document: its status is one the operation declares, and its body matches that status's
 * schema. Violations are collected, not thrown: the root `afterEach` hook fails the test.
 */
export function checkResponses(document: () => Json): RequestHandler {
  let compiled: ReturnType<typeof compile> | null = null;
  return (req, res, next) => {
    const path = req.path;
    if (!path.startsWith('/v1/')) return next();
    compiled ??= compile(document());
    const method = req.method.toLowerCase();
    const operation = compiled.operations.find((op) => op.method === method && op.pattern.test(path));
    if (!operation) return next();
    const { validatorAt } = compiled;
    // What was sent, as sent: a JSON answer is written whole by its last call to `end`.
    let sent: string | Buffer | undefined;
    const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] === 'string' || Buffer.isBuffer(args[0])) sent = args[0];
      return end(...args);
    }) as typeof res.end;
    res.on('finish', () => {
      const isJson = /^application\/json\b/.test(String(res.getHeader('content-type') ?? ''));
      const body: unknown = isJson && sent !== undefined ? JSON.parse(String(sent)) : undefined;
      const route = `${req.method} ${operation.template} (${req.originalUrl})`;
      const status = String(res.statusCode);
      const declared = operation.responses[status];
      if (!declared) {
        violations.push(`${route} answered ${status}, which the document does not declare: ${JSON.stringify(body)}`);
        return;
      }
      if (/^text\/csv\b/.test(String(res.getHeader('content-type') ?? ''))) {
        if (!declared.content?.['text/csv']) violations.push(`${route} answered ${status} with CSV, which the document does not declare`);
        return;
      }
      const schema = declared.content?.['application/json']?.schema;
      if (!schema) {
        if (body !== undefined) violations.push(`${route} answered ${status} with a body the document does not declare: ${JSON.stringify(body)}`);
        return;
      }
      const validate = validatorAt(pointer('paths', operation.template, method, 'responses', status, 'content', 'application/json', 'schema'));
      if (!validate(body)) {
        violations.push(`${route} answered ${status} with a body outside the document: ${JSON.stringify(validate.errors)}\nbody: ${JSON.stringify(body)}`);
      }
    });
    next();
  };
}
