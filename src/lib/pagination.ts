import { DataSource, EntityManager } from 'typeorm';
import { namedQuery, statementName } from './db.js';
import { InvalidRequestError } from './errors.js';
import { ID_PATTERN } from './ids.js';
import type { Where } from './sql.js';
import { parseUtcTimestamp } from './time.js';

export interface PageParams {
  limit: number;
  cursor?: string;
}

/** CONTRACT.md §2 "Lists": a page of items, newest first, and the cursor of the next page (null on the last). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

interface Position {
  created_at: Date;
  id: string;
}

/** What runs SQL: a DataSource, or an EntityManager inside a transaction. */
export interface Sql {
  // What a statement answers depends on it (rows, or [rows, count]): the caller says which.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeORM's own query() answers any
  query(text: string, params?: unknown[]): Promise<any>;
}

export function encodeCursor(row: Position): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
}

const invalidCursor = () => new InvalidRequestError('The cursor is not one this API returned.', [{ path: 'cursor', message: '"cursor" is invalid' }]);

function decodeCursor(cursor: string): [Date, string] {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    // Only what encodeCursor makes: an ISO timestamp that round-trips, and an id. The time is
    // one a row can have (years 0001-9999): Postgres refuses one before 4713 BC with an error.
    const createdAt = parseUtcTimestamp(at);
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) throw new Error('bad cursor');
    if (!createdAt || createdAt.toISOString() !== at) throw new Error('bad cursor');
    return [createdAt, id];
  } catch {
    throw invalidCursor();
  }
}

export interface ListQuery {
  /** Columns to select; must include `id` and `created_at` (unqualified, or of the one table in `from`). */
  select: string;
  from: string;
  /** The scope and filters (the organization, the request's filters); the page's keyset is added to it. */
  where: Where;
}

/**
 * One page of a list, newest first, by keyset on (created_at, id): stable while rows are
 * added, and an index range scan however deep the page. The one list query of every
 * repository: scope and filters come in `query.where`.
 */
export async function listPage<R extends Position, T>(sql: Sql, query: ListQuery, page: PageParams, present: (row: R) => T): Promise<Page<T>> {
  // Extended here on a copy: a list read again (on the primary, after the standby failed it) starts from the same condition.
  const where = query.where.copy();
  if (page.cursor) {
    const [createdAt, id] = decodeCursor(page.cursor);
    // The row comparison implies the bound on created_at; stated alone too, Postgres can skip
    // the partitions of a table partitioned by it (history) that are newer than the cursor.
    const at = where.param(createdAt);
    where.and(`(created_at, id) < (${at}, ?) AND created_at <= ${at}`, id);
  }
  const limit = where.param(page.limit + 1);
  const text = `SELECT ${query.select} FROM ${query.from} WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
  // A named statement: a few texts per list (its filters), each planned once per connection.
  const rows =
    sql instanceof DataSource || sql instanceof EntityManager
      ? await namedQuery<R>(sql, statementName(text), text, where.params)
      : ((await sql.query(text, where.params)) as R[]);
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data: data.map(present), next_cursor: more ? encodeCursor(data[data.length - 1]) : null };
}

/** The cursor of a list in order of id: the last id of the page. */
export const encodeIdCursor = (id: string): string => Buffer.from(id).toString('base64url');

/** The id an `encodeIdCursor` cursor names; anything that names no possible id is 400. */
export function decodeIdCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!ID_PATTERN.test(id)) throw invalidCursor();
  return id;
}

/**
 * One page of a short list held in code (a catalog), in its own fixed order. The cursor
 * names the last item of the previous page; one that names no item is refused with 400.
 */
export function pageOfItems<T extends { id: string }>(items: readonly T[], page: PageParams): Page<T> {
  let start = 0;
  if (page.cursor) {
    const after = decodeIdCursor(page.cursor);
    start = items.findIndex((item) => item.id === after) + 1;
    if (start === 0) throw invalidCursor();
  }
  const data = items.slice(start, start + page.limit);
  const more = start + data.length < items.length;
  return { data, next_cursor: more ? encodeIdCursor(data[data.length - 1].id) : null };
}
