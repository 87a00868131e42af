import { purgeExpiredSessions } from '../../src/auth/sessions.js';
import { IdempotencyService } from '../../src/idempotency/idempotency.service.js';
import { db } from '../../src/lib/db.js';
import type { Processors } from '../run-worker.js';

export const maintenanceProcessors: Processors<'maintenance'> = {
  /** Deletes idempotency records past their 24 hours and expired sessions. */
  'purge-expired': async () => ({
    idempotencyRecords: await new IdempotencyService(db).purgeExpired(),
    sessions: await purgeExpiredSessions(),
  }),
};
