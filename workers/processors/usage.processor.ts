import type { Runtime } from '../../src/runtime.js';
import type { Processors } from '../../src/jobs.js';

/** How often the rollup runs: each run recomputes only the hours since the last one (plus two). */
export const ROLLUP_EVERY_MS = 60_000;

export const usageProcessors = ({ services }: Runtime): Processors<'usage'> => ({
  rollup: async () => {
    const result = await services.usageRollup.run();
    return { from: result.from?.toISOString() ?? null, rolledUntil: result.rolledUntil.toISOString(), chunks: result.chunks };
  },
});
