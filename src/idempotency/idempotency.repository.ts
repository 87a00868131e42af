import type { DataSource } from 'typeorm';
import { column, rowShape, type RowOf } from '../lib/sql.js';

/** How long a finished response is replayed (CONTRACT.md §2). */
const RETENTION = '24 hours';
/** A request still marked running after this long died with its process; its key is free again. */
const ABANDONED_AFTER = '5 minutes';

/** Whose record it is (see `RecordOwner`), and the key's hash. */
export interface RecordKey {
  scope: string;
  credential: string;
  keyHash: string;
}

/** What a stored record says: the request it is for, and its response once finished (status null: still running). */
const storedRecord = rowShape('idempotency_records', {
  request_hash: column<string>(),
  response_status: column<number | null>(),
  response_sealed: column<string | null>(),
});

export type StoredRecord = RowOf<typeof storedRecord.columns>;

/** Idempotency records (idempotency_records): one per acting organization, credential and key. */
export class IdempotencyRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** One INSERT ... ON CONFLICT: true when the key is now this request's (new, expired or abandoned), false when another holds it. */
  async claim(key: RecordKey, requestHash: string): Promise<boolean> {
    const claimed = await this.dataSource.query<unknown[]>(
      `INSERT INTO idempotency_records (scope, credential, key_hash, request_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope, key_hash, credential) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_sealed = NULL, created_at = now()
         WHERE idempotency_records.created_at < now() - interval '${RETENTION}'
            OR (idempotency_records.response_status IS NULL AND idempotency_records.created_at < now() - interval '${ABANDONED_AFTER}')
       RETURNING 1`,
      [key.scope, key.credential, key.keyHash, requestHash],
    );
    return claimed.length > 0;
  }

  /** Null when purged meanwhile. */
  async find(key: RecordKey): Promise<StoredRecord | null> {
    const [row] = await this.dataSource.query<StoredRecord[]>(
      `SELECT ${storedRecord.select()} FROM ${storedRecord.from()} WHERE scope = $1 AND credential = $2 AND key_hash = $3`,
      [key.scope, key.credential, key.keyHash],
    );
    return row ?? null;
  }

  async complete(key: RecordKey, responseStatus: number, responseSealed: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_records SET response_status = $4, response_sealed = $5 WHERE scope = $1 AND credential = $2 AND key_hash = $3`,
      [key.scope, key.credential, key.keyHash, responseStatus, responseSealed],
    );
  }

  async release(key: RecordKey): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_records WHERE scope = $1 AND credential = $2 AND key_hash = $3`, [
      key.scope,
      key.credential,
      key.keyHash,
    ]);
  }

  async purgeExpired(): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown[], number]>(`DELETE FROM idempotency_records WHERE created_at < now() - interval '${RETENTION}'`);
    return count;
  }
}
