import type { DataSource, EntityManager } from 'typeorm';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { column, rowShape, where, type RowOf } from '../lib/sql.js';
import { ORG_REF, orgRefOf, type OrgRefRow } from '../orgs/organizations.repository.js';
import type { OrgRef } from './actor.js';
import type { Capability } from './capabilities.js';
import { Reads } from '../lib/reads.js';

// Key and token hashes are selected only by the two lookups that compare them (as `select: false`).

/** An API key as the API shows it: never its hash. */
const API_KEY = rowShape('api_keys', {
  id: column<string>(),
  label: column<string>(),
  permissions: column<Capability[]>(),
  tenant_ids: column<string[] | null>(),
  prefix: column<string>(),
  created_at: column<Date>(),
  last_used_at: column<Date | null>(),
});

export type ApiKeyRow = RowOf<typeof API_KEY.columns>;

/** A live key found by its hash, from `api_keys k` (the organization is joined as `o`). */
const KEY_CREDENTIAL = rowShape('api_keys', {
  key_id: column<string>('k.id'),
  key_hash: column<string>(),
  member_id: column<string>(),
  permissions: column<Capability[]>(),
  tenant_ids: column<string[] | null>(),
});

const SESSION_CREDENTIAL = rowShape('sessions', {
  session_id: column<string>('s.id'),
  token_hash: column<string>(),
  member_id: column<string>('m.id'),
  capabilities: column<Capability[]>('m.capabilities'),
});

/** A credential as stored: its hash, to compare in constant time, and whose it is. */
export type StoredKey = RowOf<typeof KEY_CREDENTIAL.columns> & { org: OrgRef };
export type StoredSession = RowOf<typeof SESSION_CREDENTIAL.columns> & { org: OrgRef };

/** A lookup joins member and organization (`ORG_REF`) on purpose: authentication in one round trip. */
export class CredentialsRepository {
  constructor(
    private readonly db: DataSource,
    /** The lists' server: the standby in a GET request of the API that may use it (docs/scaling.md#read-replica). */
    private readonly reads: Reads = new Reads(db),
  ) {}

  async insertKey(
    em: EntityManager,
    key: {
      id: string;
      orgId: string;
      memberId: string;
      label: string;
      permissions: Capability[];
      tenantIds: string[] | null;
      prefix: string;
      keyHash: string;
    },
  ): Promise<ApiKeyRow> {
    const [row] = await em.query<ApiKeyRow[]>(
      `INSERT INTO api_keys (id, org_id, member_id, label, permissions, tenant_ids, prefix, key_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${API_KEY.select()}`,
      [key.id, key.orgId, key.memberId, key.label, key.permissions, key.tenantIds, key.prefix, key.keyHash],
    );
    return row;
  }

  listKeys<V>(orgId: string, page: PageParams, present: (row: ApiKeyRow) => V): Promise<Page<V>> {
    return this.reads.run((sql) =>
      listPage(sql, { select: API_KEY.select(), from: API_KEY.from(), where: where('org_id = ? AND revoked_at IS NULL', orgId) }, page, present),
    );
  }

  async revokeKey(orgId: string, keyId: string): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown[], number]>(
      'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND org_id = $2 AND revoked_at IS NULL',
      [keyId, orgId],
    );
    return affected > 0;
  }

  async findKeyByHash(hash: string): Promise<StoredKey | null> {
    const [row] = await this.db.query<Array<RowOf<typeof KEY_CREDENTIAL.columns> & OrgRefRow>>(
      `SELECT ${KEY_CREDENTIAL.select('k')}, ${ORG_REF.select('o')}
         FROM api_keys k JOIN organizations o ON o.id = k.org_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    return row
      ? { key_id: row.key_id, key_hash: row.key_hash, member_id: row.member_id, permissions: row.permissions, tenant_ids: row.tenant_ids, org: orgRefOf(row) }
      : null;
  }

  /** Writes keys' `last_used_at` in one statement, never moving one back. */
  async recordLastUsed(ids: string[], times: Date[]): Promise<void> {
    await this.db.query(
      `UPDATE api_keys k SET last_used_at = v.t
         FROM unnest($1::varchar[], $2::timestamptz[]) AS v(id, t)
        WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.t)`,
      [ids, times.map((t) => t.toISOString())],
    );
  }

  async insertSession(session: { id: string; memberId: string; tokenHash: string; expiresAt: Date }): Promise<void> {
    await this.db.query('INSERT INTO sessions (id, member_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)', [
      session.id,
      session.memberId,
      session.tokenHash,
      session.expiresAt,
    ]);
  }

  async findSessionByHash(hash: string): Promise<StoredSession | null> {
    const [row] = await this.db.query<Array<RowOf<typeof SESSION_CREDENTIAL.columns> & OrgRefRow>>(
      `SELECT ${SESSION_CREDENTIAL.select('s')}, ${ORG_REF.select('o')}
         FROM sessions s JOIN members m ON m.id = s.member_id JOIN organizations o ON o.id = m.org_id
        WHERE s.token_hash = $1 AND s.expires_at > now()`,
      [hash],
    );
    return row
      ? { session_id: row.session_id, token_hash: row.token_hash, member_id: row.member_id, capabilities: row.capabilities, org: orgRefOf(row) }
      : null;
  }

  async purgeExpiredSessions(): Promise<number> {
    const [, affected] = await this.db.query<[unknown[], number]>('DELETE FROM sessions WHERE expires_at <= now()');
    return affected;
  }
}
