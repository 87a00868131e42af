import { logger } from '../lib/logger.js';
import { redisKey, type RedisClient } from '../lib/redis.js';
import { SharedRead } from '../lib/shared-read.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { Capability } from './capabilities.js';
import type { OrgRef } from './actor.js';
import type { CredentialsRepository } from './credentials.repository.js';
import { hashToken, sameDigest } from './tokens.js';

export interface KeyCredential {
  keyId: string;
  memberId: string;
  permissions: Capability[];
  /** CONTRACT.md §5: the only tenants the key may act in; null for a key of the whole account. Cached with the key, never changed. */
  tenantIds: ReadonlySet<string> | null;
  org: OrgRef;
}

export interface SessionCredential {
  sessionId: string;
  memberId: string;
  capabilities: Capability[];
  org: OrgRef;
}

/** INCR'd after a change that must end cached authorizations; checked per request, so a revocation holds everywhere at once. */
const EPOCH_KEY = () => redisKey('auth', 'epoch');

/** Ends every cached authorization in every API process. Call after the change commits. */
export async function bumpAuthEpoch(redis: RedisClient): Promise<void> {
  await redis.incr(EPOCH_KEY());
}

const MAX_CACHED_KEYS = 10_000;
/** A reseller with ten thousand tenants acting in each of them: every tenant cached. */
const MAX_CACHED_TENANTS = 10_000;
const LAST_USED_FLUSH_MS = 5_000;

/** A key as found, with the epoch its request read (null: Redis did not answer, nothing cached). */
export interface KeyLookup {
  key: KeyCredential;
  epoch: string | null;
}

/**
 * Keys, and the tenants resellers' keys act in, cached in process, checked against the Redis epoch
 * per request; `last_used_at` batched into one UPDATE every few seconds.
 */
export class CredentialStore {
  private readonly cache = new Map<string, KeyCredential>();
  /** By reseller and tenant id: found tenants only (one created a moment later must be found). */
  private readonly tenants = new Map<string, OrgRef>();
  private cacheEpoch: string | null = null;
  private readonly lastUsed = new Map<string, Date>();
  private readonly timer: NodeJS.Timeout;
  /** A request's epoch is read after it arrived, as a revocation acknowledged before then must hold; concurrent requests share the read. */
  private readonly epoch: SharedRead<string | null>;

  constructor(
    private readonly credentials: CredentialsRepository,
    private readonly orgs: OrganizationsRepository,
    private readonly redis: RedisClient,
  ) {
    this.timer = setInterval(() => void this.flushLastUsed().catch((err) => logger.error({ err }, 'last_used_at flush failed')), LAST_USED_FLUSH_MS);
    this.timer.unref();
    this.epoch = new SharedRead(() => this.redis.get(EPOCH_KEY()));
  }

  async findApiKey(raw: string): Promise<KeyLookup | null> {
    const hash = hashToken(raw);
    const epoch = await this.readEpoch();
    if (epoch !== null && epoch !== this.cacheEpoch) {
      this.cache.clear();
      this.tenants.clear();
      this.cacheEpoch = epoch;
    }
    let credential = epoch === null ? undefined : this.cache.get(hash);
    if (!credential) {
      const stored = await this.credentials.findKeyByHash(hash);
      // The index already matched; constant time guards against a collation or padding near-match.
      if (!stored || !sameDigest(stored.key_hash, hash)) return null;
      credential = {
        keyId: stored.key_id,
        memberId: stored.member_id,
        permissions: stored.permissions,
        tenantIds: stored.tenant_ids && new Set(stored.tenant_ids),
        org: stored.org,
      };
      // Cached only while the cache is still of the epoch read before the lookup: a revocation
      // committed meanwhile bumps it after, and a request that read the new epoch may already have
      // cleared the cache (this lookup's answer, from before the commit, must not outlive that).
      if (epoch !== null && epoch === this.cacheEpoch) remember(this.cache, MAX_CACHED_KEYS, hash, credential);
    }
    this.lastUsed.set(credential.keyId, new Date());
    return { key: credential, epoch };
  }

  async findSession(raw: string): Promise<SessionCredential | null> {
    const hash = hashToken(raw);
    const stored = await this.credentials.findSessionByHash(hash);
    if (!stored || !sameDigest(stored.token_hash, hash)) return null;
    return { sessionId: stored.session_id, memberId: stored.member_id, capabilities: stored.capabilities, org: stored.org };
  }

  /**
   * The reseller's tenant `tenantId`, for a request whose key lookup read `epoch`. Cached as keys are:
   * what a cached tenant carries (its reseller, whether it is disabled) changes only with the epoch
   * bumped after the commit (a tenant disabled or enabled, an operator's change of the reseller).
   */
  async findTenant(resellerId: string, tenantId: string, epoch: string | null): Promise<OrgRef | null> {
    const id = `${resellerId}/${tenantId}`;
    const cached = epoch === null || epoch !== this.cacheEpoch ? undefined : this.tenants.get(id);
    if (cached) return cached;
    const tenant = await this.orgs.findTenantRef(resellerId, tenantId);
    // As for keys: only while the cache is still of the epoch this request read before the lookup.
    if (tenant && epoch !== null && epoch === this.cacheEpoch) remember(this.tenants, MAX_CACHED_TENANTS, id, tenant);
    return tenant;
  }

  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const ids = [...this.lastUsed.keys()];
    const times = ids.map((id) => this.lastUsed.get(id)!);
    this.lastUsed.clear();
    await this.credentials.recordLastUsed(ids, times);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushLastUsed();
  }

  /** The current epoch, or null when Redis cannot answer: then nothing is served from cache. */
  private async readEpoch(): Promise<string | null> {
    try {
      return (await this.epoch.get()) ?? '0';
    } catch (err) {
      logger.warn({ err }, 'auth epoch unreadable; authenticating from the database');
      // Revocations may be missed while Redis is away: nothing cached before may be trusted after.
      this.cache.clear();
      this.cacheEpoch = null;
      return null;
    }
  }
}

/** Adds to a bounded cache, the oldest entry making room. */
function remember<V>(cache: Map<string, V>, max: number, key: string, value: V): void {
  if (cache.size >= max) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}
