import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { backoffMs, MAX_RETRY_DELAY_MS, parseRetryAfter } from '../../src/webhooks/backoff.js';
import { attemptError, decide, type RetryPolicy } from '../../src/webhooks/delivery-decision.js';
import { deliveryHeaders, prepareRequest, RESERVED_HEADERS, type DeliveryTarget, type PreparedRequest } from '../../src/webhooks/delivery-request.js';
import type { DeliverySender, SendResult } from '../../src/webhooks/delivery-send.js';
import { AttemptRecorder } from '../../src/webhooks/attempt-recorder.js';
import { PACE_LATE_MS } from '../../src/webhooks/delivery-lanes.js';
import { Dispatcher, type Claims } from '../../src/webhooks/dispatcher.js';
import { signRinglane, signStandardWebhook } from '../../src/webhooks/verify.js';

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
    expect(decide({ kind: 'timeout', durationMs: 10_000 }, 6, { ...policy, maxAttempts: 10 }, fixed(0.5))).to.deep.equal({
      status: 'retrying',
      retryInMs: 32_000,
    });
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
    // A tenant's event: every header a delivery can send of its own.
    const sent = deliveryHeaders({ custom_headers: {}, secret: 'a-secret-value', delivery_id: 'dlv_1', tenant_id: 'org_tenant' }, '{}', 'attempt', 0);
    expect(rows.flatMap((row) => names(row.split('|')[1]))).to.have.members(Object.keys(sent));
  });
});

/** A delivery's target as a claim gives it; `fields` override. */
const target = (fields: Partial<DeliveryTarget> = {}): DeliveryTarget => ({
  delivery_id: 'dlv_1',
  attempt_count: 0,
  endpoint_id: 'whe_1',
  url: 'http://127.0.0.1:9/hooks',
  secret: 'the-new-secret',
  previous_secret: null,
  previous_secret_expires_at: null,
  field_aliases: {},
  extra_payload: {},
  custom_headers: {},
  payload: { event: 'call.queued', call_id: 'call_1' },
  tenant_id: null,
  created_at: new Date(),
  ...fields,
});

describe('X-Ringlane-Tenant-Id (stage 1, prepare; CONTRACT.md §5)', () => {
  const forged = { 'X-RINGLANE-TENANT-ID': 'org_forged', 'x-ringlane-tenant-id': 'org_forged_too', 'X-Team': 'blue' };

  it("names the tenant of a tenant's event, whatever custom_headers say in any case", () => {
    const { headers } = prepareRequest(target({ tenant_id: 'org_tenant', custom_headers: forged }));
    expect(Object.keys(headers).filter((name) => name.toLowerCase() === 'x-ringlane-tenant-id')).to.deep.equal(['x-ringlane-tenant-id']);
    expect(headers['x-ringlane-tenant-id']).to.equal('org_tenant');
    expect(headers['x-team']).to.equal('blue');
  });

  it('is absent for an event of an organization that is not a tenant, even when custom_headers set it', () => {
    const { headers } = prepareRequest(target({ custom_headers: forged }));
    expect(Object.keys(headers).map((name) => name.toLowerCase())).to.not.include('x-ringlane-tenant-id');
    expect(headers['x-team']).to.equal('blue');
  });
});

describe('signing during a secret rotation (stage 1, prepare; CONTRACT.md §4)', () => {
  const expires = new Date('2026-11-24T15:00:00.000Z');
  const rotating = target({ previous_secret: 'the-old-secret', previous_secret_expires_at: expires });
  const signed = (request: PreparedRequest, ...secrets: string[]) =>
    secrets.map((secret) => signStandardWebhook('dlv_1', request.headers['webhook-timestamp'], request.body, secret)).join(' ');

  it('webhook-signature carries the new secret’s signature, then the previous one’s, while the attempt is made before the previous one expires', () => {
    const request = prepareRequest(rotating, new Date(expires.getTime() - 1));
    expect(request.headers['webhook-signature']).to.equal(signed(request, 'the-new-secret', 'the-old-secret'));
    expect(request.headers['x-ringlane-signature']).to.equal(signRinglane(request.body, 'the-new-secret'));
  });

  it('from the moment it expires, and without a previous secret, only the current secret signs', () => {
    for (const request of [prepareRequest(rotating, expires), prepareRequest(target(), new Date(expires.getTime() - 1))]) {
      expect(request.headers['webhook-signature']).to.equal(signed(request, 'the-new-secret'));
      expect(request.headers['x-ringlane-signature']).to.equal(signRinglane(request.body, 'the-new-secret'));
    }
  });
});

/**
 * A dispatcher over faked statements, whose sender accepts every delivery at once and notes it.
 * It scans once a minute: what it sends sooner, it sent without waiting for a scan.
 */
