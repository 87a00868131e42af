import type { IncomingMessage, ServerResponse } from 'node:http';
import { register } from 'node:module';
import {
  context,
  INVALID_SPANID as INVALID_SPAN_ID,
  INVALID_TRACEID as INVALID_TRACE_ID,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions as OtelSpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { BullMQOtel } from 'bullmq-otel';
import { DirectSpans, traceparentOf, type DirectStart } from './direct-spans.js';
import { ProtobufBatchProcessor } from './otlp-export.js';
import type { SpanOptions, SpanValue, Tracing, WorkSpan } from './telemetry.js';

/**
 * The process kinds whose spans each name their parent (`inSpan`'s `parent`, the call's trace read
 * from its event): the relay and the webhooks worker. Their statements and Redis commands serve
 * batches of many calls' events, so they belong to no one call's trace and get no span; nothing
 * there needs a context carried across an `await`, and pg and ioredis are not instrumented (the
 * instrumentation would only check each statement and command for a parent it never has), nor
 * their imports hooked.
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
 * else `OTEL_EXPORTER_OTLP_PROTOCOL`): `http/protobuf`, the standard's default, encoded as each
 * span ends (src/lib/otlp-export.ts), or `http/json` by the SDK's batching and exporter. Protobuf
 * is half JSON's size and, so encoded, about half its CPU (`npm run bench:otlp`). gRPC is not sent.
 */
function spanProcessor(env: NodeJS.ProcessEnv): SpanProcessor {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol === 'http/json') return new BatchSpanProcessor(new OTLPJsonTraceExporter());
  if (protocol !== 'http/protobuf') process.emitWarning(`OTLP protocol ${protocol} is not supported; sending http/protobuf`, 'TracingWarning');
  return new ProtobufBatchProcessor();
}

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER };

/** A W3C traceparent of version 00, as this code writes them (`traceparentOf`) and keeps them with calls and events. */
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The span context a stored traceparent names, read directly: the relay reads several for each
 * event it relays (parent, links), and the propagator's general parse (any version, trace state,
 * a new context each time) cost more than the span itself. Anything else: none.
 */
function spanContextOf(traceparent: string | null | undefined): SpanContext | undefined {
  if (!traceparent) return undefined;
  const hit = recentlyRead[0].traceparent === traceparent ? 0 : recentlyRead[1].traceparent === traceparent ? 1 : -1;
  if (hit === 1) recentlyRead.reverse();
  if (hit !== -1) return recentlyRead[0].context;
  let context: SpanContext | undefined;
  if (TRACEPARENT.test(traceparent)) {
    const traceId = traceparent.slice(3, 35);
    const spanId = traceparent.slice(36, 52);
    if (traceId !== INVALID_TRACE_ID && spanId !== INVALID_SPAN_ID)
      context = { traceId, spanId, traceFlags: parseInt(traceparent.slice(53), 16) & 1, isRemote: true };
  }
  recentlyRead[1] = recentlyRead[0];
  recentlyRead[0] = { traceparent, context };
  return context;
}

/**
 * The last two traceparents read, the latest first: a relay batch's, which the span of each event
 * it relayed links to beside that event's own parent, is read once.
 */
const recentlyRead: Array<{ traceparent: string; context: SpanContext | undefined }> = [
  { traceparent: '', context: undefined },
  { traceparent: '', context: undefined },
];

function definedOnly(attributes: Record<string, SpanValue | null | undefined> | undefined): Attributes {
  const out: Attributes = {};
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== null && value !== undefined) out[name] = value;
  }
  return out;
}

/** `a=1&b=2` → `a=&b=`: which parameters a request had, never their values (API keys, tokens, signatures in links). */
const withoutValues = (query: string): string =>
  query
    .split('&')
    .map((pair) => pair.split('=', 1)[0] + (pair.includes('=') ? '=' : ''))
    .join('&');

/** Request attributes by the stable HTTP conventions; of the query, its parameters' names only. */
function requestAttributes(req: IncomingMessage): Attributes {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  const attributes: Attributes = { 'http.request.method': req.method, 'url.path': at === -1 ? url : url.slice(0, at), 'url.scheme': 'http' };
  if (at !== -1) attributes['url.query'] = withoutValues(url.slice(at + 1));
  return attributes;
}

/** An Express route's template from the request it answered (`/admin/v1/orgs/:id`), if an Express route did. */
function expressRoute(req: IncomingMessage & { baseUrl?: string; route?: { path?: unknown } }): string | null {
  return typeof req.route?.path === 'string' ? `${req.baseUrl ?? ''}${req.route.path}` : null;
}

/**
 * The server span of one request, of SpanKind SERVER, named by its route's template (`POST
 * /v1/calls` as the API's router matched it, `GET /admin/v1/orgs/:id` as Express's did; the method
 * alone when none did). It starts as the request arrives, continues a caller's W3C `traceparent`,
 * and ends as the answer is sent (or the connection closes first: an error, with no status
 * code). The request's work runs in it from `entered` on, once the body is read: the body's stream
 * events run in the connection's context, not the request's.
 */
class RequestSpan {
  private readonly span: Span;
  readonly context: Context;
  private route: string | null = null;

