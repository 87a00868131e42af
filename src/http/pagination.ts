import Joi from 'joi';
import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { InvalidRequestError } from '../lib/errors.js';

/** CONTRACT.md §2 "Lists": `limit` 1–100 (default 20) and an opaque `cursor`. */
export const pageQuery = {
  limit: Joi.number().integer().min(1).max(100).default(20),
  cursor: Joi.string().max(200),
};

export interface PageParams {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

interface Position {
  createdAt: Date;
  id: string;
}

export function encodeCursor(row: Position): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): Position {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const createdAt = new Date(at);
    if (typeof id !== 'string' || Number.isNaN(createdAt.getTime())) throw new Error('bad cursor');
    return { createdAt, id };
  } catch {
    throw new InvalidRequestError('The cursor is not one this API returned.', [{ path: 'cursor', message: '"cursor" is invalid' }]);
  }
}

/**
 * Newest first, by (created_at, id): keyset pagination, stable while rows are added.
 * Fetches one row more than asked to tell whether another page follows.
 */
export async function paginate<E extends ObjectLiteral & Position, T>(
  qb: SelectQueryBuilder<E>,
  page: PageParams,
  present: (row: E) => T,
): Promise<Page<T>> {
  const alias = qb.alias;
  if (page.cursor) {
    const at = decodeCursor(page.cursor);
    qb.andWhere(`(${alias}.createdAt, ${alias}.id) < (:cursorAt, :cursorId)`, { cursorAt: at.createdAt, cursorId: at.id });
  }
  const rows = await qb
    .orderBy(`${alias}.createdAt`, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(page.limit + 1)
    .getMany();
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data: data.map(present), next_cursor: more ? encodeCursor(data[data.length - 1]) : null };
}
