// Jobs of the webhooks queue that retrying cannot fix fail at once with BullMQ's
// UnrecoverableError (BullMQ does not retry them): what they name no longer exists.
import { UnrecoverableError } from 'bullmq';
import { expect } from 'chai';
import { db } from '../helpers/db.js';
import type { JobOf } from '../../src/jobs.js';
import { createDeliveryPath, createRuntime } from '../../src/runtime.js';
import { webhooksProcessors } from '../../workers/processors/webhooks.processor.js';
import { redisForTests } from '../helpers/redis.js';

/** What `work` was rejected with; fails the test if it was not. */
async function rejection(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    return err as Error;
  }
  throw new Error('it did not fail');
}

describe('webhooks jobs that retrying cannot fix', () => {
  const runtime = createRuntime({ db, redis: redisForTests() });
  const delivery = createDeliveryPath(runtime);
  const processors = webhooksProcessors(runtime, delivery.dispatcher);
  after(async () => {
    await delivery.stop();
    await runtime.close();
  });

  it('recover of an endpoint that no longer exists is unrecoverable', async () => {
    const job = { data: { endpointId: 'whe_gone', since: new Date().toISOString() } } as unknown as JobOf<'webhooks', 'recover'>;
    const err = await rejection(processors.recover(job));
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(err.message).to.equal('endpoint whe_gone no longer exists');
  });

  it('a retry of a delivery that no longer exists (past retention) is unrecoverable', async () => {
    const job = { id: '1', data: { deliveryId: 'dlv_gone', createdAt: new Date().toISOString() } } as unknown as JobOf<'webhooks', 'deliver'>;
    const err = await rejection(processors.deliver(job));
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(err.message).to.equal('delivery dlv_gone no longer exists');
  });
});
