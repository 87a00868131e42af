// Issue 22: with an OTLP endpoint set, every process exports its spans, and one call is one trace
// from `POST /v1/calls` through the engine's jobs and the relay to each delivery attempt, whose
// receiver gets the delivery span as `traceparent`. Real processes, a real OTLP/HTTP (JSON)
// receiver started here, a real webhook receiver.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { asCaller, expectStatus } from '../helpers/api.js';
import { freePort, startService, stopProcess, waitUntil, type Service } from '../helpers/processes.js';
import { receiversOfBlock } from '../helpers/receiver.js';
import { voiceOrg } from '../helpers/voice.js';

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: OtlpValue) => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attributesOf = (list: Array<{ key: string; value: OtlpValue }> = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP trace receiver keeping every span it is sent in JSON, with its `service.name`, and each protobuf request as is. */
async function startCollector() {
  const spans: ExportedSpan[] = [];
  const protobufRequests: Buffer[] = [];
  const contentTypes = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.headers['content-type'] === 'application/x-protobuf') {
        protobufRequests.push(Buffer.concat(chunks));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              attributes: attributesOf(s.attributes),
              links: (s.links ?? []).map((l: { traceId: string; spanId: string }) => ({ traceId: l.traceId, spanId: l.spanId })),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    protobufRequests,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SECRET = 'whsec_' + Buffer.from('a tracing test secret, 32 bytes').toString('base64');
/** A traceparent a customer's custom header tries to send: the delivery's own replaces it. */
const CUSTOMER_TRACEPARENT = '00-11111111111111111111111111111111-2222222222222222-01';

describe('tracing (issue 22): one call, one trace, from POST /v1/calls to each delivery (real processes, OTLP/HTTP)', function () {
  this.timeout(90_000);
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let port: number;
  const services: Service[] = [];
  const receiver = receiversOfBlock();

  before(async () => {
    collector = await startCollector();
    port = await freePort();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '200', PORT: String(port) };
    services.push(...(await Promise.all((['web', 'calls', 'relay', 'webhooks'] as const).map((kind) => startService(kind, env)))));
  });
  after(async () => {
    await Promise.all(services.map((s) => stopProcess(s.child)));
    await collector?.close();
  });

  it('every process kind exports spans; the call’s trace links POST /v1/calls to each delivery attempt of its four events; each receiver got its delivery span as traceparent; no attribute holds a secret, a key or a query value', async () => {
    const hooks = await receiver();
    const org = await voiceOrg();
    const caller = asCaller(org.key, {}, `http://127.0.0.1:${port}`);
    const endpoint = expectStatus(
      await caller.post('/v1/webhook-endpoints', {
        name: 'Hooks',
        url: hooks.url,
        secret: SECRET,
        outcomes: [],
        custom_headers: { traceparent: CUSTOMER_TRACEPARENT },
      }),
      201,
    ).body;
    const call = expectStatus(await caller.post('/v1/calls', { agent_id: org.agentId, contact_id: org.contactIds[0], simulate: { answer: true } }), 201).body;
    const QUERY_VALUE = 'query-value-never-in-a-span';
    expectStatus(await caller.get(`/v1/calls?status=completed&campaign_id=${QUERY_VALUE}`), 200);
    // A caller's own trace is continued: its traceparent names the request span's parent.
    const callerTrace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const tracedCaller = asCaller(org.key, { traceparent: `00-${callerTrace.traceId}-${callerTrace.spanId}-01` }, `http://127.0.0.1:${port}`);
    expectStatus(await tracedCaller.get(`/v1/calls/${call.id}`), 200);
    // A traceparent that is not one (5 KB of junk, the all-zero ids) is ignored: the request is answered and starts a trace of its own.
    for (const junk of [`00-${'z'.repeat(5000)}`, '00-00000000000000000000000000000000-0000000000000000-01'])
      expectStatus(await asCaller(org.key, { traceparent: junk }, `http://127.0.0.1:${port}`).get('/v1/agents?limit=7'), 200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
    await hooks.until((all) => all.filter((r) => r.body.call_id === call.id).length === 4);

    const deliverySpans = () => collector.spans.filter((s) => s.name === 'webhook delivery' && s.attributes['ringlane.delivery_status'] !== undefined);
    // Each process exports on its own schedule: the spans come in any order.
    const traceOf = (traceId: string) => collector.spans.filter((s) => s.traceId === traceId);
    const jobRun = (s: ExportedSpan) => s.service === 'ringlane-calls' && s.name === 'process calls';
    // Only this test's webhooks worker, which traces, delivers: each delivery carries a traceparent.
    expect(
      hooks.received.map((r) => typeof r.headers.traceparent),
      'a traceparent on each delivery',
    ).to.deep.equal(hooks.received.map(() => 'string'));
    const unmatched = () => hooks.received.filter((r) => !deliverySpans().some((s) => r.headers.traceparent === `00-${s.traceId}-${s.spanId}-01`));
    // The call's trace, as its receiver was told it. Not the first delivery span exported: the
    // calls worker also runs what earlier tests of the run left queued (campaign ticks), whose
    // deliveries are in traces of their own.
    const callTrace = String(hooks.received[0].headers.traceparent).split('-')[1];
    const relayEvents = () => traceOf(callTrace).filter((s) => s.name === 'relay event').length;
    await waitUntil(
      'the spans exported',
      async () =>
        unmatched().length === 0 &&
        traceOf(callTrace).some(jobRun) &&
        relayEvents() === 4 &&
        collector.spans.some((s) => s.name === 'GET /readyz') &&
        collector.spans.filter((s) => s.name === 'GET /v1/agents').length === 2,
      20_000,
      () =>
        `deliveries without their span: ${JSON.stringify(unmatched().map((r) => r.headers.traceparent))}; relay event spans in the trace: ${relayEvents()}; ` +
        `spans: ${collector.spans.map((s) => `${s.service} ${s.name} ${s.traceId}/${s.spanId}<${s.parentSpanId}`).join(', ')}`,
    );
    expect([...collector.contentTypes]).to.deep.equal(['application/json']);

    // The call's trace: the API request that placed it, its engine jobs, the relay, every attempt.
    const request = collector.spans.find((s) => s.service === 'ringlane-web' && s.name === 'POST /v1/calls');
    expect(request, collector.spans.map((s) => `${s.service} ${s.name}`).join('\n')).to.not.equal(undefined);
    const trace = traceOf(request!.traceId);
    const kinds = new Set(trace.map((s) => s.service));
    expect([...kinds].sort()).to.deep.equal(['ringlane-calls', 'ringlane-relay', 'ringlane-web', 'ringlane-webhooks']);
    const relayed = trace.filter((s) => s.name === 'relay event');
    expect(relayed.map((s) => s.attributes['ringlane.event_type']).sort()).to.deep.equal(['call.completed', 'call.in_progress', 'call.queued', 'call.ringing']);
    const batches = collector.spans.filter((s) => s.name === 'relay batch');
    for (const s of relayed) expect(batches.some((b) => s.links.some((l) => l.spanId === b.spanId))).to.equal(true);

    // Each attempt a child of the request's span, named by the receiver's traceparent (the customer's is never sent).
    for (const r of hooks.received) {
      const [, traceId, spanId] = String(r.headers.traceparent).split('-');
      const span = trace.find((s) => s.spanId === spanId);
      expect(span, `the span of ${String(r.headers.traceparent)}`).to.not.equal(undefined);
      expect(traceId).to.equal(request!.traceId);
      expect(span!.parentSpanId).to.equal(request!.spanId);
      expect(span!.attributes).to.include({
        'ringlane.event_type': r.body.event,
        'ringlane.attempt': 1,
        'http.response.status_code': 200,
        'ringlane.outcome': 'accepted',
        'ringlane.delivery_status': 'succeeded',
        'ringlane.endpoint_id': endpoint.id,
      });
    }

    // The request's log line names its span, so a line leads to its trace; a line outside any span names none.
    const web = services.find((s) => s.kind === 'web')!;
    const logLines = () =>
      web.log
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('{'));
    await waitUntil(
      'the request logged',
      async () => logLines().some((l) => l.includes('"path":"/v1/calls"') && l.includes('"method":"POST"')),
      5_000,
      () => web.log.join(''),
    );
    const logged = logLines().flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return []; // the first line kept may be the end of one
      }
    });
    expect(logged.find((l) => l.path === '/v1/calls' && l.method === 'POST')).to.include({ trace_id: request!.traceId, span_id: request!.spanId });
    expect(logged.find((l) => l.msg === 'Ringlane API listening')).to.not.have.property('trace_id');

    // The relay's and the webhooks worker's statements and commands serve batches of many calls: no span.
    const database = (s: ExportedSpan) => s.attributes['db.system'] ?? s.attributes['db.system.name'];
    const batched = collector.spans.filter((s) => (s.service === 'ringlane-relay' || s.service === 'ringlane-webhooks') && database(s) !== undefined);
    expect(batched.map((s) => `${s.service} ${s.name}`)).to.deep.equal([]);
    expect(trace.some((s) => s.service === 'ringlane-web' && database(s) === 'redis')).to.equal(true);

    // Spans whose SQL ran: statements with placeholders, never a parameter's value.
    expect(trace.some((s) => JSON.stringify([s.attributes['db.statement'], s.attributes['db.query.text']]).includes('INSERT INTO calls'))).to.equal(true);
    const everything = JSON.stringify(collector.spans);
    for (const secret of [org.key, SECRET, QUERY_VALUE, 'completed&', CUSTOMER_TRACEPARENT]) expect(everything).to.not.include(secret);
    expect(everything).to.not.match(/authorization/i);
    const requested = collector.spans.find((s) => s.name.startsWith('GET') && JSON.stringify(s.attributes).includes('campaign_id'));
    expect(requested, 'the GET request’s span').to.not.equal(undefined);
    expect(JSON.stringify(requested!.attributes)).to.include('status=&campaign_id=');

    // Requests are named by their route's template, the API's and Express's alike.
    const continued = collector.spans.find((s) => s.traceId === callerTrace.traceId && s.service === 'ringlane-web' && s.parentSpanId === callerTrace.spanId);
    expect(continued, 'the span of the request that sent a traceparent').to.include({ name: 'GET /v1/calls/:id' });
    expect(continued!.attributes).to.include({ 'http.route': '/v1/calls/:id', 'http.response.status_code': 200 });
    expect(collector.spans.filter((s) => s.name === 'GET /readyz').map((s) => s.service)).to.deep.equal(['ringlane-web']);
    const junkRequests = collector.spans.filter((s) => s.name === 'GET /v1/agents' && s.attributes['url.query'] === 'limit=');
    expect(junkRequests.map((s) => [s.parentSpanId, s.traceId === '0'.repeat(32)])).to.deep.equal([
      ['', false],
      ['', false],
    ]);
  });

  it('without OTEL_EXPORTER_OTLP_PROTOCOL, spans go as protobuf, the standard’s default', async () => {
    const own = await startCollector();
    const webPort = await freePort();
    const web = await startService('web', { OTEL_EXPORTER_OTLP_ENDPOINT: own.url, OTEL_BSP_SCHEDULE_DELAY: '200', PORT: String(webPort) });
    try {
      const org = await voiceOrg();
      expectStatus(await asCaller(org.key, {}, `http://127.0.0.1:${webPort}`).get('/v1/calls'), 200);
      await waitUntil(
        'a protobuf export',
        async () => own.protobufRequests.some((body) => body.includes('ringlane-web') && body.includes('GET /v1/calls')),
        10_000,
        () => [...own.contentTypes],
      );
      expect([...own.contentTypes]).to.deep.equal(['application/x-protobuf']);
    } finally {
      await stopProcess(web.child);
      await own.close();
    }
  });
});
