import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from '../../src/webhooks/backoff.js';
import { deliveryHeaders, RESERVED_HEADERS } from '../../src/webhooks/deliver.js';

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

describe('the README on delivery headers (sections "Webhook endpoints", "Receiving webhooks")', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  /** The header names written in backquotes in `text`, in lower case. */
  const names = (text: string) => [...text.matchAll(/`([A-Za-z-]+)`/g)].map((m) => m[1].toLowerCase());

  it('names as reserved exactly the headers custom_headers cannot replace', () => {
    const list = /The reserved headers \(([^)]*)\)/.exec(readme);
    expect(list, 'the sentence "The reserved headers (...)"').to.not.equal(null);
    expect(names(list![1])).to.have.members(RESERVED_HEADERS);
  });

  it('shows in its table every header a delivery sends of its own', () => {
    const section = readme.slice(readme.indexOf('## Receiving webhooks')).split(/\n## /)[0];
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const sent = deliveryHeaders({ custom_headers: {}, secret: 'a-secret-value', delivery_id: 'dlv_1' }, '{}', 'attempt', 0);
    expect(rows.flatMap((row) => names(row.split('|')[1]))).to.have.members(Object.keys(sent));
  });
});
