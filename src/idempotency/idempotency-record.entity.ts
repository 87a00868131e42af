import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/** A stored `Idempotency-Key` request and, once finished, its sealed response (CONTRACT.md §2). */
@Entity('idempotency_records')
export class IdempotencyRecord {
  /** The acting organization (the tenant when `X-Tenant-Id` is sent), or `operator`. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  scope!: string;

  /** An API key's or session's id, or `operator`: no other credential can replay its response. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  credential!: string;

  /** SHA-256 of the Idempotency-Key (the key itself is never stored). */
  @PrimaryColumn({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  /** HMAC of method, path and body (see RecordSecrets): the same key with another request is refused. */
  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash!: string;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  /** The response body, sealed with AES-256-GCM under a key derived from the Idempotency-Key. */
  @Column({ name: 'response_sealed', type: 'text', nullable: true })
  responseSealed!: string | null;

  @Index('idempotency_records_created_idx')
  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
