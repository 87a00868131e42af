import { pino } from 'pino';
import { config } from '../config.js';

/**
 * The process logger. Secrets never reach it: the Authorization header is redacted here,
 * and no code logs raw keys, tokens or passwords.
 */
export const logger = pino({
  level: config.logLevel,
  redact: {
    paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.secret', '*.key'],
    censor: '[redacted]',
  },
});