  constructor(tracer: Tracer, req: IncomingMessage, res: ServerResponse) {
    const caller = propagation.extract(ROOT_CONTEXT, req.headers);
    this.span = tracer.startSpan(req.method ?? 'HTTP', { kind: SpanKind.SERVER, attributes: requestAttributes(req) }, caller);
    this.context = trace.setSpan(caller, this.span);
    // 'close' comes after the answer is sent, or when the connection closes first.
    res.once('close', () => {
      const route = this.route ?? expressRoute(req);
      if (route !== null) this.span.updateName(`${req.method} ${route}`).setAttribute('http.route', route);
      if (!res.writableFinished) this.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the connection closed before the answer was sent' });
      else {
        this.span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      this.span.end();
    });
  }

  /** The API's router matched `route`. */
  named(route: string): void {
    this.route = route;
  }
}

const requestSpans = new WeakMap<IncomingMessage, RequestSpan>();

/** How a span starts, from our options: its parent named (else none), links and attributes. */
function startOf(options: SpanOptions): DirectStart {
  const links: Link[] = [];
  for (const link of options.links ?? []) {
    const linked = spanContextOf(link);
    if (linked) links.push({ context: linked });
  }
  return { kind: KINDS[options.kind ?? 'internal'], parent: spanContextOf(options.parent), links, attributes: definedOnly(options.attributes) };
}

/** The SDK tracer's start options and parent context for a span: the parent named, else the active span. */
function sdkStart(options: SpanOptions): [OtelSpanOptions, Context] {
  const { kind, parent, links, attributes } = startOf(options);
  return [{ kind, links, attributes }, parent ? trace.setSpanContext(context.active(), parent) : context.active()];
}

/** Spans for the SQL statements and Redis commands made inside a span: pg and ioredis instrumented as they load. */
function instrumentClients(provider: NodeTracerProvider): void {
  // Hooks the ESM imports of pg and ioredis (our modules import them); CommonJS requires are hooked by
  // the instrumentations themselves. Those two only: a module the hook takes has each exported binding
  // read through a getter, and taking every module slowed the start and cost the web process CPU on
  // every request for nothing (docs/operations.md#tracing).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['pg', 'ioredis'] } });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // SQL text only ($1, $2 ... never the values); no span for the polls and claims made outside any trace.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, ignoreConnectSpans: true }),
      // The command's name only: keys and values can hold ids and payloads.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
}

/** `inSpan` by the SDK's tracer: the work runs in the span's context, so that the spans of its statements and commands are the span's children. */
function inSdkSpan<T>(tracer: Tracer, name: string, options: SpanOptions, work: (span: WorkSpan) => Promise<T>): Promise<T> {
  const [startOptions, parentContext] = sdkStart(options);
  return tracer.startActiveSpan(name, startOptions, parentContext, async (span) => {
    const handle: WorkSpan = {
      get traceparent() {
        return traceparentOf(span.spanContext());
      },
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
  });
}

/**
 * Starts the OpenTelemetry SDK for one process kind (`service.name` ringlane-<kind>), exporting
 * over OTLP/HTTP as the standard `OTEL_*` variables say. Loaded before the application, so that
 * pg and ioredis are instrumented as they load (ESM through import-in-the-middle), in the
 * processes whose spans have statements and commands beneath them (not EXPLICIT_PARENTS').
 */
export function startTracing(kind: string): Tracing {
  const explicitParents = EXPLICIT_PARENTS.has(kind);
  const resource = detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ 'service.name': `ringlane-${kind}` }));
  const processor = spanProcessor(process.env);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register(explicitParents ? { contextManager: new SynchronousContextManager() } : {});
  if (!explicitParents) instrumentClients(provider);
  const tracer = trace.getTracer('ringlane');
  // Our own spans there (they name their parents): made directly, not by the SDK's tracer.
  const direct = explicitParents ? new DirectSpans(processor, resource) : null;
  const activeSpan = (): SpanContext | undefined => direct?.active ?? trace.getActiveSpan()?.spanContext();
  return {
    traceparent() {
      const active = activeSpan();
      return active ? traceparentOf(active) : null;
    },
    logFields() {
      const active = activeSpan();
      return active ? { trace_id: active.traceId, span_id: active.spanId } : null;
    },
    routeMatched(req, route) {
      requestSpans.get(req)?.named(route);
    },
    requests: {
      arrived(req, res, next) {
        requestSpans.set(req, new RequestSpan(tracer, req, res));
        next();
      },
      entered(req, _res, next) {
        const span = requestSpans.get(req);
        if (span) context.with(span.context, next);
        else next();
      },
    },
    inSpan: (name, options, work) => (direct ? direct.inSpan(name, startOf(options), work) : inSdkSpan(tracer, name, options, work)),
    mark(name, options) {
      if (direct) return direct.mark(name, startOf(options));
      const [startOptions, parentContext] = sdkStart(options);
      tracer.startSpan(name, startOptions, parentContext).end();
    },
    queues: new BullMQOtel({ tracerName: 'bullmq' }),
    flush: () => provider.forceFlush(),
  };
}
