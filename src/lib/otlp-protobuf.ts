import type { Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node';

type InstrumentationScope = ReadableSpan['instrumentationScope'];
type Resource = ReadableSpan['resource'];

/**
 * OTLP's protobuf encoding of spans (opentelemetry-proto's trace.proto and common.proto), written
 * as each span ends (see src/lib/otlp-export.ts), byte for byte what the SDK's own serializer
 * (`ProtobufTraceSerializer` of @opentelemetry/otlp-transformer) writes for the same spans; a test
 * holds the two equal. Ours because of where and how it runs: the SDK's encodes a batch seconds
 * after its spans ended (by then promoted to the old heap and out of the caches), measures every
 * field in a first pass and writes it in a second, and copies strings a character at a time, a
 * statement's several kilobytes of SQL included. Here a span is encoded once, while it is still
 * young, and long strings are written by Node's native UTF-8 encoder.
 */
export class ProtobufWriter {
  private buf: Buffer;
  pos = 0;

  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private ensure(more: number): void {
    if (this.pos + more <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + more) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  tag(field: number, wireType: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wireType);
  }

  /** An unsigned varint, or a negative integer as its 64-bit two's complement (int64). */
  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    const magnitude = Math.abs(value);
    let low = magnitude >>> 0;
    let high = (magnitude / 0x100000000) >>> 0;
    if (value < 0) {
      low = (~low + 1) >>> 0;
      high = (~high + (low === 0 ? 1 : 0)) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.pos = this.buf.writeUInt32LE(value >>> 0, this.pos);
  }

  double(value: number): void {
    this.ensure(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
  }

  /** An HrTime as fixed64 nanoseconds; seconds split so that no product leaves the exact range of a double. */
  time([seconds, nanos]: HrTime): void {
    this.ensure(8);
    const fromLow = (seconds & 0xffff) * 1e9;
    const fromHigh = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (fromLow >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + nanos;
    const high = Math.floor(fromLow / 0x100000000) + ((fromHigh / 0x10000) >>> 0) + Math.floor(low / 0x100000000);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** A trace or span id given in hex, as `length` bytes. */
  id(hex: string, length: 8 | 16): void {
    this.ensure(length + 1);
    this.buf[this.pos++] = length;
    const written = this.buf.write(hex, this.pos, length, 'hex');
    this.buf.fill(0, this.pos + written, this.pos + length);
    this.pos += length;
  }

  /** Bytes as they are: fields encoded elsewhere. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  bytes(bytes: Uint8Array): void {
    this.varint(bytes.length);
    this.raw(bytes);
  }

  /** UTF-8, lone surrogates as U+FFFD (as TextEncoder writes them). Short ASCII, the common case, in one pass here. */
  string(value: string): void {
    const length = value.length;
    if (length < 0x80) {
      this.ensure(length + 1);
      const buf = this.buf;
      let at = this.pos + 1;
      for (let i = 0; i < length; i++) {
        const code = value.charCodeAt(i);
        if (code > 0x7f) {
          at = -1;
          break;
        }
        buf[at++] = code;
      }
      if (at !== -1) {
        buf[this.pos] = length;
        this.pos = at;
        return;
      }
    }
    const size = Buffer.byteLength(value, 'utf8');
    this.varint(size);
    this.ensure(size);
    this.pos += this.buf.write(value, this.pos, size, 'utf8');
  }

  // A field: its tag, then its value.
  varintField(field: number, value: number): void {
    this.tag(field, 0);
    this.varint(value);
  }

  stringField(field: number, value: string): void {
    this.tag(field, 2);
    this.string(value);
  }

  timeField(field: number, value: HrTime): void {
    this.tag(field, 1);
    this.time(value);
  }

  idField(field: number, hex: string, length: 8 | 16): void {
    this.tag(field, 2);
    this.id(hex, length);
  }

  fixed32Field(field: number, value: number): void {
    this.tag(field, 5);
    this.fixed32(value);
  }

  /** A length-delimited field's tag and a place for its length: write its content, then `close` with what this returns. */
  openField(field: number): number {
    this.tag(field, 2);
    return this.open();
  }

  /** A place for a length (its tag already written); `close` with what this returns. One byte is kept for the length, moved up when it needs more. */
  open(): number {
    this.ensure(1);
    return this.pos++;
  }

  close(at: number): void {
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buf[at] = length;
      return;
    }
    let size = 1;
    for (let v = length >>> 7; v > 0; v >>>= 7) size++;
    this.ensure(size - 1);
    this.buf.copy(this.buf, at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = length;
    for (let i = 0; i < size - 1; i++, v >>>= 7) this.buf[at + i] = (v & 0x7f) | 0x80;
    this.buf[at + size - 1] = v;
  }

  /** What was written; the writer is not used after. */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

const INT64_RANGE = 2 ** 63;

function anyValue(w: ProtobufWriter, value: unknown): void {
  if (typeof value === 'string') w.stringField(1, value);
  else if (typeof value === 'boolean') w.varintField(2, value ? 1 : 0);
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -INT64_RANGE && value < INT64_RANGE) w.varintField(3, value);
    else {
      w.tag(4, 1);
      w.double(value);
    }
  } else if (value instanceof Uint8Array) {
    w.tag(7, 2);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    const list = w.openField(5);
    for (const item of value) {
      const at = w.openField(1);
      anyValue(w, item);
      w.close(at);
    }
    w.close(list);
  } else if (typeof value === 'object' && value !== null) {
    const list = w.openField(6);
    keyValues(w, value as Record<string, unknown>, 1);
    w.close(list);
  }
}

/** Repeated KeyValue in field `field`. */
function keyValues(w: ProtobufWriter, attributes: Attributes | Record<string, unknown>, field: number): void {
  for (const key in attributes) {
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) continue;
    const pair = w.openField(field);
    w.stringField(1, key);
    const value = w.openField(2);
    anyValue(w, attributes[key]);
    w.close(value);
    w.close(pair);
  }
}

/** Span.flags: the W3C trace flags, and whether the parent (or the link's span) is remote, with the bit that says it is known. */
const flags = (traceFlags: number, isRemote: boolean | undefined): number => (traceFlags & 0xff) | 0x100 | (isRemote ? 0x200 : 0);

/** One Span message, without its tag: trace.proto's fields 1–16 in order, as the SDK's serializer writes them. */
function encodeSpan(w: ProtobufWriter, span: ReadableSpan): void {
  const context = span.spanContext();
  w.idField(1, context.traceId, 16);
  w.idField(2, context.spanId, 8);
  const traceState = context.traceState?.serialize();
  if (traceState) w.stringField(3, traceState);
  if (span.parentSpanContext?.spanId) w.idField(4, span.parentSpanContext.spanId, 8);
  w.stringField(5, span.name);
  // SpanKind in the proto counts from UNSPECIFIED = 0; the API's from INTERNAL = 0.
  w.varintField(6, span.kind + 1);
  w.timeField(7, span.startTime);
  w.timeField(8, span.endTime);
  keyValues(w, span.attributes, 9);
  w.varintField(10, span.droppedAttributesCount);
  for (const event of span.events) {
    const at = w.openField(11);
    w.timeField(1, event.time);
    w.stringField(2, event.name);
    if (event.attributes) keyValues(w, event.attributes, 3);
    w.varintField(4, event.droppedAttributesCount ?? 0);
    w.close(at);
  }
  w.varintField(12, span.droppedEventsCount);
  for (const link of span.links) {
    const at = w.openField(13);
    w.idField(1, link.context.traceId, 16);
    w.idField(2, link.context.spanId, 8);
    const linkState = link.context.traceState?.serialize();
    if (linkState) w.stringField(3, linkState);
    if (link.attributes) keyValues(w, link.attributes, 4);
    w.varintField(5, link.droppedAttributesCount ?? 0);
    w.fixed32Field(6, flags(link.context.traceFlags, link.context.isRemote));
    w.close(at);
  }
  w.varintField(14, span.droppedLinksCount);
  const status = w.openField(15);
  if (span.status.message) w.stringField(2, span.status.message);
  w.varintField(3, span.status.code);
  w.close(status);
  w.fixed32Field(16, flags(context.traceFlags, span.parentSpanContext?.isRemote));
}

/** A span as one of its scope's `spans` (ScopeSpans field 2), tag and length included, appended to `w`. */
export function appendSpan(w: ProtobufWriter, span: ReadableSpan): void {
  const at = w.openField(2);
  encodeSpan(w, span);
  w.close(at);
}

/** Spans of one instrumentation scope, each already encoded (with its tag) as it ended. */
export interface EncodedScope {
  scope: InstrumentationScope;
  spans: Buffer;
}

/** An ExportTraceServiceRequest: one ResourceSpans of `resource` holding one ScopeSpans per scope. */
export function encodeExportRequest(resource: Resource, scopes: EncodedScope[]): Buffer {
  let size = 256;
  for (const { spans } of scopes) size += spans.length + 256;
  const w = new ProtobufWriter(size);
  const resourceSpans = w.openField(1);
  const resourceAt = w.openField(1);
  keyValues(w, resource.attributes, 1);
  w.varintField(2, 0);
  w.close(resourceAt);
  for (const { scope, spans } of scopes) {
    const scopeSpans = w.openField(2);
    const scopeAt = w.openField(1);
    w.stringField(1, scope.name);
    if (scope.version) w.stringField(2, scope.version);
    w.close(scopeAt);
    w.raw(spans);
    if (scope.schemaUrl) w.stringField(3, scope.schemaUrl);
    w.close(scopeSpans);
  }
  if (resource.schemaUrl) w.stringField(3, resource.schemaUrl);
  w.close(resourceSpans);
  return w.finish();
}
