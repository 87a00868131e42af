import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

/** The `tenants` queue: disable side effects, and a sweep that re-runs any that were lost. */
export function tenantsProcessors({ services }: Runtime): Processors<'tenants'> {
  return {
    'apply-state': (job) => services.tenantEffects.apply(job.data.tenantId),
    sweep: () => services.tenantEffects.sweep(),
  };
}
