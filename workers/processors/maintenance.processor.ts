import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

export const maintenanceProcessors = ({ services }: Runtime): Processors<'maintenance'> => ({
  /** Deletes idempotency records past their 24 hours and expired sessions; forgets webhook secrets rotated out. */
  'purge-expired': async () => ({
    idempotencyRecords: await services.idempotency.purgeExpired(),
    sessions: await services.sessions.purgeExpired(),
    previousWebhookSecrets: await services.webhookEndpoints.forgetExpiredSecrets(),
  }),
  /** Partitions of the history tables: made days ahead, dropped past retention (src/history/history-partitions.ts). */
  'history-partitions': () => services.history.maintain(),
});
