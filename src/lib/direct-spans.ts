import { performance } from 'node:perf_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  type AttributeValue,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanStatus,
} from '@opentelemetry/api';
import { addHrTimes, getNumberFromEnv, hrTimeDuration, millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { buildSamplerFromEnv } from '@opentelemetry/sdk-trace-base/build/src/config.js';
import { RandomIdGenerator, SamplingDecision, type ReadableSpan, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { WorkSpan } from './telemetry.js';

/** The scope of the spans made here, as the SDK's tracer `ringlane` names it: one object, so that the exporter batches them as one scope. */
const SCOPE = { name: 'ringlane' };

const NO_EVENTS: ReadableSpan['events'] = [];
const UNSET: SpanStatus = { code: SpanStatusCode.UNSET };

/** The W3C `traceparent` (version 00) of a span. */
export function traceparentOf({ traceId, spanId, traceFlags }: SpanContext): string {
  return `00-${traceId}-${spanId}-0${(traceFlags & 1).toString(16)}`;
}

/**
 * One span made without the SDK's tracer: what the span processor reads of an ended span, and no
 * more. Handed to the processor once, ended (`onEnd`); never started there (`onStart`), which
 * neither processor used here (ours, the SDK's batching) does anything with.
 */
class DirectSpan implements ReadableSpan {
  /**
   * Timed as the SDK times its spans: the start by the wall clock, the end by the monotonic clock
   * from there (performance.timeOrigin + now() alone drifts from the wall clock over days, and the
   * spans of a long-running worker would drift from the web's).
   */
  readonly startTime = millisToHrTime(Date.now());
  private readonly startedAt = performance.now();
  endTime: HrTime = this.startTime;
  status = UNSET;
  readonly events = NO_EVENTS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly instrumentationScope = SCOPE;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    readonly links: Link[],
    readonly resource: Resource,
  ) {}

  spanContext(): SpanContext {
    return this.context;
  }

  /** Now, as this span's clock reads it. */
  now(): HrTime {
    return addHrTimes(this.startTime, millisToHrTime(performance.now() - this.startedAt));
  }

  get duration(): HrTime {
    return hrTimeDuration(this.startTime, this.endTime);
  }

  get ended(): boolean {
    return true;
  }
}

/** The key under which a context holds its span, as the API's own `trace.getSpan` asks for it. */
const SPAN_KEY: symbol = (() => {
  let asked: symbol | undefined;
  const probe: Context = {
    getValue: (key) => void (asked = key),
    setValue: () => probe,
    deleteValue: () => probe,
  };
  trace.getSpan(probe);
  if (asked === undefined) throw new Error('@opentelemetry/api asked no key for the span of a context');
  return asked;
})();

/**
 * A context holding a span's parent and nothing else: what the sampler reads. The API's
 * `trace.setSpanContext(ROOT_CONTEXT, parent)` makes a Map and three closures for it, a fifth of
 * a delivery span's garbage.
 */
class ParentContext implements Context {
  constructor(private readonly parent: Span) {}

  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.parent : undefined;
  }

  setValue(key: symbol, value: unknown): Context {
    return trace.setSpan(ROOT_CONTEXT, this.parent).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return key === SPAN_KEY ? ROOT_CONTEXT : this;
  }
}

/** Copies the defined attributes, strings cut to `valueLimit` characters. */
function setAttributes(into: Attributes, attributes: Record<string, AttributeValue | null | undefined>, valueLimit: number): void {
  for (const name in attributes) {
    const value = attributes[name];
    if (value === null || value === undefined) continue;
    into[name] = typeof value === 'string' && value.length > valueLimit ? value.slice(0, valueLimit) : value;
  }
}

/** What `inSpan`'s work gets of its span. */
class DirectWorkSpan implements WorkSpan {
  constructor(
    private readonly span: DirectSpan | null,
    private readonly context: SpanContext,
    private readonly valueLimit: number,
  ) {}

  get traceparent(): string {
    return traceparentOf(this.context);
  }

  set(attributes: Record<string, AttributeValue | null | undefined>): void {
    if (this.span) setAttributes(this.span.attributes, attributes, this.valueLimit);
  }
}

