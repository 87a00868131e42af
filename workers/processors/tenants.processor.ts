import { applyTenantState, tenantsNeedingEffects } from '../../src/tenants/tenant-effects.js';
import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../run-worker.js';

/** The `tenants` queue: disable side effects, and a sweep that re-runs any that were lost. */
export function tenantsProcessors({ engine }: Runtime): Processors<'tenants'> {
  return {
    'apply-state': (job) => applyTenantState(engine, job.data.tenantId),
    sweep: async () => {
      for (const tenantId of await tenantsNeedingEffects()) await applyTenantState(engine, tenantId);
    },
  };
}
