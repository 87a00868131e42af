import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Agent } from '../agents/agent.entity.js';
import { OrgOwned } from '../orgs/org-owned.js';

/** A number provisioned from the carrier; inbound calls to it are answered by its agent. */
@Entity('phone_numbers')
@Index('phone_numbers_org_created_idx', ['orgId', 'createdAt', 'id'])
export class PhoneNumber extends OrgOwned {
  /** E.164; a number belongs to one organization across the service. */
  @Index('phone_numbers_number_key', { unique: true })
  @Column({ name: 'phone_number', type: 'varchar', length: 16 })
  phoneNumber!: string;

  @Column({ name: 'agent_id', type: 'varchar', length: 40, nullable: true })
  agentId!: string | null;

  @ManyToOne(() => Agent, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'agent_id' })
  agent?: Relation<Agent>;
}
