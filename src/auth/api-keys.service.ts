import type { EntityManager } from 'typeorm';
import { db } from '../lib/db.js';
import { NotFoundError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { logger } from '../lib/logger.js';
import { reserve } from '../lib/rate-limit.js';
import { needRedis, type RedisClient } from '../lib/redis.js';
import { listPage, type Page, type PageParams } from '../lib/pagination.js';
import { where } from '../lib/sql.js';
import { Member } from '../orgs/member.entity.js';
import type { Actor } from './actor.js';
import { ApiKey } from './api-key.entity.js';
import { intersect, type Capability } from './capabilities.js';
import { bumpAuthEpoch } from './credential-store.js';
import { DISPLAYED_PREFIX_LENGTH, hashToken, newApiKey } from './tokens.js';

/** SPEC.md §8: 5 key creations per hour per organization. */
export const KEY_CREATION_LIMIT = { name: 'api-key-create', max: 5, windowMs: 3_600_000 };

export interface ApiKeyView {
  key_id: string;
  label: string;
  permissions: Capability[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

interface ApiKeyRow {
  id: string;
  label: string;
  permissions: Capability[];
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
}

const presentApiKey = (k: ApiKeyRow): ApiKeyView => ({
  key_id: k.id,
  label: k.label,
  permissions: k.permissions,
  prefix: k.prefix,
  created_at: k.created_at.toISOString(),
  last_used_at: k.last_used_at?.toISOString() ?? null,
});

const KEY_COLUMNS = 'id, label, permissions, prefix, created_at, last_used_at';

/** Inserts a key and returns it with its raw value (the only time the raw value exists). */
export async function insertApiKey(
  em: EntityManager,
  input: { orgId: string; memberId: string; label: string; permissions: Capability[] },
): Promise<ApiKeyView & { key: string }> {
  const raw = newApiKey();
  const row = em.create(ApiKey, {
    id: newId('key'),
    orgId: input.orgId,
    memberId: input.memberId,
    label: input.label,
    permissions: input.permissions,
    prefix: raw.slice(0, DISPLAYED_PREFIX_LENGTH),
    keyHash: hashToken(raw),
    lastUsedAt: null,
    revokedAt: null,
  });
  await em.insert(ApiKey, row);
  const [saved] = await em.query(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [row.id]);
  return { ...presentApiKey(saved), key: raw };
}

export class ApiKeysService {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Granted permissions = requested ∩ the creating member's capabilities ∩ the calling
   * credential's own (SPEC.md §5 rule 4): silently, so a key never mints a stronger key.
   */
  async create(actor: Actor, input: { label: string; permissions: Capability[] }) {
    const slot = await reserve(this.redis, KEY_CREATION_LIMIT, actor.org.id);
    try {
      return await db.transaction(async (em) => {
        const member = await em.findOneByOrFail(Member, { id: actor.memberId });
        const permissions = intersect(input.permissions, member.capabilities, actor.capabilities);
        return insertApiKey(em, { orgId: actor.org.id, memberId: member.id, label: input.label, permissions });
      });
    } catch (err) {
      await slot.release();
      throw err;
    }
  }

  list(actor: Actor, page: PageParams): Promise<Page<ApiKeyView>> {
    return listPage(db, { select: KEY_COLUMNS, from: 'api_keys', where: where('org_id = ? AND revoked_at IS NULL', actor.org.id) }, page, presentApiKey);
  }

  /** Revokes a key of the caller's organization; every API process refuses it from the next request. */
  async revoke(actor: Actor, keyId: string): Promise<void> {
    // Bumped before (so a Redis outage refuses the revocation rather than half-doing it) and
    // after the commit (so nothing cached in between survives).
    await needRedis(() => bumpAuthEpoch(this.redis));
    const result = await db
      .createQueryBuilder()
      .update(ApiKey)
      .set({ revokedAt: () => 'now()' })
      .where('id = :keyId AND org_id = :orgId AND revoked_at IS NULL', { keyId, orgId: actor.org.id })
      .execute();
    if (!result.affected) throw new NotFoundError('api_key');
    await bumpAuthEpoch(this.redis).catch((err) => logger.error({ err }, 'auth epoch not bumped after a revocation'));
  }
}
