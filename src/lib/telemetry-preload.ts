import { basename, extname } from 'node:path';
import { installTracing, tracingConfigured } from './telemetry.js';

/**
 * Loaded by every process before its entry point (`node --import`, see the Procfile): with an
 * OTLP endpoint configured, starts tracing before express, pg and ioredis are first imported, so
 * their instrumentation is in place; without, it loads nothing more. The process kind, for
 * `service.name`, is the entry's file name (`server` is `web`).
 */
if (tracingConfigured(process.env)) {
  const entry = basename(process.argv[1] ?? 'node', extname(process.argv[1] ?? ''));
  const { startTracing } = await import('./tracing.js');
  installTracing(startTracing(entry === 'server' ? 'web' : entry));
}
