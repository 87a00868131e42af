import type { DataSource, EntityManager } from 'typeorm';
import { NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { logger } from '../lib/logger.js';
import { reserve } from '../lib/rate-limit.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import type { Page, PageParams } from '../lib/pagination.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import { requireOwnTenants } from '../orgs/own-tenants.js';
import { requireReseller } from '../tenants/tenants.service.js';
import type { Actor } from './actor.js';
import type { CreateApiKeyInput } from './api-keys.schemas.js';
import { CAPABILITIES, intersect, type Capability } from './capabilities.js';
import { bumpAuthEpoch } from './credential-store.js';
import type { ApiKeyRow, CredentialsRepository } from './credentials.repository.js';
import { DISPLAYED_PREFIX_LENGTH, hashToken, newApiKey } from './tokens.js';

/** SPEC.md §8: 5 key creations per hour per organization. */
export const KEY_CREATION_LIMIT = { name: 'api-key-create', max: 5, windowMs: 3_600_000 };

export interface ApiKeyView {
  key_id: string;
  label: string;
  permissions: Capability[];
  tenant_ids: string[] | null;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

/** CONTRACT.md §5: a key restricted to tenants never holds `api_keys` (it cannot reach the keys anyway). */
const TENANT_KEY_CAPABILITIES = CAPABILITIES.filter((c) => c !== 'api_keys');

const presentApiKey = (k: ApiKeyRow): ApiKeyView => ({
  key_id: k.id,
  label: k.label,
  permissions: k.permissions,
  tenant_ids: k.tenant_ids,
  prefix: k.prefix,
  created_at: k.created_at.toISOString(),
  last_used_at: k.last_used_at?.toISOString() ?? null,
});

/** API keys (SPEC.md §4.3): created, listed and revoked by their organization; issued by the operator. */
export class ApiKeysService {
  constructor(
    private readonly db: DataSource,
    private readonly credentials: CredentialsRepository,
    private readonly orgs: OrganizationsRepository,
    private readonly redis: RedisClient,
  ) {}

  /**
   * Permissions = requested ∩ member's ∩ calling credential's (SPEC.md §5 rule 4), silently: no key
   * mints a stronger one. `tenant_ids` (CONTRACT.md §5): a reseller's own tenants only, checked
   * before a creation slot is taken, so a refused request does not count.
   */
  async create(actor: Actor, input: CreateApiKeyInput) {
    const tenantIds = input.tenant_ids ?? null;
    if (tenantIds) {
      requireReseller(actor);
      await requireOwnTenants(this.orgs, actor.org.id, tenantIds, 'tenant_ids');
    }
    const slot = await reserve(this.redis, KEY_CREATION_LIMIT, actor.org.id);
    try {
      return await this.db.transaction(async (em) => {
        const member = await this.orgs.findMember(em, actor.memberId);
        const permissions = intersect(input.permissions, member.capabilities, actor.capabilities, tenantIds ? TENANT_KEY_CAPABILITIES : CAPABILITIES);
        return this.issue(em, { orgId: actor.org.id, memberId: member.id, label: input.label, permissions, tenantIds });
      });
    } catch (err) {
      await slot.release();
      throw err;
    }
  }

  /** In `em`'s transaction; the raw key exists only in this answer. */
  async issue(
    em: EntityManager,
    input: { orgId: string; memberId: string; label: string; permissions: Capability[]; tenantIds?: string[] | null },
  ): Promise<ApiKeyView & { key: string }> {
    const raw = newApiKey();
    const row = await this.credentials.insertKey(em, {
      id: newId('key'),
      ...input,
      tenantIds: input.tenantIds ?? null,
      prefix: raw.slice(0, DISPLAYED_PREFIX_LENGTH),
      keyHash: hashToken(raw),
    });
    return { ...presentApiKey(row), key: raw };
  }

  list(actor: Actor, page: PageParams): Promise<Page<ApiKeyView>> {
    return this.credentials.listKeys(actor.org.id, page, presentApiKey);
  }

  async revoke(actor: Actor, keyId: string): Promise<void> {
    // Bumped before (a Redis outage refuses the revocation rather than half-do it) and after the
    // commit (nothing cached in between survives).
    await needRedis(() => bumpAuthEpoch(this.redis));
    if (!(await this.credentials.revokeKey(actor.org.id, keyId))) throw new NotFoundError('api_key');
    await bumpAuthEpoch(this.redis).catch((err) => logger.error({ err }, 'auth epoch not bumped after a revocation'));
  }
}
