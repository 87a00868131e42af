import { openDatabase } from '../../src/runtime.js';

/**
 * This run's database (see env.ts), for the runtimes tests build and for checking rows directly;
 * connected and closed by the root hooks.
 */
export const db = openDatabase();
