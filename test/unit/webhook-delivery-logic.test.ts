import { expect } from 'chai';
import { MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from '../../src/webhooks/backoff.js';
import { isPrivateAddress } from '../../src/webhooks/ssrf.js';

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

describe('webhook destinations (SSRF guard)', () => {
  it('refuses loopback, private, link-local, metadata and other reserved addresses', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '224.0.0.1']) {
      expect(isPrivateAddress(address), address).to.equal(true);
    }
  });

  it('allows public addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(address), address).to.equal(false);
  });
});
