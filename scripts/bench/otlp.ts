// npm run bench:otlp — what encoding spans for export costs, per span: the SDK's protobuf
// serializer (the baseline, measured in the same run), its JSON one, and ours
// (src/lib/otlp-protobuf.ts), on the spans of one answered call as the service makes them. Ours
// runs here on spans kept until the end, as the SDK's would be; in the service it encodes each
// span as it ends, which a CPU profile shows and this cannot (docs/operations.md#tracing).
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Tracer } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { appendSpan, encodeExportRequest, ProtobufWriter } from '../../src/lib/otlp-protobuf.js';
import { median } from './harness.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const BATCH = 512;
const ROUNDS = 7;

/** SQL of the lengths the service's statements have: placing a call's is about 1.8 KB. */
const statement = (length: number) => `WITH ctx AS (SELECT o.id AS org_id, p.id AS payer_id ${'AND c.status NOT IN ($1, $2) '.repeat(length / 28)})`;
const SQL = [statement(1800), statement(600), statement(400), statement(300)];

/** One answered call's spans: its request, four statements, four Redis commands, a job, four relay events and four delivery attempts. */
function callSpans(tracer: Tracer, i: number): void {
  const request = tracer.startSpan('POST /v1/calls', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'POST', 'url.path': '/v1/calls', 'url.scheme': 'http' },
  });
  const inRequest = trace.setSpan(ROOT_CONTEXT, request);
  for (const text of SQL) {
    const attributes = {
      'db.system.name': 'postgresql',
      'db.namespace': 'ringlane',
      'server.port': 5432,
      'server.address': '127.0.0.1',
      'db.operation.name': 'WITH',
      'db.query.text': text,
    };
    tracer.startSpan('pg.query:WITH ringlane', { kind: SpanKind.CLIENT, attributes }, inRequest).end();
  }
  for (const command of ['zadd', 'set', 'evalsha', 'zrem']) {
    tracer
      .startSpan(
        command,
        { kind: SpanKind.CLIENT, attributes: { 'db.system': 'redis', 'db.statement': command, 'net.peer.name': '127.0.0.1', 'net.peer.port': 6379 } },
        inRequest,
      )
      .end();
  }
  tracer
    .startSpan(
      'process calls',
      { kind: SpanKind.CONSUMER, attributes: { 'messaging.system': 'bullmq', 'bullmq.job.name': 'report', 'bullmq.job.attempts': 1 } },
      inRequest,
    )
    .end();
  request.setAttribute('http.response.status_code', 201);
  request.end();
  const batch = { context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: TraceFlags.SAMPLED, isRemote: true } };
  for (const event of ['call.queued', 'call.ringing', 'call.answered', 'call.completed']) {
    tracer.startSpan('relay event', { links: [batch], attributes: { 'ringlane.event_type': event, 'ringlane.call_id': `call_${i}` } }, inRequest).end();
    const attempt = tracer.startSpan(
      'webhook delivery',
      { kind: SpanKind.CLIENT, attributes: { 'ringlane.endpoint_id': 'ep_01JD7Z6Q3W', 'ringlane.event_type': event, 'ringlane.attempt': 1 } },
      inRequest,
    );
    attempt.setAttributes({ 'http.response.status_code': 200, 'ringlane.duration_ms': 3, 'ringlane.outcome': 'delivered' });
    attempt.end();
  }
}

function ours(spans: ReadableSpan[]): number {
  const writer = new ProtobufWriter();
  for (const span of spans) appendSpan(writer, span);
  return encodeExportRequest(spans[0].resource, [{ scope: spans[0].instrumentationScope, spans: writer.finish() }]).length;
}

const ENCODERS: Array<[string, (spans: ReadableSpan[]) => number]> = [
  ['SDK protobuf (baseline)', (spans) => ProtobufTraceSerializer.serializeRequest(spans)!.length],
  ['SDK JSON', (spans) => JsonTraceSerializer.serializeRequest(spans)!.length],
  ['ours, protobuf', ours],
];

function main(): void {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'ringlane-bench' }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  const tracer = provider.getTracer('ringlane');
  for (let i = 0; i < CALLS; i++) callSpans(tracer, i);
  const spans = memory.getFinishedSpans();
  const batches: ReadableSpan[][] = [];
  for (let i = 0; i < spans.length; i += BATCH) batches.push(spans.slice(i, i + BATCH));
  const timings = new Map(ENCODERS.map(([name]) => [name, [] as number[]]));
  const sizes = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, encode] of ENCODERS) {
      const started = process.hrtime.bigint();
      let bytes = 0;
      for (const batch of batches) bytes += encode(batch);
      timings.get(name)!.push(Number(process.hrtime.bigint() - started) / spans.length);
      sizes.set(name, bytes / spans.length);
    }
  }
  console.log(
    `bench:otlp — ${spans.length.toLocaleString('en-US')} spans (${CALLS.toLocaleString('en-US')} calls' worth), batches of ${BATCH}; median of ${ROUNDS} rounds`,
  );
  const baseline = median(timings.get(ENCODERS[0][0])!);
  for (const [name] of ENCODERS) {
    const ns = median(timings.get(name)!);
    console.log(
      `  ${name.padEnd(26)} ${ns.toFixed(0).padStart(6)} ns per span  ×${(ns / baseline).toFixed(2)}  ${sizes.get(name)!.toFixed(0).padStart(5)} bytes per span`,
    );
  }
}

main();
