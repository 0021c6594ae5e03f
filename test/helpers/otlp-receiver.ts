/**
 * An OTLP/HTTP trace receiver on 127.0.0.1, as a collector would be: `POST /v1/traces` with
 * protobuf (`application/x-protobuf`, decoded here with the field numbers of
 * opentelemetry-proto's trace.proto) or JSON (`application/json`, OTLP/JSON), every span kept
 * in one shape whichever way it came. Tests wait for the spans they need with `waitFor`, which
 * checks again each time a batch arrives (never a sleep). `failWith(500)` makes it refuse.
 *
 * @example
 *   const receiver = await startOtlpReceiver()
 *   env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
 *   const [chat] = await receiver.waitFor((spans) => spans.filter((s) => s.name === 'invoke_agent switchyard'))
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Kind = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
const KINDS: Kind[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

export interface ReceivedSpan {
  /** `service.name` of the resource that sent it. */
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: Kind;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** How it arrived. */
  format: 'protobuf' | 'json';
  /** Start time, ns since the epoch. */
  start: bigint;
}

export interface OtlpReceiver {
  /** The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); spans go to `${url}/v1/traces`. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests by wire format, and how many were answered with an error. */
  requests: { protobuf: number; json: number; refused: number };
  /** Answer every export with this status from now on (200 again to accept). */
  failWith(status: number): void;
  /**
   * Resolves with `pick(spans)` once it is a non-empty array (or a defined non-array value),
   * checking now and after each export request.
   */
  waitFor<T>(pick: (spans: ReceivedSpan[]) => T | undefined): Promise<T>;
  /** Resolves once `count` more export requests have been answered. */
  nextRequests(count?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests = { protobuf: 0, json: 0, refused: 0 };
  let status = 200;
  const listeners = new Set<() => void>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const type = String(req.headers['content-type'] ?? '');
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (status !== 200) {
      requests.refused++;
      res.writeHead(status, { 'content-type': 'text/plain' }).end('refused by the test');
    } else if (type.startsWith('application/json')) {
      requests.json++;
      spans.push(...fromJson(JSON.parse(body.toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      requests.protobuf++;
      spans.push(...fromProtobuf(body));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    }
    res.once('finish', () => {
      for (const listener of [...listeners]) listener();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    failWith: (next) => void (status = next),
    waitFor: (pick) =>
      new Promise((resolve) => {
        const check = () => {
          const picked = pick(spans);
          if (picked === undefined || (Array.isArray(picked) && picked.length === 0)) return;
          listeners.delete(check);
          resolve(picked);
        };
        listeners.add(check);
        check();
      }),
    nextRequests: (count = 1) =>
      new Promise((resolve) => {
        let left = count;
        const seen = () => {
          if (--left > 0) return;
          listeners.delete(seen);
          resolve();
        };
        listeners.add(seen);
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * One trace as a tree, children in the order they started: each line the span's name, its kind
 * and, where it changes, the service that sent it. docs/tracing.md's picture is this drawing.
 *
 * @example
 *   traceTree(spans)  // 'POST /v1/chat/completions  [server, switchyard]\n└─ invoke_agent switchyard  [internal]\n…'
 */
export function traceTree(spans: ReceivedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const childrenOf = (parent: ReceivedSpan | undefined) =>
    spans
      .filter((s) => (parent ? s.parentSpanId === parent.spanId : !ids.has(s.parentSpanId)))
      .sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
  const lines: string[] = [];
  const draw = (span: ReceivedSpan, parent: ReceivedSpan | undefined, lead: string, own: string) => {
    const service = parent?.service === span.service ? '' : `, ${span.service}`;
    lines.push(`${own}${span.name}  [${span.kind}${service}]`);
    const children = childrenOf(span);
    children.forEach((child, i) => {
      const last = i === children.length - 1;
      draw(child, span, `${lead}${last ? '   ' : '│  '}`, `${lead}${last ? '└─ ' : '├─ '}`);
    });
  };
  for (const root of childrenOf(undefined)) draw(root, undefined, '', '');
  return lines.join('\n');
}

// ── OTLP/JSON ────────────────────────────────────────────────────────────────────────────────

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
type JsonKeyValue = { key: string; value: JsonAnyValue };

function fromJson(request: {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonKeyValue[];
        startTimeUnixNano?: string | number;
        events?: Array<{ name: string; attributes?: JsonKeyValue[] }>;
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = String(jsonAttributes(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        out.push({
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: KINDS[span.kind ?? 0],
          attributes: jsonAttributes(span.attributes),
          events: (span.events ?? []).map((e) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
          format: 'json',
          start: BigInt(span.startTimeUnixNano ?? 0),
        });
      }
    }
  }
  return out;
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, jsonValue(value)]));
}

function jsonValue(value: JsonAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

// ── OTLP protobuf ────────────────────────────────────────────────────────────────────────────

/** One field of a protobuf message: its number and its value (a number, or the bytes of a length-delimited field). */
type Field = { no: number; varint?: number; bytes?: Buffer; fixed?: Buffer };

/** The fields of one message, in order (wire types 0, 1, 2 and 5: all that trace.proto uses). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = buf[pos++];
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return result;
      scale *= 128;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const no = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        out.push({ no, varint: varint() });
        break;
      case 1:
        out.push({ no, fixed: buf.subarray(pos, pos + 8) });
        pos += 8;
        break;
      case 2: {
        const length = varint();
        out.push({ no, bytes: buf.subarray(pos, pos + length) });
        pos += length;
        break;
      }
      case 5:
        out.push({ no, fixed: buf.subarray(pos, pos + 4) });
        pos += 4;
        break;
      default:
        throw new Error(`unexpected protobuf wire type ${tag & 7}`);
    }
  }
  return out;
}

const each = (list: Field[], no: number) => list.filter((f) => f.no === no && f.bytes).map((f) => f.bytes!);
const one = (list: Field[], no: number) => list.find((f) => f.no === no);
const text = (list: Field[], no: number) => one(list, no)?.bytes?.toString('utf8') ?? '';
const hex = (list: Field[], no: number) => one(list, no)?.bytes?.toString('hex') ?? '';

// ExportTraceServiceRequest { 1 resource_spans } ResourceSpans { 1 resource, 2 scope_spans }
// Resource { 1 attributes } ScopeSpans { 2 spans } Span { 1 trace_id, 2 span_id, 4 parent_span_id,
// 5 name, 6 kind, 7 start_time_unix_nano, 9 attributes, 11 events, 15 status } Event { 2 name, 3 attributes }
// Status { 2 message, 3 code } KeyValue { 1 key, 2 value } AnyValue { 1 string, 2 bool, 3 int,
// 4 double, 5 array { 1 values } }
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of each(fields(body), 1)) {
    const rs = fields(resourceSpans);
    const resource = each(rs, 1)[0];
    const service = String(protoAttributes(resource ? fields(resource) : [], 1)['service.name'] ?? '');
    for (const scopeSpans of each(rs, 2)) {
      for (const spanBytes of each(fields(scopeSpans), 2)) {
        const span = fields(spanBytes);
        const status = each(span, 15)[0];
        const statusFields = status ? fields(status) : [];
        out.push({
          service,
          traceId: hex(span, 1),
          spanId: hex(span, 2),
          parentSpanId: hex(span, 4),
          name: text(span, 5),
          kind: KINDS[one(span, 6)?.varint ?? 0],
          attributes: protoAttributes(span, 9),
          events: each(span, 11).map((event) => {
            const e = fields(event);
            return { name: text(e, 2), attributes: protoAttributes(e, 3) };
          }),
          status: { code: one(statusFields, 3)?.varint ?? 0, message: text(statusFields, 2) },
          format: 'protobuf',
          start: one(span, 7)?.fixed?.readBigUInt64LE(0) ?? 0n,
        });
      }
    }
  }
  return out;
}

function protoAttributes(list: Field[], no: number): Record<string, unknown> {
  return Object.fromEntries(
    each(list, no).map((kv) => {
      const f = fields(kv);
      const value = each(f, 2)[0];
      return [text(f, 1), value ? protoValue(fields(value)) : undefined];
    }),
  );
}

function protoValue(f: Field[]): unknown {
  const [first] = f;
  if (!first) return '';
  switch (first.no) {
    case 1:
      return first.bytes!.toString('utf8');
    case 2:
      return first.varint === 1;
    case 3:
      return first.varint;
    case 4:
      return first.fixed!.readDoubleLE(0);
    case 5:
      return each(fields(first.bytes!), 1).map((v) => protoValue(fields(v)));
    default:
      return undefined;
  }
}
