/**
 * `Tracing` on the OpenTelemetry SDK (telemetry/otel-sdk.ts): spans started by hand with
 * `@opentelemetry/api`, parents passed explicitly (no context manager, no loader hooks), W3C
 * Trace Context read from incoming headers and MCP `params._meta` and written on outgoing calls.
 * Loaded by start-tracing.ts with a dynamic import, only when tracing is configured.
 */
import { createHmac } from 'node:crypto';
import {
  SpanKind as OtelSpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { startOtelSdk, type OtelSdk } from '../../telemetry/otel-sdk.js';
import type { OtelExportSettings } from '../../telemetry/otel-settings.js';
import { ERROR_TYPE } from '../../telemetry/semconv.js';
import { type SpanAttributes, type SpanKind, type TraceSpan, type Tracing, type TracingHealth } from './trace-span.js';

const KINDS: Record<SpanKind, OtelSpanKind> = { server: OtelSpanKind.SERVER, client: OtelSpanKind.CLIENT, internal: OtelSpanKind.INTERNAL };

export interface OtelTracingOptions {
  /** `TRACE_WALLET_HMAC_SECRET`: wallets are tagged with an HMAC under it; none without. */
  walletSecret?: string;
  /** Spans dropped (queue full or failed export), for /metrics. */
  onDropped?(count: number): void;
}

export function createOtelTracing(settings: OtelExportSettings, options: OtelTracingOptions = {}): Tracing {
  const sdk = startOtelSdk(settings, { onDropped: options.onDropped });
  const owner = new SpanFactory(sdk, settings.captureContent);
  const { walletSecret } = options;
  return {
    enabled: true,
    serviceName: settings.serviceName,
    serverSpan: (name, headers, attributes) => owner.start(name, 'server', attributes, owner.extract(sdk.root, headers)),
    walletTag: (wallet) => (walletSecret ? createHmac('sha256', walletSecret).update(wallet).digest('hex').slice(0, 32) : undefined),
    health: () => {
      const { stats } = sdk;
      const tracing: TracingHealth = {
        enabled: true,
        exporter: sdk.endpointOrigin,
        protocol: settings.protocol,
        exported_spans: stats.exported,
        dropped_spans: stats.dropped,
        ...(stats.lastFailure ? { last_failure: stats.lastFailure } : {}),
      };
      return { fields: { tracing } };
    },
    shutdown: () => sdk.shutdown(),
  };
}

class SpanFactory {
  constructor(
    private readonly sdk: OtelSdk,
    readonly captureContent: boolean,
  ) {}

  start(name: string, kind: SpanKind, attributes: SpanAttributes | undefined, parent: Context): TraceSpan {
    const span = this.sdk.tracer.startSpan(name, { kind: KINDS[kind], attributes: attributes && defined(attributes) }, parent);
    return new OtelSpan(this, span, trace.setSpan(parent, span));
  }

  /** The context a W3C carrier names, or `fallback` when it names none (or a malformed one). */
  extract(fallback: Context, carrier: Record<string, unknown>): Context {
    const extracted = this.sdk.propagator.extract(fallback, carrier, defaultTextMapGetter);
    return trace.getSpanContext(extracted) ? extracted : fallback;
  }

  inject(context: Context): Record<string, string> {
    const carrier: Record<string, string> = {};
    this.sdk.propagator.inject(context, carrier, defaultTextMapSetter);
    return carrier;
  }
}

class OtelSpan implements TraceSpan {
  readonly recording: boolean;

  constructor(
    private readonly factory: SpanFactory,
    private readonly span: Span,
    private readonly context: Context,
  ) {
    this.recording = span.isRecording();
  }

  child(name: string, kind: SpanKind, attributes?: SpanAttributes, remote?: Record<string, unknown>): TraceSpan {
    const parent = remote ? this.factory.extract(this.context, remote) : this.context;
    return this.factory.start(name, kind, attributes, parent);
  }

  set(attributes: SpanAttributes): void {
    if (this.recording) this.span.setAttributes(defined(attributes));
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  event(name: string, attributes?: SpanAttributes): void {
    if (this.recording) this.span.addEvent(name, attributes && defined(attributes));
  }

  fail(errorType: string, message?: string): void {
    this.span.setAttribute(ERROR_TYPE, errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  }

  content(attribute: string, value: () => unknown): void {
    if (!this.recording || !this.factory.captureContent) return;
    const v = value();
    // Cut to OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT by the SDK's span limits.
    this.span.setAttribute(attribute, typeof v === 'string' ? v : JSON.stringify(v));
  }

  headers(): Record<string, string> {
    return this.factory.inject(this.context);
  }

  end(): void {
    this.span.end();
  }
}

function defined(attributes: SpanAttributes): Attributes {
  const out: Attributes = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
