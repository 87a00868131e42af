import type { Request, Response } from 'express';
import { logger } from '../lib/logger.js';
import { checkKey, RecordSecrets, type IdempotencyService, type RecordOwner, type StoredResponse } from './idempotency.service.js';

/** Sends an outcome: a 204 has no body. */
export function sendOutcome(res: Response, outcome: StoredResponse): void {
  if (outcome.status === 204) res.status(204).end();
  else res.status(outcome.status).json(outcome.body);
}

const succeeded = (status: number) => status >= 200 && status < 300;

/**
 * `Idempotency-Key` on a POST (CONTRACT.md §2, narrowed by issue 9): runs `work` once per
 * key and credential, and replays its outcome with `Idempotent-Replayed: true`.
 *
 * Only successes are stored. An error left nothing written (every write is one transaction),
 * so running the request again is safe, and storing it would be harmful: a replayed 429 lacks
 * its Retry-After and burns the key for 24 hours, a replayed 402 outlives the top-up that
 * fixed it. Answers given before the work starts (401, 403, 400, 409 in use, 422 reused)
 * never claim the key at all: the caller validates and authorizes first.
 */
export class IdempotentRequests {
  constructor(private readonly service: IdempotencyService) {}

  async respond(req: Request, res: Response, owner: RecordOwner, work: () => Promise<StoredResponse>): Promise<void> {
    const key = req.get('idempotency-key');
    if (key === undefined) return sendOutcome(res, await work());
    checkKey(key);
    const secrets = new RecordSecrets(owner, key);
    const claim = await this.service.claim(owner, secrets, { method: req.method, path: req.originalUrl, body: req.body });
    if (claim.kind === 'replay') {
      res.set('Idempotent-Replayed', 'true');
      return sendOutcome(res, claim.response);
    }
    let outcome: StoredResponse;
    try {
      outcome = await work();
    } catch (err) {
      await this.settle(this.service.release(owner, secrets));
      throw err;
    }
    await this.settle(succeeded(outcome.status) ? this.service.complete(owner, secrets, outcome) : this.service.release(owner, secrets));
    sendOutcome(res, outcome);
  }

  /**
   * The work is done whatever happens to its record: the response goes out even when the
   * record cannot be written (a record left claimed frees itself after a few minutes).
   */
  private async settle(write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      logger.error({ err }, 'could not settle the idempotency record');
    }
  }
}
