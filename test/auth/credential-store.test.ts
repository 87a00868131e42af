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
      expect((await slow)?.keyId, 'the request that came before the revocation').to.equal('key_victim');
      expect((await seen)?.keyId).to.equal('key_other');
      expect(await store.findApiKey(victim), 'after the revocation').to.equal(null);
    } finally {
      await store.close();
    }
  });
});
