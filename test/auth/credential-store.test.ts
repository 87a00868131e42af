import { expect } from 'chai';
import { CredentialStore } from '../../src/auth/credential-store.js';
import type { CredentialsRepository, StoredKey } from '../../src/auth/credentials.repository.js';
import { hashToken, newApiKey } from '../../src/auth/tokens.js';
import type { RedisClient } from '../../src/lib/redis.js';
import type { OrganizationsRepository } from '../../src/orgs/organizations.repository.js';

/** The database's side: live keys by hash; each lookup answers when the test says (`answerLookups`). */
function fakeCredentials() {
  const live = new Map<string, StoredKey>();
  const held: (() => void)[] = [];
  let holding = false;
  const repository = {
    findKeyByHash: (hash: string) => {
      // The row as the lookup reads it now (a lookup runs before it answers).
      const row = live.get(hash) ?? null;
      return new Promise<StoredKey | null>((resolve) => (holding ? held.push(() => resolve(row)) : resolve(row)));
    },
    recordLastUsed: () => Promise.resolve(),
  };
  return {
    repository: repository as unknown as CredentialsRepository,
    add(raw: string, keyId: string) {
      const org = { id: 'org_1', isReseller: false, disabled: false };
      live.set(hashToken(raw), { key_id: keyId, key_hash: hashToken(raw), member_id: 'mem_1', permissions: [], tenant_ids: null, org } as unknown as StoredKey);
    },
    revoke: (raw: string) => live.delete(hashToken(raw)),
    hold: () => (holding = true),
    answerLookups: () => {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('CredentialStore', () => {
  it('a lookup that ran before a revocation is not cached once a request read the epoch the revocation bumped', async () => {
    const db = fakeCredentials();
    let epoch = '5';
    const redis = { get: () => Promise.resolve(epoch) } as unknown as RedisClient;
    const store = new CredentialStore(db.repository, {} as OrganizationsRepository, redis);
    const [victim, other] = [newApiKey(), newApiKey()];
    db.add(victim, 'key_victim');
    db.add(other, 'key_other');
    try {
      db.hold();
      // A request with the key reads epoch 5; its lookup runs, and answers late.
      const slow = store.findApiKey(victim);
      await tick();
      // The key is revoked (the epoch bumped after the commit), and another request sees the new epoch.
      db.revoke(victim);
      epoch = '7';
      const seen = store.findApiKey(other);
      await tick();
      db.answerLookups();
      expect((await slow)?.key.keyId, 'the request that came before the revocation').to.equal('key_victim');
      expect((await seen)?.key.keyId).to.equal('key_other');
      expect(await store.findApiKey(victim), 'after the revocation').to.equal(null);
    } finally {
      await store.close();
    }
  });

  it("a tenant's lookup that ran before it was disabled is not cached once a request read the epoch the disable bumped; one after is, until the next bump", async () => {
    const db = fakeCredentials();
    const key = newApiKey();
    db.add(key, 'key_reseller');
    let epoch = '5';
    const redis = { get: () => Promise.resolve(epoch) } as unknown as RedisClient;
    const tenant = { id: 'org_tenant', parentId: 'org_1', isReseller: false, disabled: false };
    let lookups = 0;
    const held: (() => void)[] = [];
    const orgs = {
      // The row as the lookup reads it now; it answers when the test says.
      findTenantRef: () => {
        lookups++;
        const row = { ...tenant };
        return new Promise((resolve) => held.push(() => resolve(row)));
      },
    } as unknown as OrganizationsRepository;
    const answer = async () => {
      await tick();
      for (const resolve of held.splice(0)) resolve();
    };
    const store = new CredentialStore(db.repository, orgs, redis);
    try {
      // A request reads epoch 5; its tenant lookup runs, and answers late.
      const before = (await store.findApiKey(key))!;
      const slow = store.findTenant('org_1', 'org_tenant', before.epoch);
      await tick();
      // The tenant is disabled (the epoch bumped after the commit), and another request sees the new epoch.
      tenant.disabled = true;
      epoch = '6';
      const after = (await store.findApiKey(key))!;
      await answer();
      expect((await slow)?.disabled, 'the request that came before the disable').to.equal(false);
      const seen = store.findTenant('org_1', 'org_tenant', after.epoch);
      await answer();
      expect((await seen)?.disabled, 'after the disable').to.equal(true);
      // Cached from then on, until the epoch moves again.
      expect((await store.findTenant('org_1', 'org_tenant', (await store.findApiKey(key))!.epoch))?.disabled).to.equal(true);
      expect(lookups).to.equal(2);
      tenant.disabled = false;
      epoch = '7';
      const next = store.findTenant('org_1', 'org_tenant', (await store.findApiKey(key))!.epoch);
      await answer();
      expect((await next)?.disabled, 'after it was enabled again').to.equal(false);
      expect(lookups).to.equal(3);
    } finally {
      await store.close();
    }
  });
});
