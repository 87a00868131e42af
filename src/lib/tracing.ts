import { register } from 'node:module';
import {
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { BullMQOtel } from 'bullmq-otel';
import type { SpanOptions, SpanValue, Tracing, WorkSpan } from './telemetry.js';

/** Attributes that hold a URL or its query: query values (API keys, tokens, signatures in links) never leave the process. */
const URL_ATTRIBUTES = ['http.url', 'url.full', 'http.target', 'url.query'];

/** `a=1&b=2` → `a=&b=`: which parameters a request had, never their values. */
function withoutQueryValues(value: string): string {
  const at = value.indexOf('?');
  const path = at === -1 ? '' : value.slice(0, at + 1);
  const query = at === -1 ? value : value.slice(at + 1);
  return (
    path +
    query
      .split('&')
      .map((pair) => pair.split('=')[0] + (pair.includes('=') ? '=' : ''))
      .join('&')
  );
}

/** Runs before a span is ended (and so still writable): strips query values from URL attributes. */
const scrubQueryValues: SpanProcessor = {
  onStart: () => undefined,
  onEnding(span: Span) {
    for (const name of URL_ATTRIBUTES) {
      const value = span.attributes[name];
      if (typeof value !== 'string') continue;
      if (name === 'url.query' || value.includes('?')) span.setAttribute(name, withoutQueryValues(value));
    }
  },
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/**
 * The process kinds whose spans each name their parent (`inSpan`'s `parent`, the call's trace read
 * from its event): the relay and the webhooks worker. Their statements and Redis commands serve
 * batches of many calls' events, so they belong to no one call's trace and get no span; nothing
 * there needs a context carried across an `await`.
 */
const EXPLICIT_PARENTS = new Set(['relay', 'webhooks']);

/**
 * Their context manager: a context is active during the synchronous part of `with` only. Not
 * AsyncLocalStorage, whose async hooks on Node 20 tax every promise of the process: tracing's
 * whole cost in the webhooks worker was mostly that (docs/operations.md#tracing).
 */
class SynchronousContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(_context: Context, target: T): T {
    return target;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

/**
 * OTLP over HTTP in the encoding the standard variables name (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`,
 * else `OTEL_EXPORTER_OTLP_PROTOCOL`): `http/protobuf`, the standard's default, or `http/json`.
 * Protobuf costs half the CPU of JSON to encode and is less than half its size. gRPC is not sent.
 */
function otlpExporter(env: NodeJS.ProcessEnv): OTLPJsonTraceExporter | OTLPProtobufTraceExporter {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol === 'http/json') return new OTLPJsonTraceExporter();
  if (protocol !== 'http/protobuf') process.emitWarning(`OTLP protocol ${protocol} is not supported; sending http/protobuf`, 'TracingWarning');
  return new OTLPProtobufTraceExporter();
}

/** Links a span keeps (`OTEL_SPAN_LINK_COUNT_LIMIT`, 128 by default): the rest are not even read. */
const LINK_LIMIT = Number(process.env.OTEL_SPAN_LINK_COUNT_LIMIT) || 128;

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER };

/** A W3C traceparent of version 00, as this code writes them (`traceparentOf`) and keeps them with calls and events. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The span context a stored traceparent names, read directly: the relay reads several for each
 * event it relays (parent, links), and the propagator's general parse (any version, trace state,
 * a new context each time) cost more than the span itself. Anything else: none.
 */
function spanContextOf(traceparent: string | null | undefined): SpanContext | undefined {
  const parts = traceparent ? TRACEPARENT.exec(traceparent) : null;
  const read = parts ? { traceId: parts[1], spanId: parts[2], traceFlags: parseInt(parts[3], 16) & 1, isRemote: true } : undefined;
  return read && isSpanContextValid(read) ? read : undefined;
}

function traceparentOf({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-0${(traceFlags & 1).toString(16)}`;
}

function definedOnly(attributes: Record<string, SpanValue | null | undefined> | undefined): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) if (value !== null && value !== undefined) out[name] = value;
  return out;
}

/**
 * Starts the OpenTelemetry SDK for one process kind (`service.name` ringlane-<kind>), exporting
 * over OTLP/HTTP as the standard `OTEL_*` variables say. Loaded before the application, so that
 * http/express, pg and ioredis are instrumented as they load (ESM through import-in-the-middle).
 */
export function startTracing(kind: string): Tracing {
  // Hooks ESM imports (express, ioredis reached from ESM modules); CommonJS requires are hooked by the instrumentations themselves.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const resource = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ 'service.name': `ringlane-${kind}` }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [scrubQueryValues, new BatchSpanProcessor(otlpExporter(process.env))] });
  provider.register(EXPLICIT_PARENTS.has(kind) ? { contextManager: new SynchronousContextManager() } : {});
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Deliveries have a span of their own (the `webhook delivery` span) that the receiver gets as traceparent.
      new HttpInstrumentation({ disableOutgoingRequestInstrumentation: true }),
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // SQL text only ($1, $2 ... never the values); no span for the polls and claims made outside any trace.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, ignoreConnectSpans: true }),
      // The command's name only: keys and values can hold ids and payloads.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  const tracer = trace.getTracer('ringlane');
  return {
    traceparent() {
      const span = trace.getActiveSpan();
      return span ? traceparentOf(span.spanContext()) : null;
    },
    logFields() {
      const span = trace.getActiveSpan();
      if (!span) return null;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    routeMatched(route) {
      const rpc = getRPCMetadata(context.active());
      if (rpc?.type === RPCType.HTTP) rpc.route = route;
    },
    inSpan(name, options: SpanOptions, work) {
      const parent = spanContextOf(options.parent);
      const parentContext = parent ? trace.setSpanContext(context.active(), parent) : context.active();
      const links: Link[] = [];
      for (const link of options.links ?? []) {
        if (links.length === LINK_LIMIT) break;
        const linked = spanContextOf(link);
        if (linked) links.push({ context: linked });
      }
      return tracer.startActiveSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], links, attributes: definedOnly(options.attributes) },
        parentContext,
        async (span) => {
          const handle: WorkSpan = {
            traceparent: traceparentOf(span.spanContext()),
            set: (attributes) => span.setAttributes(definedOnly(attributes)),
          };
          try {
            return await work(handle);
          } catch (err) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    queues: new BullMQOtel({ tracerName: 'bullmq' }),
    flush: () => provider.forceFlush(),
  };
}
