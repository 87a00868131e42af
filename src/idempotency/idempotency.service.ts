import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ConflictError, InvalidRequestError, UnprocessableError } from '../lib/errors.js';

/** How long a finished response is replayed (CONTRACT.md §2). */
const RETENTION = '24 hours';
/** A request still marked running after this long died with its process; its key is free again. */
const ABANDONED_AFTER = '5 minutes';
const MAX_KEY_LENGTH = 255;

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse };

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${JSON.stringify(body ?? null)}`)
    .digest('hex');
}

export function checkKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new InvalidRequestError(`Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters.`, [
      { path: 'Idempotency-Key', message: `must be 1 to ${MAX_KEY_LENGTH} characters` },
    ]);
  }
}

/**
 * Idempotency records in Postgres. `claim` either reserves the key for this request
 * (one INSERT ... ON CONFLICT, race-free across processes) or returns what to do instead.
 */
export class IdempotencyService {
  constructor(private readonly dataSource: DataSource) {}

  async claim(scope: string, key: string, fingerprint: string): Promise<Claim> {
    const claimed = await this.dataSource.query(
      `INSERT INTO idempotency_records (scope, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (scope, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = now()
         WHERE idempotency_records.created_at < now() - interval '${RETENTION}'
            OR (idempotency_records.response_status IS NULL AND idempotency_records.created_at < now() - interval '${ABANDONED_AFTER}')
       RETURNING 1`,
      [scope, key, fingerprint],
    );
    if (claimed.length > 0) return { kind: 'claimed' };

    const [row] = await this.dataSource.query(
      `SELECT request_hash, response_status, response_body FROM idempotency_records WHERE scope = $1 AND key = $2`,
      [scope, key],
    );
    if (!row) return this.claim(scope, key, fingerprint); // purged in between: try again
    if (row.request_hash !== fingerprint) {
      throw new UnprocessableError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request.');
    }
    if (row.response_status === null) {
      throw new ConflictError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.');
    }
    return { kind: 'replay', response: { status: row.response_status, body: row.response_body } };
  }

  async complete(scope: string, key: string, response: StoredResponse): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_records SET response_status = $3, response_body = $4 WHERE scope = $1 AND key = $2`,
      [scope, key, response.status, JSON.stringify(response.body ?? null)],
    );
  }

  /** Frees the key (the request failed on our side; the client may try again). */
  async release(scope: string, key: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_records WHERE scope = $1 AND key = $2`, [scope, key]);
  }

  async purgeExpired(): Promise<number> {
    const [, count] = await this.dataSource.query(
      `DELETE FROM idempotency_records WHERE created_at < now() - interval '${RETENTION}'`,
    );
    return count;
  }
}
