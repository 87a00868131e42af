import type { IncomingMessage } from 'node:http';
import type { Telemetry } from 'bullmq';
import type { RequestHandler } from 'express';

/**
 * Tracing as the rest of the code sees it. The OpenTelemetry SDK lives in tracing.ts, imported
 * (by telemetry-preload.ts) only when an OTLP endpoint is configured: without one, nothing of
 * OpenTelemetry is loaded and each function here costs a null check.
 */

/** A span attribute's value. */
export type SpanValue = string | number | boolean;

/** The span `inSpan` runs its work in. */
export interface WorkSpan {
  /** The W3C `traceparent` of this span. */
  readonly traceparent: string;
  set(attributes: Record<string, SpanValue | null | undefined>): void;
}

export interface SpanOptions {
  /** The span's parent, a W3C `traceparent` (null or absent: the active context's span, if any). */
  parent?: string | null;
  /** Spans this one serves besides its parent (W3C `traceparent`s; null ones skipped). */
  links?: Array<string | null>;
  kind?: 'internal' | 'client' | 'producer' | 'consumer';
  attributes?: Record<string, SpanValue | null | undefined>;
}

export interface RequestTracing {
  arrived: RequestHandler;
  entered: RequestHandler;
}

/** What tracing.ts provides once started. */
export interface Tracing {
  /** The active span's `traceparent`, or null outside any span. */
  traceparent(): string | null;
  /** `trace_id` and `span_id` of the active span, for a log line; null outside any span. */
  logFields(): { trace_id: string; span_id: string } | null;
  /** Names the request's server span after the API route it matched (`POST /v1/calls`). */
  routeMatched(req: IncomingMessage, route: string): void;
  /** The API's server spans: `arrived` is the app's first middleware, `entered` runs the rest of the request in its span once the body is read. */
  readonly requests: RequestTracing;
  inSpan<T>(name: string, options: SpanOptions, work: (span: WorkSpan) => Promise<T>): Promise<T>;
  /** A span that marks a moment (it starts and ends now) rather than covering work. */
  mark(name: string, options: SpanOptions): void;
  /** BullMQ's telemetry (bullmq-otel) for queues and workers. */
  readonly queues: Telemetry;
  /** Exports the spans still buffered; called on shutdown. */
  flush(): Promise<void>;
}

let tracing: Tracing | null = null;

/** Whether `env` asks for traces: an OTLP endpoint is set and the SDK not disabled. */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

export function installTracing(started: Tracing): void {
  tracing = started;
}

export const tracingOn = (): boolean => tracing !== null;

export const currentTraceparent = (): string | null => tracing?.traceparent() ?? null;

export const traceLogFields = (): { trace_id: string; span_id: string } | null => tracing?.logFields() ?? null;

export const routeMatched = (req: IncomingMessage, route: string): void => tracing?.routeMatched(req, route);

/** Express middleware giving each request its server span; null while tracing is off (the app then adds none). */
export const requestTracing = (): RequestTracing | null => tracing?.requests ?? null;

/** BullMQ's `telemetry` option: undefined while tracing is off. */
export const queueTelemetry = (): Telemetry | undefined => tracing?.queues;

/** Runs `work` in a new span (tracing on) or as is (off: `span` is null). */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: WorkSpan | null) => Promise<T>): Promise<T> {
  return tracing ? tracing.inSpan(name, options, work) : work(null);
}

/** Marks a moment with a span (tracing on): an ended span of no length, as `relay event`. */
export function markSpan(name: string, options: SpanOptions): void {
  tracing?.mark(name, options);
}

/** Exports the spans still buffered. A collector away at shutdown loses them; the stop itself does not fail. */
export async function flushTracing(): Promise<void> {
  await tracing?.flush().catch(() => undefined);
}
