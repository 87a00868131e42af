import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Member } from '../orgs/member.entity.js';
import { TIMESTAMP } from '../lib/columns.js';

/** A member's signed-in session; the token is stored as a SHA-256 hash only. */
@Entity('sessions')
export class Session {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Index('sessions_member_idx')
  @Column({ name: 'member_id', type: 'varchar', length: 40 })
  memberId!: string;

  @ManyToOne(() => Member, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'member_id' })
  member?: Relation<Member>;

  @Index('sessions_hash_key', { unique: true })
  @Column({ name: 'token_hash', type: 'char', length: 64, select: false })
  tokenHash!: string;

  @Index('sessions_expires_idx')
  @Column({ name: 'expires_at', ...TIMESTAMP })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', ...TIMESTAMP })
  createdAt!: Date;
}
