import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { intersect } from '../../src/auth/capabilities.js';
import { hashPassword, verifyPassword } from '../../src/auth/passwords.js';
import { hashToken, newApiKey, newSessionToken, sameDigest } from '../../src/auth/tokens.js';
import { newId, randomToken } from '../../src/lib/ids.js';

describe('tokens and ids', () => {
  it('makes API keys of rk_live_ plus 40 random base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 1000 }, newApiKey));
    expect(keys.size).to.equal(1000);
    for (const key of keys) expect(key).to.match(/^rk_live_[0-9A-Za-z]{40}$/);
    expect(newSessionToken()).to.match(/^rs_sess_[0-9A-Za-z]{40}$/);
  });

  it('draws every base62 character about equally often', () => {
    const counts = new Map<string, number>();
    for (const ch of randomToken(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).to.equal(62);
    for (const n of counts.values()) expect(n).to.be.within(700, 1300);
  });

  it('hashes tokens with SHA-256 and compares digests', () => {
    const key = newApiKey();
    const expected = createHash('sha256').update(key).digest('hex');
    expect(hashToken(key)).to.equal(expected);
    expect(sameDigest(hashToken(key), expected)).to.equal(true);
    expect(sameDigest(hashToken(key), hashToken(newApiKey()))).to.equal(false);
    expect(sameDigest(expected, expected.slice(0, 62))).to.equal(false);
  });

  it('prefixes ids with their type', () => {
    expect(newId('key')).to.match(/^key_[0-9A-Za-z]{22}$/);
  });

  it('intersects capabilities in canonical order', () => {
    expect(intersect(['webhooks', 'operate', 'settings'], ['operate', 'webhooks', 'api_keys'])).to.deep.equal(['operate', 'webhooks']);
    expect(intersect(['operate'], [])).to.deep.equal([]);
  });
});

describe('passwords', () => {
  it('stores a salted scrypt hash and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).to.match(/^scrypt\$/);
    expect(hash).not.to.contain('correct horse');
    expect(await hashPassword('correct horse battery')).not.to.equal(hash);
    expect(await verifyPassword('correct horse battery', hash)).to.equal(true);
    expect(await verifyPassword('correct horse batterY', hash)).to.equal(false);
    expect(await verifyPassword('anything', null)).to.equal(false);
    expect(await verifyPassword('anything', 'plain-text')).to.equal(false);
  });
});