/** How a span starts: its parent, links and attributes read already. */
export interface DirectStart {
  kind: SpanKind;
  parent: SpanContext | undefined;
  links: Link[];
  attributes: Attributes;
}

/**
 * The spans of the processes whose spans each name their parent (the relay's `relay event` and
 * `relay batch`, the webhooks worker's `webhook delivery`), made and ended here and handed to the
 * span processor, rather than through the SDK's tracer: there, each cost several times its
 * encoding (the tracer's span object, its attribute checks, its metrics, the parent-based
 * sampler's context lookups), one or two per delivered event (docs/operations.md#tracing).
 * The same sampler (`OTEL_TRACES_SAMPLER`, as the SDK builds it), the same ids, the same attribute
 * value limit (`OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT`, else `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`;
 * the count limits are never reached: a span here has at most eight attributes), the same
 * processor and exporter as every other span of the process.
 */
export class DirectSpans {
  private readonly sampler: Sampler = buildSamplerFromEnv();
  private readonly ids = new RandomIdGenerator();
  private readonly valueLimit = getNumberFromEnv('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? getNumberFromEnv('OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? Infinity;
  /** The span whose work's synchronous part is running, for log lines' ids. */
  active: SpanContext | null = null;

  constructor(
    private readonly processor: SpanProcessor,
    private readonly resource: Resource,
  ) {}

  /**
   * Runs `work` in a new span, ended (and exported if sampled) when the work settles; a rejection,
   * or a throw before the work returned its promise, marks it an error. No async function of its
   * own and no closures but its two ends: a delivery's span made several times its
   * encoding in garbage, and in the webhooks worker garbage is dear (docs/operations.md#tracing).
   */
  inSpan<T>(name: string, start: DirectStart, work: (span: WorkSpan) => Promise<T>): Promise<T> {
    const { span, context } = this.start(name, start);
    const outer = this.active;
    this.active = context;
    let running: Promise<T>;
    try {
      running = work(new DirectWorkSpan(span, context, this.valueLimit));
    } catch (err) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the work threw, as it threw it
      running = Promise.reject(err);
    } finally {
      this.active = outer;
    }
    if (!span) return running;
    return running.then(
      (value) => {
        this.end(span, span.now());
        return value;
      },
      (err: unknown) => {
        span.status = { code: SpanStatusCode.ERROR, message: (err as Error).message };
        this.end(span, span.now());
        throw err;
      },
    );
  }

  /** A span that marks a moment: it ends as it starts, of no length. */
  mark(name: string, start: DirectStart): void {
    const { span } = this.start(name, start);
    if (span) this.end(span, span.startTime);
  }

  /**
   * The span's context (one trace id, the one the sampler decided on), and the span if the sampler
   * records it; not sampled, its context still goes on, as the SDK's non-recording span's.
   * `attributes` are the caller's to give away (DirectStart's are made for the span).
   */
  private start(name: string, { kind, parent: named, links, attributes }: DirectStart): { span: DirectSpan | null; context: SpanContext } {
    const parent = named ?? this.active ?? undefined;
    const traceId = parent?.traceId ?? this.ids.generateTraceId();
    const parentContext = parent ? new ParentContext(trace.wrapSpanContext(parent)) : ROOT_CONTEXT;
    const decision = this.sampler.shouldSample(parentContext, traceId, name, kind, attributes, links);
    const sampled = decision.decision === SamplingDecision.RECORD_AND_SAMPLED;
    const context: SpanContext = {
      traceId,
      spanId: this.ids.generateSpanId(),
      traceFlags: sampled ? 1 : 0,
      traceState: decision.traceState ?? parent?.traceState,
    };
    if (!sampled) return { span: null, context };
    if (this.valueLimit !== Infinity) setAttributes(attributes, attributes, this.valueLimit);
    if (decision.attributes) Object.assign(attributes, decision.attributes);
    return { span: new DirectSpan(name, kind, context, parent, attributes, links, this.resource), context };
  }

  private end(span: DirectSpan, at: HrTime): void {
    span.endTime = at;
    this.processor.onEnd(span);
  }
}
