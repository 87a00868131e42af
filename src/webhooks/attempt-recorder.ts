import { logger } from '../lib/logger.js';
import type { WebhookMetrics } from '../lib/metrics.js';
import type { AttemptsRepository, RecordedAttempt } from './attempts.repository.js';
import type { Decision } from './delivery-decision.js';
import type { DeliveryTarget } from './delivery-request.js';
import type { SendResult } from './delivery-send.js';

/** Attempts recorded together: whichever comes first, this many or this long after the first. */
export const RECORD_BATCH = 200;
const RECORD_WAIT_MS = 25;

/** One attempt's outcome, as recorded. */
export interface AttemptReport {
  target: DeliveryTarget;
  result: SendResult;
  decision: Decision;
  recorded: RecordedAttempt;
}

export interface RecorderHooks {
  /** Called with deliveries that became `failed`, after they were recorded. */
  onFailed?: (reports: AttemptReport[]) => Promise<void>;
}

/** Records attempts in batches, one statement each, one batch at a time: hundreds of attempts a second cost a few statements. */
export class AttemptRecorder {
  private batch: Array<{ report: AttemptReport; done: () => void; failed: (err: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private recording: Promise<void> = Promise.resolve();

  constructor(
    private readonly attempts: Pick<AttemptsRepository, 'record'>,
    private readonly metrics: Pick<WebhookMetrics, 'countAttempt' | 'observeLatency'>,
    private readonly disableAfterHours: number,
    private readonly hooks: RecorderHooks = {},
  ) {}

  /** Adds an attempt to the next batch; resolves once it is recorded. */
  record(report: AttemptReport): Promise<void> {
    const { kind } = report.result;
    this.metrics.countAttempt(kind === 'rejected' ? 'failed_status' : kind === 'accepted' ? 'succeeded' : kind);
    return new Promise<void>((done, failed) => {
      this.batch.push({ report, done, failed });
      if (this.batch.length >= RECORD_BATCH) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), RECORD_WAIT_MS);
    });
  }

  /** Flushes and waits until every batch so far is recorded. */
  async drain(): Promise<void> {
    this.flush();
    await this.recording;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0) return;
    this.recording = this.recording.then(async () => {
      try {
        await this.attempts.record(
          batch.map((b) => b.report.recorded),
          this.disableAfterHours,
        );
        const now = Date.now();
        for (const { report } of batch) {
          if (report.decision.status === 'succeeded') this.metrics.observeLatency((now - report.target.created_at.getTime()) / 1000);
        }
        const failed = batch.filter((b) => b.report.decision.status === 'failed').map((b) => b.report);
        if (failed.length > 0) await this.hooks.onFailed?.(failed).catch((err) => logger.warn({ err }, 'webhooks: failed deliveries not shown in the queue'));
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.failed(err);
      }
    });
  }
}
