// Endpoint throttle (CONTRACT.md §4 `rate_limit_per_second`): deliveries to a
// rate-limited endpoint are paced to its rate across every webhooks process, and none is
// dropped. Real processes (calls, relay, two webhooks workers) and real receivers; the events
// come from calls placed through the HTTP API.
import { expect } from 'chai';
import { asCaller, expectStatus } from '../helpers/api.js';
import { ServiceProcesses, waitUntil } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { placeCall, voiceOrg, waitForCalls } from '../helpers/voice.js';

const SECRET = 'whsec_' + Buffer.from('throttle tests: 32-byte secret!!').toString('base64');
const RATE = 5;
const CALLS = 7;
const EVENTS = CALLS * 4;

/**
 * The send slots are 1.05/rate s apart, so that rate + 1 sends span a second even when the
 * first left PACE_LATE_MS (50 ms) after its slot. What the test cannot hold the sender to is the
 * way there: a process's first request takes longer (seen on a slow machine: the first arrival
 * 105 ms behind the sixth, measured from their slots), and the receiver's own event loop adds
 * jitter. The window is shortened by that much.
 */
const TOLERANCE_MS = 100;

/** The most deliveries among `times` (ms) in any window of `windowMs` (half open). */
function mostInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('rate-limited webhook endpoints (CONTRACT.md §4 rate_limit_per_second)', function () {
  this.timeout(120_000);
  const services = new ServiceProcesses();
  const receivers: Receiver[] = [];
  after(async function () {
    this.timeout(30_000);
    await services.stopAll();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it(`an endpoint limited to ${RATE}/s gets every delivery, never more than ${RATE} in a second, with two webhooks processes; an unlimited endpoint beside it is not held back`, async () => {
    const paced = await startReceiver();
    const free = await startReceiver();
    receivers.push(paced, free);
    const org = await voiceOrg();
    const owner = asCaller(org.key);
    const endpoint = async (url: string, fields: Record<string, unknown>) =>
      expectStatus(await owner.post('/v1/webhook-endpoints', { name: 'Hooks', url, secret: SECRET, outcomes: [], ...fields }), 201).body;
    const limited = await endpoint(paced.url, { rate_limit_per_second: RATE });
    const unlimited = await endpoint(free.url, {});

    // Every delivery is owed before any webhooks process runs, so both endpoints have their
    // whole backlog due at once: what then arrives shows the pace, not the calls' pace.
    await Promise.all([services.start('calls'), services.start('relay')]);
    const calls = await Promise.all(Array.from({ length: CALLS }, () => placeCall(org, { duration_seconds: 1 })));
    await waitForCalls(
      org,
      calls.map((c) => c.id),
    );
    const owed = async (endpointId: string) => expectStatus(await owner.get(`/v1/webhook-deliveries?limit=100&endpoint_id=${endpointId}`), 200).body.data;
    await waitUntil(
      'every delivery made',
      async () => (await owed(limited.id)).length === EVENTS && (await owed(unlimited.id)).length === EVENTS,
      20_000,
      () => services.tails(),
    );

    await Promise.all([services.start('webhooks'), services.start('webhooks')]);
    await free.until((all) => all.length >= EVENTS, 30_000);
    const pacedWhenFreeWasDone = paced.received.length;
    await paced.until((all) => all.length >= EVENTS, 60_000);

    // Nothing dropped, nothing sent twice: every delivery of each endpoint arrived once and succeeded.
    for (const [receiver, id] of [
      [paced, limited.id],
      [free, unlimited.id],
    ] as const) {
      const deliveries = await owed(id);
      expect(receiver.received.map((r) => r.headers['webhook-id']).sort()).to.deep.equal(deliveries.map((d: any) => d.id).sort());
      await waitUntil(
        'every delivery recorded succeeded',
        async () => (await owed(id)).every((d: any) => d.status === 'succeeded'),
        10_000,
        async () => JSON.stringify(await owed(id)),
      );
      expect((await owed(id)).map((d: any) => d.attempt_count)).to.deep.equal(Array(EVENTS).fill(1));
    }

    // The pace: no window of a second (less the tolerance) holds more than RATE arrivals.
    const pacedTimes = paced.received.map((r) => r.at);
    expect(
      mostInWindow(pacedTimes, 1000 - TOLERANCE_MS),
      `arrivals (ms after the first): ${pacedTimes.map((t) => t - pacedTimes[0]).join(', ')}`,
    ).to.be.at.most(RATE);
    // The unlimited endpoint is not held to it: it had everything before the paced one had half.
    expect(pacedWhenFreeWasDone).to.be.below(EVENTS / 2);
    expect(
      mostInWindow(
        free.received.map((r) => r.at),
        1000,
      ),
    ).to.be.above(RATE);
  });
});
