import { Column, CreateDateColumn, JoinColumn, ManyToOne, PrimaryColumn, UpdateDateColumn, type Relation } from 'typeorm';
import { TIMESTAMP } from '../lib/columns.js';
import { Organization } from './organization.entity.js';

/** The columns every organization-owned row has. */
export abstract class OrgOwnedRow {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ name: 'org_id', type: 'varchar', length: 40 })
  orgId!: string;

  @ManyToOne(() => Organization, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'org_id' })
  org?: Relation<Organization>;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}

/** An organization-owned resource that changes: `updated_at` too. */
export abstract class OrgOwned extends OrgOwnedRow {
  @UpdateDateColumn({ name: 'updated_at', ...TIMESTAMP })
  updatedAt!: Date;
}
