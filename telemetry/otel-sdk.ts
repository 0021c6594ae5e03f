/**
 * The OpenTelemetry trace SDK, built from `OtelExportSettings`: a tracer provider (not registered
 * globally, so several in one process stay apart), the batch span processor behind a gate that
 * counts what it drops, and the OTLP/HTTP exporter (protobuf by default, JSON on request). Loaded
 * only by a dynamic import once tracing is configured: a process with tracing off never loads it.
 *
 * Nothing here may fail or slow the work being traced: the queue is bounded (a full queue drops
 * the span and counts it), an export runs in the background with its own timeout, and a failed
 * export is counted and remembered (its message cut to the endpoint's origin) for /health.
 *
 * @example
 *   const sdk = startOtelSdk(settings, { onDropped: (n) => dropped.inc(n) })
 *   const span = sdk.tracer.startSpan('work')
 *   await sdk.shutdown()
 */
import { ROOT_CONTEXT, TraceFlags, type Context, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { OtelExportSettings } from './otel-settings.js';

/** What the exporter has done so far, for /health and /metrics. */
export interface ExportStats {
  exported: number;
  /** Spans lost: the queue was full, or their export failed. */
  dropped: number;
  /** The last failed export: when, and why (URLs cut to their origin). */
  lastFailure?: { at: string; message: string };
}

export interface OtelSdk {
  tracer: Tracer;
  /** W3C Trace Context (`traceparent`, `tracestate`): HTTP headers and MCP `params._meta` alike. */
  propagator: W3CTraceContextPropagator;
  root: Context;
  stats: ExportStats;
  /** Where spans go, as an origin (no path, no credentials). */
  endpointOrigin: string;
  /** Export what is queued, then stop: never rejects, and gives up after the export timeout (at most 5 s). */
  shutdown(): Promise<void>;
}

export interface OtelSdkHooks {
  /** Spans dropped (queue full, or a failed export). */
  onDropped?(count: number): void;
}

export function startOtelSdk(settings: OtelExportSettings, hooks: OtelSdkHooks = {}): OtelSdk {
  const stats: ExportStats = { exported: 0, dropped: 0 };
  const endpointOrigin = new URL(settings.tracesUrl).origin;
  const drop = (count: number) => {
    stats.dropped += count;
    hooks.onDropped?.(count);
  };
  const exporterConfig = { url: settings.tracesUrl, headers: settings.headers, timeoutMillis: settings.timeoutMs };
  const exporter = settings.protocol === 'http/json' ? new JsonExporter(exporterConfig) : new ProtobufExporter(exporterConfig);
  const gate = new QueueGate(settings.batch.maxQueueSize, drop);
  const counted = new CountingExporter(exporter, gate, stats, endpointOrigin, drop);
  const batch = new BatchSpanProcessor(counted, {
    scheduledDelayMillis: settings.batch.scheduleDelayMs,
    exportTimeoutMillis: settings.batch.exportTimeoutMs,
    maxQueueSize: settings.batch.maxQueueSize,
    maxExportBatchSize: settings.batch.maxExportBatchSize,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName }),
    sampler: samplerOf(settings),
    spanLimits: { attributeValueLengthLimit: settings.attributeValueLengthLimit },
    spanProcessors: [gate.around(batch)],
  });
  return {
    tracer: provider.getTracer('switchyard'),
    propagator: new W3CTraceContextPropagator(),
    root: ROOT_CONTEXT,
    stats,
    endpointOrigin,
    shutdown: () => boundedShutdown(provider, Math.min(settings.timeoutMs, SHUTDOWN_MS)),
  };
}

/** The most a stopping process waits for its last spans to leave. */
const SHUTDOWN_MS = 5_000;

/** A collector that is down must not hold up (or fail) the process's stop. */
async function boundedShutdown(provider: BasicTracerProvider, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([provider.shutdown().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

function samplerOf(settings: OtelExportSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/**
 * Bounds the batch processor's queue from outside, so each drop is seen and counted (the SDK's
 * own bound only logs): a sampled span is let through while fewer than `max` wait, counting from
 * its end until the exporter takes it.
 */
class QueueGate {
  private waiting = 0;

  constructor(
    private readonly max: number,
    private readonly drop: (count: number) => void,
  ) {}

  /** The exporter took `count` spans off the queue. */
  taken(count: number): void {
    this.waiting = Math.max(0, this.waiting - count);
  }

  around(inner: SpanProcessor): SpanProcessor {
    return {
      onStart: (span: Span, context: Context) => inner.onStart(span, context),
      onEnd: (span: ReadableSpan) => {
        // The batch processor skips unsampled spans itself: they never wait.
        if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
        if (this.waiting >= this.max) return this.drop(1);
        this.waiting++;
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
  }
}

/** The OTLP exporter, counting what it sent and what it lost. */
class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly gate: QueueGate,
    private readonly stats: ExportStats,
    private readonly origin: string,
    private readonly drop: (count: number) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.gate.taken(spans.length);
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.stats.exported += spans.length;
      else {
        this.drop(spans.length);
        this.stats.lastFailure = { at: new Date().toISOString(), message: failureMessage(this.origin, result.error) };
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** `export to http://host:4318 failed: …`, every URL in the reason cut to its origin, at most 200 characters. */
function failureMessage(origin: string, error: Error | undefined): string {
  const reason = (error?.message ?? 'unknown error').replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"')]+/gi, (url) => {
    try {
      return new URL(url).origin;
    } catch {
      return '(a URL)';
    }
  });
  return `export to ${origin} failed: ${reason}`.slice(0, 200);
}
