import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Tracer } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { expect } from 'chai';
import { ProtobufBatchProcessor } from '../../src/lib/otlp-export.js';

/** An OTLP/HTTP receiver keeping each request's body. */
async function receiver(): Promise<{ server: Server; url: string; bodies: Buffer[] }> {
  const bodies: Buffer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

/** A provider whose spans go both to the processor under test (built with `env` set) and, kept, to memory. */
function tracing(env: Record<string, string>) {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    const memory = new InMemorySpanExporter();
    const processor = new ProtobufBatchProcessor();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'ringlane-test', 'service.instance.id': 'ïnstance-1' }),
      spanProcessors: [processor, new SimpleSpanProcessor(memory)],
    });
    return { provider, processor, memory };
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const remoteParent = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
  traceState: new TraceState('vendor=a,other=b'),
});

/** Spans with every field the encoding has: each kind, parents local and remote, links, events, statuses, attributes of every type and strings of every sort. */
function makeSpans(tracer: Tracer, other: Tracer): void {
  const sql = `SELECT ${'c.id, c.org_id, '.repeat(200)} FROM calls c WHERE c.id = $1`;
  for (const [i, kind] of [SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER].entries()) {
    const span = tracer.startSpan(
      `span ${i}`,
      {
        kind,
        attributes: {
          'db.query.text': sql,
          ascii: 'call.completed',
          'ascii.127': 'x'.repeat(127),
          'ascii.128': 'y'.repeat(128),
          unicode: 'Zoë — 通話 📞',
          'lone.surrogate': 'a\uD800b',
          nul: 'a\u0000b',
          empty: '',
          int: 42,
          negative: -7,
          large: 2 ** 60,
          min: -(2 ** 63),
          double: 1.5,
          infinite: Number.POSITIVE_INFINITY,
          yes: true,
          no: false,
          strings: ['a', 'ü', ''],
          numbers: [1, 2.5, -3],
          booleans: [true, false],
        },
        links: i % 2 ? [] : [{ context: trace.getSpanContext(remoteParent)!, attributes: { 'link.index': i } }],
      },
      i % 2 ? remoteParent : ROOT_CONTEXT,
    );
    span.addLink({ context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.NONE } });
    span.addEvent('retry', { attempt: i, reason: 'timeout' });
    span.addEvent('bare');
    if (i === 2) span.setStatus({ code: SpanStatusCode.ERROR, message: 'connect ECONNREFUSED — réessayer' });
    if (i === 3) span.setStatus({ code: SpanStatusCode.OK });
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => other.startSpan('child').end());
    span.end();
  }
}

describe('OTLP protobuf encoding of spans (tracing on, http/protobuf)', () => {
  let rx: Awaited<ReturnType<typeof receiver>>;
  beforeEach(async () => (rx = await receiver()));
  afterEach(() => rx.server.close());

  it('sends, for the same spans, exactly the bytes the SDK’s own serializer writes', async () => {
    const { provider, processor, memory } = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url });
    makeSpans(
      provider.getTracer('ringlane'),
      provider.getTracer('@opentelemetry/instrumentation-pg', '0.76.0', { schemaUrl: 'https://opentelemetry.io/schemas/1.27.0' }),
    );
    await processor.forceFlush();
    expect(rx.bodies).to.have.length(1);
    const spans = memory.getFinishedSpans();
    expect(spans).to.have.length(10);
    expect(rx.bodies[0].equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!))).to.equal(true);
    await provider.shutdown();
  });

  it('sends a batch as it fills (OTEL_BSP_MAX_EXPORT_BATCH_SIZE), the rest on a flush, each request the SDK’s bytes for its spans', async () => {
    const { provider, processor, memory } = tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4' });
    makeSpans(provider.getTracer('ringlane'), provider.getTracer('bullmq'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(rx.bodies, 'two full batches sent without a flush').to.have.length(2);
    await processor.forceFlush();
    const spans = memory.getFinishedSpans();
    expect(rx.bodies.map((body) => body.toString('hex'))).to.deep.equal(
      [spans.slice(0, 4), spans.slice(4, 8), spans.slice(8)].map((batch) => Buffer.from(ProtobufTraceSerializer.serializeRequest(batch)!).toString('hex')),
    );
    await provider.shutdown();
  });

  it('a span it cannot encode is dropped, and the work that ended it goes on; the spans around it are sent', async () => {
    const { provider, processor, memory } = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url });
    const tracer = provider.getTracer('ringlane');
    tracer.startSpan('before').end();
    const broken = tracer.startSpan('broken');
    // A link whose trace id is no string: the SDK keeps what it is given.
    broken.addLink({ context: { traceId: 42 as unknown as string, spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED } });
    expect(() => broken.end()).to.not.throw();
    tracer.startSpan('after').end();
    await processor.forceFlush();
    const sent = memory.getFinishedSpans().filter((s) => s.name !== 'broken');
    expect(rx.bodies).to.have.length(1);
    expect(rx.bodies[0].equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(sent)!))).to.equal(true);
    await provider.shutdown();
  });

  it('keeps at most OTEL_BSP_MAX_QUEUE_SIZE spans waiting, dropping the rest', async () => {
    const { provider, processor } = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_BSP_MAX_QUEUE_SIZE: '3' });
    makeSpans(provider.getTracer('ringlane'), provider.getTracer('bullmq'));
    await processor.forceFlush();
    const spanCount = rx.bodies.reduce((n, body) => n + (body.toString('latin1').match(/span \d|child/g)?.length ?? 0), 0);
    expect(spanCount).to.equal(3);
    await provider.shutdown();
  });
});
