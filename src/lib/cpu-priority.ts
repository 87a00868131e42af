import { getPriority, setPriority } from 'node:os';
import { logger } from './logger.js';

/** Never raises it (that needs privilege); on a shared, saturated machine the delivery path is then served first. */
export function lowerCpuPriority(nice: number): void {
  if (nice <= getPriority()) return;
  try {
    setPriority(nice);
  } catch (err) {
    logger.warn({ err, nice }, "could not lower this process's CPU priority; it runs at its current one");
  }
}
