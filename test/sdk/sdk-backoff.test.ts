// The SDK's waits between attempts (pure logic of sdk/src/transport.ts; the retries themselves are
// tested through a real proxy in sdk-retries.test.ts).
import { expect } from 'chai';
import { backoffMs, retryAfterMs } from '../../sdk/src/transport.js';

describe('@ringlane/sdk waits between attempts', () => {
  it('backs off exponentially from 0.5 s, capped at 8 s, of which a random half', () => {
    const least = (retry: number) => backoffMs(retry, () => 0);
    const most = (retry: number) => backoffMs(retry, () => 1);
    expect([0, 1, 2, 3, 4, 5, 10].map(least)).to.deep.equal([250, 500, 1000, 2000, 4000, 4000, 4000]);
    expect([0, 1, 2, 3, 4, 5, 10].map(most)).to.deep.equal([500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('reads Retry-After as seconds or as an HTTP date; anything else, or none, is null', () => {
    const now = Date.parse('2026-11-24T15:00:00Z');
    expect(retryAfterMs('3', now)).to.equal(3000);
    expect(retryAfterMs(' 0 ', now)).to.equal(0);
    expect(retryAfterMs('Tue, 24 Nov 2026 15:00:30 GMT', now)).to.equal(30_000);
    expect(retryAfterMs('Tue, 24 Nov 2026 14:59:00 GMT', now)).to.equal(0);
    expect(retryAfterMs('soon', now)).to.equal(null);
    expect(retryAfterMs('-1', now)).to.equal(null);
    expect(retryAfterMs(null, now)).to.equal(null);
  });
});
