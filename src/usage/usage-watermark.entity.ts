import { Column, Entity, PrimaryColumn } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';

/** How far the rollup has gone: every hour before `rolledUntil` is complete in usage_buckets. */
@Entity('usage_watermark')
export class UsageWatermark {
  /** Always 1: one row. */
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  @Column({ name: 'rolled_until', ...TIMESTAMP })
  rolledUntil!: Date;
}
