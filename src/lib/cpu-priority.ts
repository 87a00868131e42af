import { getPriority, setPriority } from 'node:os';
import { logger } from './logger.js';

/**
 * Lowers this process's CPU priority to `nice` (never raises it: that needs privilege), so that on a
 * shared, saturated machine the delivery path is served first and committed events drain.
 */
export function lowerCpuPriority(nice: number): void {
  if (nice <= getPriority()) return;
  try {
    setPriority(nice);
  } catch (err) {
    logger.warn({ err, nice }, 'could not lower this process\'s CPU priority; it runs at its current one');
  }
}
