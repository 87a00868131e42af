import { getPriority, setPriority } from 'node:os';
import { logger } from './logger.js';

/**
 * Lowers this process's CPU priority to `nice` (0..19; never raises it, which would need
 * privilege). For the processes that take in new work (`web`, `calls`): when every process
 * shares one machine and the CPU is full, the scheduler then serves the delivery path first,
 * so committed events drain instead of piling up. Their throughput is bound by Postgres, whose
 * backends keep their priority; on a machine of its own a process is unaffected.
 */
export function lowerCpuPriority(nice: number): void {
  if (nice <= getPriority()) return;
  try {
    setPriority(nice);
  } catch (err) {
    logger.warn({ err, nice }, 'could not lower this process\'s CPU priority; it runs at its current one');
  }
}
