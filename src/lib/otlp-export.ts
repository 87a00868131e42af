import { diag, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, getNumberFromEnv, globalErrorHandler } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { appendSpan, encodeExportRequest, ProtobufWriter, type EncodedScope } from './otlp-protobuf.js';

/** Spans encoded and sealed for one export request. */
interface Batch {
  resource: ReadableSpan['resource'];
  scopes: EncodedScope[];
  count: number;
}

/** The SDK's BatchSpanProcessor's settings, from the same standard variables (read as the SDK reads them) and with the same defaults. */
function bufferLimits(): { maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number; exportTimeoutMillis: number } {
  const maxQueueSize = getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048;
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512, maxQueueSize),
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT') ?? 30000,
  };
}

/** OTLP/HTTP with protobuf, configured by the standard variables as the SDK's exporter is (endpoint, headers, compression, timeout); what it sends is encoded already. */
function protobufExporter(): OTLPExporterBase<Batch> {
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      {
        serializeRequest: (batch: Batch) => encodeExportRequest(batch.resource, batch.scopes),
        deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
      },
      'otlp_http_span_exporter',
      { name: 'span', countItems: (batch: Batch) => batch.count },
      undefined,
    ),
  );
}

/**
 * The SDK's BatchSpanProcessor and OTLP/HTTP protobuf exporter in one, doing the same (the same
 * `OTEL_BSP_*` and `OTEL_EXPORTER_OTLP_*` variables, a batch sent when it is full or its delay has
 * passed, sampled spans only, spans dropped beyond the queue's size, one export at a time), except
 * that each span is encoded as it ends (src/lib/otlp-protobuf.ts says why) and dropped at once.
 * Measured in docs/operations.md#tracing.
 */
export class ProtobufBatchProcessor implements SpanProcessor {
  private readonly limits = bufferLimits();
  private readonly exporter = protobufExporter();
  private writers = new Map<ReadableSpan['instrumentationScope'], ProtobufWriter>();
  private resource: ReadableSpan['resource'] | null = null;
  /** Spans encoded in `writers`. */
  private count = 0;
  private readonly sealed: Batch[] = [];
  /** Spans sealed and not yet sent. */
  private queued = 0;
  private dropped = 0;
  private sending: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.count + this.queued >= this.limits.maxQueueSize) {
      if (this.dropped++ === 0) diag.debug('maxQueueSize reached, dropping spans');
      return;
    }
    if (this.dropped > 0) {
      diag.warn(`Dropped ${this.dropped} spans because maxQueueSize reached`);
      this.dropped = 0;
    }
    this.resource ??= span.resource;
    let writer = this.writers.get(span.instrumentationScope);
    if (!writer) this.writers.set(span.instrumentationScope, (writer = new ProtobufWriter()));
    // Runs inside the work's own `span.end()`: whatever goes wrong here, the span is lost, not the work.
    const start = writer.pos;
    try {
      appendSpan(writer, span);
    } catch (err) {
      writer.pos = start;
      globalErrorHandler(err as Error);
      return;
    }
    if (++this.count >= this.limits.maxExportBatchSize) this.seal();
    else this.timer ??= setTimeout(() => this.seal(), this.limits.scheduledDelayMillis).unref();
  }

  /** Closes the batch being encoded and has it sent after those before it. */
  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0 || !this.resource) return;
    const scopes = [...this.writers].map(([scope, writer]) => ({ scope, spans: writer.finish() }));
    this.sealed.push({ resource: this.resource, scopes, count: this.count });
    this.queued += this.count;
    this.writers = new Map();
    this.count = 0;
    this.sending ??= this.sendSealed();
  }

  private async sendSealed(): Promise<void> {
    for (let batch = this.sealed.shift(); batch; batch = this.sealed.shift()) {
      try {
        await this.send(batch);
      } catch (err) {
        globalErrorHandler(err as Error);
      } finally {
        this.queued -= batch.count;
      }
    }
    this.sending = null;
  }

  private send(batch: Batch): Promise<void> {
    return new Promise((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error('Timeout')), this.limits.exportTimeoutMillis);
      this.exporter.export(batch, (result) => {
        clearTimeout(timeout);
        if (result.code === ExportResultCode.SUCCESS) resolve();
        else reject(result.error ?? new Error('span export failed'));
      });
    });
  }

  async forceFlush(): Promise<void> {
    this.seal();
    while (this.sending) await this.sending;
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    await this.forceFlush();
    this.stopped = true;
    await this.exporter.shutdown();
  }
}
