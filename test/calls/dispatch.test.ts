import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { eventsOf, placeCall, startCallsWorker, stopProcess, voiceOrg, waitForCalls } from '../helpers/voice.js';

describe('one dispatch for the calls of every organization (src/calls/engine.ts)', function () {
  this.timeout(90_000);
  let worker: ChildProcess | undefined;
  afterEach(async () => {
    if (worker) await stopProcess(worker, 'SIGKILL');
    worker = undefined;
  });

  it("calls placed by three organizations before a dispatch runs are dialed as one batch: the carrier's reports of all three come at the same times", async () => {
    const orgs = await Promise.all([voiceOrg(), voiceOrg(), voiceOrg()]);
    const placed = await Promise.all(orgs.map((org) => placeCall(org, { duration_seconds: 1 })));
    worker = await startCallsWorker();
    await Promise.all(orgs.map((org, i) => waitForCalls(org, [placed[i].id], 60_000)));
    const timelines = await Promise.all(
      placed.map(async (call) => (await eventsOf(call.id)).filter((e) => e.event !== 'call.queued').map((e) => `${e.event} ${e.occurred_at.toISOString()}`)),
    );
    expect(timelines[0].map((line) => line.split(' ')[0])).to.deep.equal(['call.ringing', 'call.in_progress', 'call.completed']);
    expect(timelines[1]).to.deep.equal(timelines[0]);
    expect(timelines[2]).to.deep.equal(timelines[0]);
  });
});
