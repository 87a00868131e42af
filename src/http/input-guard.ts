import type { RequestHandler } from 'express';
import { InvalidRequestError } from '../lib/errors.js';

/** Free-form fields need a few levels; thousands would exhaust the stack of joi, JSON.stringify or jsonb. */
export const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Also `__proto__`: JSON.parse keeps it as an own key, but spread, joi and assignment treat it as the prototype. */
function keyProblem(key: string): string | null {
  if (key === '__proto__') return 'must not be "__proto__"';
  return textProblem(key);
}

/** Why a string cannot be stored: Postgres text and jsonb refuse U+0000 and unpaired UTF-16 surrogates. */
function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it holds an unpaired surrogate)';
  return null;
}

// eslint-disable-next-line no-control-regex -- NUL is one of the characters it escapes
const printable = (key: string) => key.replace(/[\u0000\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The first part no route can take, named as `validate` names paths; an explicit stack refuses a million-deep body without recursion. */
export function unreadableInput(input: unknown, root: 'body' | 'query'): { path: string; message: string } | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: input, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return { path, message: `"${path}" ${problem}` };
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_JSON_DEPTH) return { path, message: `"${path}" nests deeper than ${MAX_JSON_DEPTH} levels` };
      for (const [key, item] of Object.entries(value)) {
        const itemPath = depth === 0 ? printable(key) : `${path}.${printable(key)}`;
        const problem = keyProblem(key);
        if (problem) return { path: itemPath, message: `the name of "${itemPath}" ${problem}` };
        if (typeof item === 'string' || (item !== null && typeof item === 'object')) stack.push({ value: item, path: itemPath, depth: depth + 1 });
      }
    }
  }
  return null;
}

/** 400 `invalid_request` for input Postgres cannot store or that would overflow a recursive reader. */
export const refuseUnreadableInput: RequestHandler = (req, _res, next) => {
  const problem = unreadableInput(req.body, 'body') ?? unreadableInput(req.query, 'query');
  if (problem) throw new InvalidRequestError(`The request cannot be accepted: ${problem.message}.`, [problem]);
  next();
};

const decodes = (segment: string): boolean => {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
};

/**
 * Takes a path segment that does not percent-decode (`/v1/events/%ff`) literally, its `%` as
 * `%25`, before routing: Express would refuse the whole request with its own error; this way
 * the route answers as for any id that cannot exist (404 `<resource>_not_found`, `idParams`).
 */
export const literalUndecodablePath: RequestHandler = (req, _res, next) => {
  const end = req.url.indexOf('?');
  const path = end === -1 ? req.url : req.url.slice(0, end);
  if (path.includes('%')) {
    const literal = path
      .split('/')
      .map((segment) => (decodes(segment) ? segment : segment.replace(/%/g, '%25')))
      .join('/');
    if (literal !== path) req.url = literal + (end === -1 ? '' : req.url.slice(end));
  }
  next();
};
