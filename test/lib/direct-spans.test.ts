// The relay's and the webhooks worker's spans, made without the SDK's tracer (src/lib/direct-spans.ts):
// what reaches the exporter must be what the SDK's tracer would have made of the same span, and the
// standard variables must rule them as they rule the SDK's.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SamplingDecision,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import { expect } from 'chai';
import { DirectSpans, traceparentOf, type DirectStart } from '../../src/lib/direct-spans.js';

const resource = resourceFromAttributes({ 'service.name': 'ringlane-test' });

/** DirectSpans built with `env` set (they read it as they are made), exporting to memory. */
function directSpans(env: Record<string, string> = {}) {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    const memory = new InMemorySpanExporter();
    return { spans: new DirectSpans(new SimpleSpanProcessor(memory), resource), memory };
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const parent = (flags: number): SpanContext => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });
const linked: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true };
const start = (flags = TraceFlags.SAMPLED): DirectStart => ({
  kind: SpanKind.CLIENT,
  parent: parent(flags),
  links: [{ context: linked }],
  attributes: { 'ringlane.delivery_id': 'wdl_1', 'ringlane.attempt': 1 },
});

/** The fields an exporter reads, ids and times aside. */
const shape = (span: ReadableSpan) => ({
  name: span.name,
  kind: span.kind,
  traceId: span.spanContext().traceId,
  traceFlags: span.spanContext().traceFlags,
  parent: span.parentSpanContext,
  links: span.links,
  attributes: span.attributes,
  status: span.status,
  events: span.events,
  dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
  scope: span.instrumentationScope.name,
  service: span.resource.attributes['service.name'],
  ended: span.ended,
});

const hrMs = ([s, ns]: [number, number]) => s * 1000 + ns / 1e6;

