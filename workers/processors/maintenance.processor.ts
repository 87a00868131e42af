import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

export const maintenanceProcessors = ({ services }: Runtime): Processors<'maintenance'> => ({
  /** Deletes idempotency records past their 24 hours and expired sessions; forgets webhook secrets rotated out. */
  'purge-expired': async () => ({
    idempotencyRecords: await services.idempotency.purgeExpired(),
    sessions: await services.sessions.purgeExpired(),
    previousWebhookSecrets: await services.webhookEndpoints.forgetExpiredSecrets(),
  }),
  /** Made days ahead, dropped past retention. */
  'history-partitions': () => services.history.maintain(),
  /** Vacuums and analyzes the hot tables when the server's autovacuum is off. */
  'table-upkeep': () => services.tableUpkeep.run(),
});
