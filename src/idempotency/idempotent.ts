import type { Request, Response } from 'express';
import { logger } from '../lib/logger.js';
import { checkKey, RecordSecrets, type IdempotencyService, type RecordOwner, type StoredResponse } from './idempotency.service.js';

/**
 * Sends an outcome as JSON (a 204 has no body). Not `res.json`: Express's send re-reads the app's
 * settings and checks freshness on every answer, needless here (no ETag, no Last-Modified), and it
 * cost an authenticated read a few percent of its CPU (docs/operations.md#benchmarks).
 */
export function sendOutcome(res: Response, outcome: StoredResponse): void {
  res.statusCode = outcome.status;
  if (outcome.status === 204) {
    res.end();
    return;
  }
  const text = JSON.stringify(outcome.body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  // Node sends no body to a HEAD request.
  res.end(text);
}

const succeeded = (status: number) => status >= 200 && status < 300;

/**
 * Runs `work` once per `Idempotency-Key` and credential; replays with `Idempotent-Replayed: true`.
 * Only successes are stored: an error wrote nothing (one transaction), and a replayed 429 or 402 would
 * outlive its cause. Validation and authorization come first, so those answers never claim the key.
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

  /** The response goes out even when its record cannot be written (a claimed record frees itself in minutes). */
  private async settle(write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      logger.error({ err }, 'could not settle the idempotency record');
    }
  }
}
