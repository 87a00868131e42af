import { expect } from 'chai';
import type { Job } from 'bullmq';
import { db } from '../helpers/db.js';
import { createQueue, type JobQueue } from '../../src/jobs.js';
import { createRuntime } from '../../src/runtime.js';
import { asCaller, expectStatus } from '../helpers/api.js';
import { ServiceProcesses, waitUntil, type Service } from '../helpers/processes.js';
import { redisForTests } from '../helpers/redis.js';
import { placeCall, voiceOrg, waitForCalls, type VoiceOrg } from '../helpers/voice.js';

/** An organization with a texting sender: its positive calls get a confirmation text. */
async function textingOrg(): Promise<VoiceOrg> {
  const org = await voiceOrg();
  const as = asCaller(org.key);
  const number = expectStatus(await as.post('/v1/phone-numbers', {}), 201).body;
  expectStatus(await as.put('/v1/sms-sender', { phone_number: number.phone_number }), 200);
  return org;
}

/** The text of a call, as `GET /v1/messages` shows it. */
async function textOf(org: VoiceOrg, callId: string) {
  const [message] = expectStatus(await asCaller(org.key).get(`/v1/messages?call_id=${callId}`), 200).body.data;
  expect(message, `the text of ${callId}`).to.be.an('object');
  return message;
}

const sentAt = async (messageId: string): Promise<Date | null> => (await db.query('SELECT sent_at FROM messages WHERE id = $1', [messageId]))[0].sent_at;

/** How many times the simulated carrier delivered the text `messageId` (its log line per send). */
const deliveries = (worker: Service, messageId: string) =>
  worker.log
    .join('')
    .split('\n')
    .filter((line) => line.includes('simulator: text delivered') && line.includes(`"reference":"${messageId}"`)).length;

/** The job `jobId` of the calls queue once it finished. */
async function finished(queue: JobQueue<'calls'>, jobId: string): Promise<Job> {
  let job: Job | undefined;
  await waitUntil(
    `job ${jobId} finished`,
    async () => Boolean((job = await queue.queue.getJob(jobId))?.finishedOn),
    20_000,
    () => job?.toJSON() ?? 'no such job',
  );
  return job!;
}

describe('confirmation texts: recorded with the call’s end, sent by a job after it commits', function () {
  this.timeout(60_000);
  const processes = new ServiceProcesses();
  let queue: JobQueue<'calls'>;
  before(() => {
    queue = createQueue('calls', redisForTests());
  });
  after(() => queue.close());
  afterEach(() => processes.stopAll());

  it('a positive call’s text is sent by its send-text job, once, even when the job runs again; the API shows no sending state', async () => {
    const worker = await processes.start('calls');
    const org = await textingOrg();
    const placed = await placeCall(org, { outcome: 'positive', duration_seconds: 1 });
    await waitForCalls(org, [placed.id]);
    const message = await textOf(org, placed.id);
    expect(message).to.have.all.keys('id', 'call_id', 'from', 'to', 'body', 'charge', 'currency', 'status', 'failure_reason', 'created_at');
    expect(message).to.include({ status: 'sent', failure_reason: null });

    const job = await finished(queue, `text-${message.id}`);
    expect(job.returnvalue).to.equal('sent');
    const first = await sentAt(message.id);
    expect(first, 'sent_at once the carrier accepted it').to.be.an.instanceOf(Date);
    await waitUntil(
      'the carrier’s record of the send',
      async () => deliveries(worker, message.id) === 1,
      5000,
      () => processes.tails(),
    );

    // The same job again (a retry after a crash, a sweep's re-run): the text is not sent twice.
    await queue.add('send-text', { messageId: message.id }, { jobId: `again-${message.id}` });
    expect((await finished(queue, `again-${message.id}`)).returnvalue).to.equal('already sent');
    expect(await sentAt(message.id)).to.deep.equal(first);
    expect(deliveries(worker, message.id), 'sends the carrier made').to.equal(1);
  });

  it('a text whose send job was lost is sent by the calls sweeper', async () => {
    const org = await textingOrg();
    const placed = await placeCall(org, { outcome: 'positive', duration_seconds: 1 });
    // No calls worker runs yet: this process's engine ends the call, and the text's send job
    // waits in Redis; then Redis loses it.
    const runtime = createRuntime({ db, redis: redisForTests() });
    try {
      await runtime.engine.end([placed.id], { status: 'completed', endReason: 'completed', at: new Date(), durationSeconds: 1 });
    } finally {
      await runtime.close();
    }
    const message = await textOf(org, placed.id);
    const job = await queue.queue.getJob(`text-${message.id}`);
    expect(job, 'the send job, queued after the commit').to.not.equal(undefined);
    await job!.remove();
    // Recorded longer ago than the sweeper waits for a job to do its work.
    await db.query(`UPDATE messages SET created_at = created_at - interval '1 minute' WHERE id = $1`, [message.id]);
    expect(await sentAt(message.id)).to.equal(null);

    const worker = await processes.start('calls');
    await waitUntil(
      'the text sent',
      async () => (await sentAt(message.id)) !== null,
      20_000,
      () => processes.tails(),
    );
    await waitUntil(
      'the carrier’s record of the send',
      async () => deliveries(worker, message.id) === 1,
      5000,
      () => processes.tails(),
    );
  });
});
