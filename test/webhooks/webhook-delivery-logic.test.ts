import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { backoffMs, MAX_RETRY_DELAY_MS, parseRetryAfter } from '../../src/webhooks/backoff.js';
import { attemptError, decide, type RetryPolicy } from '../../src/webhooks/delivery-decision.js';
import { deliveryHeaders, RESERVED_HEADERS } from '../../src/webhooks/delivery-request.js';
import type { SendResult } from '../../src/webhooks/delivery-send.js';

const fixed = (r: number) => () => r;

describe('webhook backoff', () => {
  it('doubles from the base per failed attempt, with ±20% jitter', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 100, fixed(0.5)))).to.deep.equal([100, 200, 400, 800]);
    expect(backoffMs(3, 100, fixed(0))).to.equal(320);
    expect(backoffMs(3, 100, fixed(0.999999))).to.equal(480);
  });

  it('never waits longer than the cap', () => {
    expect(backoffMs(40, 30_000, fixed(1))).to.equal(MAX_RETRY_DELAY_MS);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(parseRetryAfter('5', now)).to.equal(5000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', now)).to.equal(30_000);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter(undefined, now)).to.equal(null);
  });
});

describe('webhook retry policy: what an answer decides (stage 4)', () => {
  const policy: RetryPolicy = { maxAttempts: 5, backoffBaseMs: 1000, timeoutMs: 10_000 };
  const rejected = (status: number, retryAfter?: string): SendResult => ({ kind: 'rejected', status, body: '', retryAfter, durationMs: 3 });
  const at = (result: SendResult, attempt = 1) => decide(result, attempt, policy, fixed(0.5));

  it('2xx succeeds, whatever the attempt', () => {
    expect(at({ kind: 'accepted', status: 204, body: '', durationMs: 1 }, 9)).to.deep.equal({ status: 'succeeded' });
  });

  it('410 Gone fails the delivery at once and disables the endpoint, and the attempt says so', () => {
    expect(at(rejected(410))).to.deep.equal({ status: 'failed', reason: 'gone' });
    expect(attemptError(rejected(410))).to.equal('HTTP 410 Gone: the endpoint is disabled');
  });

  it('fails once the attempts are used up', () => {
    expect(at(rejected(500), 5)).to.deep.equal({ status: 'failed', reason: 'attempts_used_up' });
    expect(at({ kind: 'timeout', durationMs: 10_000 }, 5).status).to.equal('failed');
  });

  it('honours Retry-After on 429 and 503, kept between the base and 6 hours', () => {
    expect(at(rejected(429, '30'))).to.deep.equal({ status: 'retrying', retryInMs: 30_000 });
    expect(at(rejected(503, '30'))).to.deep.equal({ status: 'retrying', retryInMs: 30_000 });
    expect(at(rejected(429, '0'))).to.deep.equal({ status: 'retrying', retryInMs: 1000 });
    expect(at(rejected(503, String(48 * 3600)))).to.deep.equal({ status: 'retrying', retryInMs: MAX_RETRY_DELAY_MS });
  });

  it('ignores Retry-After on other answers: exponential backoff', () => {
    expect(at(rejected(500, '30'))).to.deep.equal({ status: 'retrying', retryInMs: 1000 });
    expect(at(rejected(500), 3)).to.deep.equal({ status: 'retrying', retryInMs: 4000 });
    expect(at({ kind: 'connection_error', error: 'ECONNREFUSED', durationMs: 1 }, 2)).to.deep.equal({ status: 'retrying', retryInMs: 2000 });
  });

  it('after a timeout, waits at least one timeout', () => {
    expect(at({ kind: 'timeout', durationMs: 10_000 })).to.deep.equal({ status: 'retrying', retryInMs: 10_000 });
    expect(at({ kind: 'timeout', durationMs: 10_000 }, 4)).to.deep.equal({ status: 'retrying', retryInMs: 10_000 });
    expect(decide({ kind: 'timeout', durationMs: 10_000 }, 6, { ...policy, maxAttempts: 10 }, fixed(0.5))).to.deep.equal({ status: 'retrying', retryInMs: 32_000 });
  });

  it('records a short error for every answer but an accepted one', () => {
    expect(attemptError({ kind: 'accepted', status: 200, body: '', durationMs: 1 })).to.equal(null);
    expect(attemptError(rejected(302))).to.equal('HTTP 302 (redirects are not followed)');
    expect(attemptError({ kind: 'timeout', durationMs: 10_000 })).to.equal('timeout after 10000 ms');
    expect(attemptError({ kind: 'refused', error: 'refused: x resolves to 10.0.0.1', durationMs: 0 })).to.match(/^refused/);
  });
});

describe('docs/webhooks.md on delivery headers (sections "What a delivery looks like", "Customizing the body and headers")', () => {
  const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  /** The header names written in backquotes in `text`, in lower case. */
  const names = (text: string) => [...text.matchAll(/`([A-Za-z-]+)`/g)].map((m) => m[1].toLowerCase());

  it('names as reserved exactly the headers custom_headers cannot replace', () => {
    const list = /The reserved headers \(([^)]*)\)/.exec(doc);
    expect(list, 'the sentence "The reserved headers (...)"').to.not.equal(null);
    expect(names(list![1])).to.have.members(RESERVED_HEADERS);
  });

  it('shows in its table every header a delivery sends of its own', () => {
    const start = doc.indexOf('## What a delivery looks like');
    expect(start, 'the section "## What a delivery looks like"').to.not.equal(-1);
    const section = doc.slice(start).split(/\n## /)[0];
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const sent = deliveryHeaders({ custom_headers: {}, secret: 'a-secret-value', delivery_id: 'dlv_1' }, '{}', 'attempt', 0);
    expect(rows.flatMap((row) => names(row.split('|')[1]))).to.have.members(Object.keys(sent));
  });
});