describe('direct spans (the relay’s and the webhooks worker’s own spans)', () => {
  it('hands the exporter what the SDK’s tracer makes of the same span: parent, kind, links, attributes, scope, resource, status, times', async () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const { kind, links, attributes } = start();
    const sdk = provider.getTracer('ringlane').startSpan('webhook delivery', { kind, links, attributes }, trace.setSpanContext(ROOT_CONTEXT, parent(1)));
    sdk.setAttributes({ 'http.response.status_code': 200 });
    sdk.end();
    const direct = directSpans();
    const before = Date.now();
    const answer = await direct.spans.inSpan('webhook delivery', start(), async (span) => {
      span.set({ 'http.response.status_code': 200, 'ringlane.event_type': null });
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 'answered';
    });
    const after = Date.now();
    expect(answer).to.equal('answered');
    const [made] = direct.memory.getFinishedSpans();
    expect(shape(made)).to.deep.equal(shape(memory.getFinishedSpans()[0]));
    expect(made.spanContext().spanId).to.match(/^[0-9a-f]{16}$/);
    expect(made.spanContext().spanId).to.not.equal(parent(1).spanId);
    expect(hrMs(made.startTime)).to.be.within(before - 1, hrMs(made.endTime));
    expect(hrMs(made.endTime)).to.be.at.most(after + 1);
    expect(hrMs(made.duration)).to.be.within(15, after - before + 1);
  });

  it('a mark starts and ends at once; a span without a parent named is a child of the one whose work is running, else a new trace', async () => {
    const { spans, memory } = directSpans();
    spans.mark('relay event', start());
    await spans.inSpan('relay batch', { kind: SpanKind.INTERNAL, parent: undefined, links: [], attributes: {} }, async () => {
      spans.mark('inner', { kind: SpanKind.INTERNAL, parent: undefined, links: [], attributes: {} });
    });
    const [mark, inner, batch] = memory.getFinishedSpans();
    expect(mark.endTime).to.deep.equal(mark.startTime);
    expect(mark.spanContext().traceId).to.equal(parent(1).traceId);
    expect(batch.parentSpanContext).to.equal(undefined);
    expect(batch.spanContext().traceId)
      .to.match(/^[0-9a-f]{32}$/)
      .and.not.equal(parent(1).traceId);
    expect(inner.spanContext().traceId).to.equal(batch.spanContext().traceId);
    expect(inner.parentSpanContext?.spanId).to.equal(batch.spanContext().spanId);
  });

  it('says which span is running during its work’s synchronous part only, for log lines', async () => {
    const { spans } = directSpans();
    let during: SpanContext | null = null;
    let traceparent = '';
    const running = spans.inSpan('webhook delivery', start(), async (span) => {
      during = spans.active;
      traceparent = span.traceparent;
      await new Promise((resolve) => setTimeout(resolve, 1));
    });
    expect(spans.active).to.equal(null);
    await running;
    expect(traceparentOf(during!)).to.equal(traceparent);
    expect(traceparent).to.match(new RegExp(`^00-${parent(1).traceId}-[0-9a-f]{16}-01$`));
  });

  it('a rejected or throwing work ends its span as an error with the message, and the rejection goes on', async () => {
    const { spans, memory } = directSpans();
    const failed = spans.inSpan('webhook delivery', start(), async () => {
      throw new Error('receiver gone');
    });
    await failed.then(
      () => expect.fail('resolved'),
      (err: Error) => expect(err.message).to.equal('receiver gone'),
    );
    // A work that throws before any await: the same.
    const thrown = spans.inSpan('webhook delivery', start(), () => {
      throw new Error('no request');
    });
    await thrown.then(
      () => expect.fail('resolved'),
      (err: Error) => expect(err.message).to.equal('no request'),
    );
    expect(memory.getFinishedSpans().map((s) => s.status)).to.deep.equal([
      { code: SpanStatusCode.ERROR, message: 'receiver gone' },
      { code: SpanStatusCode.ERROR, message: 'no request' },
    ]);
    expect(spans.active).to.equal(null);
  });

  it('follows OTEL_TRACES_SAMPLER as the SDK does: an unsampled parent is followed by default; always_off records nothing, always_on everything; the context goes on either way', async () => {
    const unsampled = directSpans();
    let traceparent = '';
    await unsampled.spans.inSpan('webhook delivery', start(TraceFlags.NONE), async (span) => {
      traceparent = span.traceparent;
    });
    expect(unsampled.memory.getFinishedSpans()).to.deep.equal([]);
    // As the SDK's non-recording span: the parent's trace, a span id of its own, not sampled.
    expect(traceparent)
      .to.match(new RegExp(`^00-${parent(0).traceId}-[0-9a-f]{16}-00$`))
      .and.not.include(parent(0).spanId);

    const off = directSpans({ OTEL_TRACES_SAMPLER: 'always_off' });
    off.spans.mark('relay event', start());
    expect(off.memory.getFinishedSpans()).to.deep.equal([]);

    const on = directSpans({ OTEL_TRACES_SAMPLER: 'always_on' });
    on.spans.mark('relay event', start(TraceFlags.NONE));
    expect(on.memory.getFinishedSpans().map((s) => s.spanContext().traceFlags)).to.deep.equal([TraceFlags.SAMPLED]);
  });

  it('a root span the sampler refuses goes on in the trace the sampler decided on (traceidratio: the same id, the same decision downstream)', async () => {
    const { spans, memory } = directSpans({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    const root = { kind: SpanKind.INTERNAL, parent: undefined, links: [], attributes: {} };
    const traceparents: string[] = [];
    for (let i = 0; i < 40; i++) await spans.inSpan('relay batch', { ...root, attributes: {} }, async (span) => void traceparents.push(span.traceparent));
    const downstream = new TraceIdRatioBasedSampler(0.5);
    for (const traceparent of traceparents) {
      const [, traceId, , flags] = traceparent.split('-');
      const decision = downstream.shouldSample(ROOT_CONTEXT, traceId).decision;
      expect(flags, traceparent).to.equal(decision === SamplingDecision.RECORD_AND_SAMPLED ? '01' : '00');
    }
    const exported = memory.getFinishedSpans().map((s) => s.spanContext().traceId);
    expect(exported.length).to.be.within(1, 39);
    expect(exported).to.deep.equal(traceparents.filter((t) => t.endsWith('-01')).map((t) => t.split('-')[1]));
  });

  it('cuts string attributes to OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', () => {
    const general = directSpans({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '5' });
    general.spans.mark('relay event', start());
    expect(general.memory.getFinishedSpans()[0].attributes).to.deep.equal({ 'ringlane.delivery_id': 'wdl_1', 'ringlane.attempt': 1 });
    const span = directSpans({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '5', OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: '3' });
    span.spans.mark('relay event', start());
    expect(span.memory.getFinishedSpans()[0].attributes).to.deep.equal({ 'ringlane.delivery_id': 'wdl', 'ringlane.attempt': 1 });
  });
});
