import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/** A stored `Idempotency-Key` request and, once finished, its response (CONTRACT.md §2). */
@Entity('idempotency_records')
export class IdempotencyRecord {
  /** The acting organization (the tenant when `X-Tenant-Id` is sent), or `operator`. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  scope!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  key!: string;

  /** SHA-256 of method, path and body: the same key with another request is refused. */
  @Column({ name: 'request_hash', type: 'char', length: 64 })
  requestHash!: string;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody!: unknown;

  @Index('idempotency_records_created_idx')
  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
