import { expect } from 'chai';
import { CallLimits } from '../../src/calls/call-limits.js';
import { db } from '../helpers/db.js';
import { redisForTests } from '../helpers/redis.js';
import { placeCall, startCallsWorker, stopProcess, voiceOrg, waitForCalls, type VoiceOrg } from '../helpers/voice.js';

/** An organization allowed `slots` calls at once, and its calls placed while no calls worker runs: they wait for admission. */
async function waitingCalls(slots: number, count: number): Promise<{ org: VoiceOrg; ids: string[]; limits: CallLimits }> {
  const org = await voiceOrg({ contacts: count, fields: { ceiling: { max_concurrent_calls: slots, max_calls_per_hour: 1000 } } });
  const ids: string[] = [];
  for (const contactId of org.contactIds) ids.push((await placeCall(org, { duration_seconds: 1 }, contactId)).id);
  return { org, ids, limits: new CallLimits(redisForTests()) };
}

/** Starts a calls worker; every call of `ids` must complete, dialed once, within its sweeps. */
async function sweptThrough(org: VoiceOrg, ids: string[]): Promise<void> {
  const worker = await startCallsWorker();
  try {
    const calls = await waitForCalls(org, ids, 60_000);
    expect(calls.map((c) => c.status)).to.deep.equal(ids.map(() => 'completed'));
    const dialed = await db.query('SELECT count(*)::int AS n FROM calls WHERE id = ANY($1) AND dialed_at IS NOT NULL', [ids]);
    expect(dialed[0].n).to.equal(ids.length);
  } finally {
    await stopProcess(worker);
  }
}

describe('the call sweeper (src/calls/sweeper.ts)', function () {
  this.timeout(90_000);

  it('frees the slots of calls admitted but never dialed (the dial failed, Postgres away), and they are dialed again', async () => {
    const { org, ids, limits } = await waitingCalls(2, 2);
    // Admitted (both slots taken), then the dial fails as on a connection lost with the primary:
    // nothing gives the slots back, and the calls stay queued, undialed.
    const admission = await limits.admit(org.id, { maxConcurrentCalls: 2, maxCallsPerHour: 1000 });
    expect(admission.callIds.sort()).to.deep.equal([...ids].sort());
    // The worker's sweeper finds them undialed past its grace period and frees their slots.
    await sweptThrough(org, ids);
  });

  it('frees a slot held by a call that is not in Postgres (lost with a standby that was behind), so the waiting calls go through', async () => {
    const { org, ids, limits } = await waitingCalls(1, 1);
    // A call Redis admitted whose row the promoted standby never had: older, so admitted first.
    const gone = 'call_GoneWithTheOldPrimary0001';
    await limits.enqueue(org.id, [{ id: gone, createdAt: new Date(Date.now() - 60_000) }]);
    expect((await limits.admit(org.id, { maxConcurrentCalls: 1, maxCallsPerHour: 1000 })).callIds).to.deep.equal([gone]);
    await sweptThrough(org, ids);
    expect(await limits.activeCalls(org.id)).to.deep.equal([]);
  });
});
