/**
 * The gateway's one way to trace: a `TraceSpan` handle passed down explicitly (the request's span
 * to the chat loop, the chat's to each upstream and tool call). With tracing off every handle is
 * `NO_SPAN`, whose methods do nothing and allocate nothing, so the request path pays a few empty
 * calls; no OpenTelemetry module is even loaded (start-tracing.ts loads the SDK only when
 * configured). Only otel-tracing.ts speaks to `@opentelemetry/api`.
 *
 * @example
 *   const call = parent.child('chat qwen3:32b', 'client', { 'gen_ai.operation.name': 'chat' })
 *   try { await send(call.headers()) } catch (err) { call.fail('timeout') } finally { call.end() }
 */

export type SpanKind = 'server' | 'client' | 'internal';

/** Attribute values; `undefined` ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

export interface TraceSpan {
  /** False for `NO_SPAN` (and spans not sampled): skip building what only a span would use. */
  readonly recording: boolean;
  /**
   * A span under this one. With `remote` (W3C `traceparent`/`tracestate`, e.g. an MCP request's
   * `params._meta`) holding a valid context, that context is the parent instead.
   */
  child(name: string, kind: SpanKind, attributes?: SpanAttributes, remote?: Record<string, unknown>): TraceSpan;
  set(attributes: SpanAttributes): void;
  /** A name learnt once the work is under way (an HTTP span's route). */
  rename(name: string): void;
  event(name: string, attributes?: SpanAttributes): void;
  /** The work failed: `error.type` and the span's status (the message is for the status only). */
  fail(errorType: string, message?: string): void;
  /**
   * Prompt, answer, tool arguments or result, only with content capture on
   * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`): `value` is not even called otherwise.
   */
  content(attribute: string, value: () => unknown): void;
  /** `traceparent` (and `tracestate`) naming this span as the parent of a remote call; empty when off. */
  headers(): Record<string, string>;
  end(): void;
}

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Tracing off (or nothing to trace under). */
export const NO_SPAN: TraceSpan = Object.freeze({
  recording: false,
  child: () => NO_SPAN,
  set: () => {},
  rename: () => {},
  event: () => {},
  fail: () => {},
  content: () => {},
  headers: () => NO_HEADERS,
  end: () => {},
});

/** What `/health` says of tracing. */
export interface TracingHealth {
  enabled: boolean;
  /** The collector, as an origin. */
  exporter?: string;
  protocol?: string;
  exported_spans?: number;
  dropped_spans?: number;
  last_failure?: { at: string; message: string };
}

/** The gateway's tracing, built once by `startTracing`. */
export interface Tracing {
  readonly enabled: boolean;
  /** `service.name`; tool servers are named `<this>-<server>`. */
  readonly serviceName: string;
  /** The server span of one HTTP request, continuing the caller's trace from its `traceparent` header. */
  serverSpan(name: string, headers: Record<string, string | string[] | undefined>, attributes: SpanAttributes): TraceSpan;
  /**
   * A keyed hash of the wallet for correlating one wallet's traces (`TRACE_WALLET_HMAC_SECRET`);
   * undefined when no secret is set. The address itself never goes on a span.
   */
  walletTag(wallet: string): string | undefined;
  health(): { fields: { tracing: TracingHealth } };
  /** Export what is queued and stop. */
  shutdown(): Promise<void>;
}

/** Tracing off: no SDK loaded, every span `NO_SPAN`. */
export function noTracing(serviceName: string): Tracing {
  return {
    enabled: false,
    serviceName,
    serverSpan: () => NO_SPAN,
    walletTag: () => undefined,
    health: () => ({ fields: { tracing: { enabled: false } } }),
    shutdown: async () => {},
  };
}
