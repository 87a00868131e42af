import { ID_PATTERN } from '../lib/ids.js';
import Joi from 'joi';
import type { EntityManager } from 'typeorm';
import { InvalidRequestError } from '../lib/errors.js';

/** CONTRACT.md §2 "Lists": `limit` 1–100 (default 20) and an opaque `cursor`. */
export const pageQuery = {
  limit: Joi.number().integer().min(1).max(100).default(20),
  cursor: Joi.string().max(200),
};

/** The response schema of a list of `item`s (CONTRACT.md §2 "Lists"). */
export const pageOf = (item: Joi.Schema) =>
  Joi.object({ data: Joi.array().items(item).required(), next_cursor: Joi.string().allow(null).required() });

export interface PageParams {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

interface Position {
  created_at: Date;
  id: string;
}

export function encodeCursor(row: Position): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
}

const invalidCursor = () =>
  new InvalidRequestError('The cursor is not one this API returned.', [{ path: 'cursor', message: '"cursor" is invalid' }]);

function decodeCursor(cursor: string): [Date, string] {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Only what encodeCursor makes: an ISO timestamp that round-trips, and an id.
    const createdAt = new Date(at);
    if (typeof at !== 'string' || typeof id !== 'string' || !ID_PATTERN.test(id)) throw new Error('bad cursor');
    if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at) throw new Error('bad cursor');
    return [createdAt, id];
  } catch {
    throw invalidCursor();
  }
}

export interface ListQuery {
  /** Columns to select; must include `id` and `created_at`. */
  select: string;
  from: string;
  /** A condition over `params` ($1, $2, ...), e.g. the organization scope. */
  where: string;
  params: unknown[];
}

/**
 * One page of a list, newest first, by keyset on (created_at, id): stable while rows are
 * added, and an index range scan however deep the page. Plain SQL: lists are hot paths.
 */
export async function listPage<R extends Position, T>(
  em: EntityManager,
  query: ListQuery,
  page: PageParams,
  present: (row: R) => T,
): Promise<Page<T>> {
  const params = [...query.params];
  let where = query.where;
  if (page.cursor) {
    params.push(...decodeCursor(page.cursor));
    // The row comparison implies the bound on created_at; stated alone too, Postgres can skip
    // the partitions of a table partitioned by it (history) that are newer than the cursor.
    where += ` AND (created_at, id) < ($${params.length - 1}, $${params.length}) AND created_at <= $${params.length - 1}`;
  }
  params.push(page.limit + 1);
  const rows: R[] = await em.query(
    `SELECT ${query.select} FROM ${query.from} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data: data.map(present), next_cursor: more ? encodeCursor(data[data.length - 1]) : null };
}

/**
 * One page of a short list held in code (a catalog), in its own fixed order. The cursor
 * names the last item of the previous page; one that names no item is refused with 400.
 */
export function pageOfItems<T extends { id: string }>(items: readonly T[], page: PageParams): Page<T> {
  let start = 0;
  if (page.cursor) {
    const after = Buffer.from(page.cursor, 'base64url').toString('utf8');
    start = items.findIndex((item) => item.id === after) + 1;
    if (start === 0) throw invalidCursor();
  }
  const data = items.slice(start, start + page.limit);
  const more = start + data.length < items.length;
  return { data, next_cursor: more ? Buffer.from(data[data.length - 1].id).toString('base64url') : null };
}
