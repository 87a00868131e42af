import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

/** How often the rollup runs: each run recomputes only the hours since the last one (plus two). */
export const ROLLUP_EVERY_MS = 60_000;

export const usageProcessors = ({ services }: Runtime): Processors<'usage'> => ({
  /** Rolls usage up into hourly buckets and advances the watermark (src/usage/usage-rollup.ts). */
  rollup: async () => {
    const result = await services.usageRollup.run();
    return { from: result.from?.toISOString() ?? null, rolledUntil: result.rolledUntil.toISOString(), chunks: result.chunks };
  },
});
