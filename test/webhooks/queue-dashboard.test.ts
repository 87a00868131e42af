import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { config } from '../../src/config.js';
import { createQueue } from '../../src/jobs.js';
import { failedJobId } from '../../src/webhooks/failed-delivery-board.js';
import { asCaller, expectStatus } from '../helpers/api.js';
import { launchBrowser } from '../helpers/browser.js';
import { eventually, freePort, startService, type Service } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { redisForTests } from '../helpers/redis.js';
import { placeCall, stopProcess, voiceOrg } from '../helpers/voice.js';

describe('support staff retry a failed delivery in the queue dashboard (a real browser)', function () {
  this.timeout(120_000);
  const services: Service[] = [];
  let receiver: Receiver;
  let browser: Browser;
  let port: number;
  let accepting = false;
  const { queue } = createQueue('webhooks', redisForTests());

  before(async () => {
    port = await freePort();
    receiver = await startReceiver(() => ({ status: accepting ? 200 : 503 }));
    const settings = { WEBHOOK_MAX_ATTEMPTS: '2', WEBHOOK_BACKOFF_BASE_MS: '50' };
    services.push(
      ...(await Promise.all([
        startService('web', { PORT: String(port) }),
        startService('calls'),
        startService('relay', settings),
        startService('webhooks', settings),
      ])),
    );
    browser = await launchBrowser();
  });

  after(async () => {
    await queue.close();
    await browser?.close();
    await Promise.all(services.map((s) => stopProcess(s.child)));
    await receiver?.close();
  });

  /** An organization whose `call.completed` delivery failed (503 twice), and its dashboard job, failed. */
  async function failedDelivery() {
    const org = await voiceOrg();
    expectStatus(
      await asCaller(org.key).post('/v1/webhook-endpoints', { name: 'Hooks', url: receiver.url, secret: 'a long secret', outcomes: ['neutral'] }),
      201,
    );
    await placeCall(org, { duration_seconds: 1 });
    const failed = await eventually(
      async () => expectStatus(await asCaller(org.key).get('/v1/webhook-deliveries'), 200).body.data[0],
      (d) => d?.status === 'failed',
      'the delivery failed',
    );
    expect(failed.attempts.map((a: { response_status: number }) => a.response_status)).to.deep.equal([503, 503]);
    await eventually(
      async () => (await queue.getJob(failedJobId(failed.id)))?.getState(),
      (state) => state === 'failed',
      'the failed job',
    );
    return { org, failed };
  }

  it('a delivery whose attempts are used up is a failed job there, with its last answer; Retry sends a new attempt', async () => {
    accepting = false;
    const { org, failed } = await failedDelivery();
    const jobId = failedJobId(failed.id);

    // Support opens the dashboard (the browser asks for the operator token: Basic, any user name).
    const context = await browser.newContext({ httpCredentials: { username: 'support', password: config.operatorToken! } });
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${port}/admin/queues/queue/webhooks?status=failed`);
    // bull-board's job card: its id in the header, Retry as the first of the job's action icons.
    const card = page.locator('[class^="card-"]', { has: page.locator('[class^="jobId-"]', { hasText: jobId }) });
    await card.waitFor();
    // The card names the delivery, its endpoint and event, and the last answer (its details render after it).
    for (const shown of [failed.endpoint_id, 'call.completed', 'HTTP 503, last response status 503']) {
      await card.getByText(shown, { exact: false }).first().waitFor({ timeout: 10_000 });
    }
    await page.screenshot({ path: `/tmp/ringlane-dashboard-failed-${process.pid}.png` });

    accepting = true;
    const before = receiver.received.length;
    await card.locator('[class^="jobActions-"] button:has(svg.lucide-refresh-cw)').click();
    const confirm = page.getByRole('button', { name: 'Confirm' });
    if (await confirm.isVisible({ timeout: 2000 }).catch(() => false)) await confirm.click();

    await receiver.until((all) => all.length > before);
    const retried = receiver.received[receiver.received.length - 1];
    expect(retried.headers['webhook-id']).to.equal(failed.id);
    const after = await eventually(
      async () => expectStatus(await asCaller(org.key).get(`/v1/webhook-deliveries/${failed.id}`), 200).body,
      (d) => d.status === 'succeeded',
      'the delivery succeeded',
    );
    expect(after.attempts.map((a: { response_status: number }) => a.response_status)).to.deep.equal([503, 503, 200]);
    expect(await (await queue.getJob(jobId))?.getState()).to.not.equal('failed');
    await context.close();
  });

  it('a failed delivery sent again by the API (recover) and accepted leaves the failed list', async () => {
    accepting = false;
    const { org, failed } = await failedDelivery();
    accepting = true;
    const since = new Date(Date.now() - 60_000).toISOString();
    expect((await asCaller(org.key).post(`/v1/webhook-endpoints/${failed.endpoint_id}/recover`, { since })).status).to.equal(202);
    await eventually(
      async () => expectStatus(await asCaller(org.key).get(`/v1/webhook-deliveries/${failed.id}`), 200).body.status,
      (status) => status === 'succeeded',
      'the delivery succeeded',
    );
    expect(await queue.getJob(failedJobId(failed.id))).to.equal(undefined);
  });
});
