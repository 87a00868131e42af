import { expect } from 'chai';
import { MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from '../../src/webhooks/backoff.js';

describe('webhook backoff', () => {
  const fixed = (r: number) => () => r;

  it('doubles from the base per failed attempt, with ±20% jitter', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 100, undefined, fixed(0.5)))).to.deep.equal([100, 200, 400, 800]);
    expect(retryDelayMs(3, 100, undefined, fixed(0))).to.equal(320);
    expect(retryDelayMs(3, 100, undefined, fixed(0.999999))).to.equal(480);
  });

  it('never waits longer than the cap', () => {
    expect(retryDelayMs(40, 30_000, undefined, fixed(1))).to.equal(MAX_RETRY_DELAY_MS);
  });

  it('honours Retry-After between the base and the cap, else ignores it', () => {
    expect(retryDelayMs(1, 100, '5', fixed(0.5))).to.equal(5000);
    expect(retryDelayMs(1, 10_000, '1', fixed(0.5))).to.equal(10_000); // below the base
    expect(retryDelayMs(1, 100, String(48 * 3600), fixed(0.5))).to.equal(100); // beyond the cap
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter(undefined, now)).to.equal(null);
  });
});
