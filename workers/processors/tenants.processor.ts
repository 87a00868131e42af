import type { Job } from 'bullmq';
import type { CallsRuntime } from '../../src/calls/calls.runtime.js';
import { applyTenantState, tenantsNeedingEffects } from '../../src/tenants/tenant-effects.js';
import type { ApplyStateJob } from '../../src/tenants/tenants.jobs.js';
import type { Processors } from '../run-worker.js';

/** The `tenants` queue: disable side effects, and a sweep that re-runs any that were lost. */
export function tenantsProcessors({ engine }: CallsRuntime): Processors<'tenants'> {
  return {
    'apply-state': (job: Job<ApplyStateJob>) => applyTenantState(engine, job.data.tenantId),
    sweep: async () => {
      for (const tenantId of await tenantsNeedingEffects()) await applyTenantState(engine, tenantId);
    },
  };
}