function fakedDispatcher(claims: Claims, range: { from: Date; to: Date }, lanes: { concurrency: number; endpointConcurrency: number }) {
  const sent: Array<{ id: string; at: number }> = [];
  const sender = {
    send: async (request: PreparedRequest): Promise<SendResult> => {
      sent.push({ id: request.headers['webhook-id'], at: Date.now() });
      return { kind: 'accepted', status: 200, body: '', durationMs: 1 };
    },
  } as unknown as DeliverySender;
  const metrics = { countAttempt() {}, observeLatency() {} };
  const recorder = new AttemptRecorder({ record: async () => [] }, metrics, 120);
  const dispatcher = new Dispatcher(claims, recorder, sender, {
    ...lanes,
    leaseSeconds: 30,
    pollMs: 60_000,
    retained: () => range,
    policy: { maxAttempts: 3, backoffBaseMs: 100, timeoutMs: 1000 },
  });
  return { dispatcher, sent };
}

/** Polls until `done` or 5 s passed (the test then fails on what it finds). */
async function waitFor(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

describe('the dispatcher’s claims over many endpoints (its statements and sender faked)', () => {
  it('a scan finding a thousand endpoints, most of whose deliveries another worker took, sends the rest at once, not one claim of a few endpoints per scan', async () => {
    const range = { from: new Date(0), to: new Date(Date.now() + 86_400_000) };
    const endpoints = Array.from({ length: 1000 }, (_, i) => `whe_${String(i).padStart(4, '0')}`);
    // Two due deliveries each at the last ten endpoints; the others' are already taken.
    const due = new Map(endpoints.slice(-10).map((id) => [id, [`dlv_${id}_a`, `dlv_${id}_b`]]));
    const asked: number[] = [];
    const claims = {
      openRange: async () => range,
      openEndpoints: async () => endpoints.map((id) => ({ id, paced: false })),
      claimDue: async (wanted: Array<{ endpointId: string; quota: number }>) => {
        asked.push(wanted.length);
        return wanted.flatMap(({ endpointId, quota }) =>
          (due.get(endpointId) ?? []).splice(0, quota).map((id) => target({ delivery_id: id, endpoint_id: endpointId })),
        );
      },
      claimPaced: async () => [],
      release: async () => undefined,
    } as unknown as Claims;
    const { dispatcher, sent } = fakedDispatcher(claims, range, { concurrency: 200, endpointConcurrency: 50 });
    dispatcher.start();
    await waitFor(() => sent.length === 20);
    await dispatcher.stop();

    expect(sent.map((s) => s.id).sort()).to.deep.equal(endpoints.slice(-10).flatMap((id) => [`dlv_${id}_a`, `dlv_${id}_b`]));
    // Every endpoint asked for, each claim sharing the room (twice the concurrency) among them.
    expect(asked.reduce((a, b) => a + b, 0)).to.be.at.least(1000);
    expect(Math.max(...asked)).to.equal(400);
  });
});

describe('a rate-limited endpoint’s lane (the dispatcher, with its statements and sender faked)', () => {
  it('sends each delivery in its send slot, in slot order, and gives back one whose slot passed more than PACE_LATE_MS ago', async () => {
    const range = { from: new Date(0), to: new Date(Date.now() + 86_400_000) };
    const slots = [150, 0, 300, -(PACE_LATE_MS + 100)];
    const given: string[][] = [];
    let claimedAt = 0;
    let claimed = 0;
    const claims = {
      openRange: async () => range,
      openEndpoints: async () => [{ id: 'whe_1', paced: true }],
      claimDue: async () => [],
      claimPaced: async () => {
        claimedAt = Date.now();
        // The first claim hands out the slots; later ones find nothing more.
        return claimed++ > 0 ? [] : slots.map((wait, i) => target({ delivery_id: `dlv_${i}`, wait_ms: wait }));
      },
      release: async (targets: DeliveryTarget[]) => {
        if (targets.length > 0) given.push(targets.map((t) => t.delivery_id));
      },
    } as unknown as Claims;
    const { dispatcher, sent } = fakedDispatcher(claims, range, { concurrency: 10, endpointConcurrency: 10 });
    dispatcher.start();
    await waitFor(() => sent.length >= 3);
    await dispatcher.stop();

    expect(given).to.deep.equal([['dlv_3']]);
    expect(sent.map((s) => s.id)).to.deep.equal(['dlv_1', 'dlv_0', 'dlv_2']);
    for (const { id, at } of sent) expect(at - claimedAt, id).to.be.at.least(Math.max(0, slots[Number(id.slice(4))]));
  });
});
