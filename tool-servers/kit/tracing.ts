/**
 * A tool server's traces: off unless the standard OTEL_* variables name an endpoint (the gateway
 * forwards them through `envPassthrough: ["OTEL_"]` and names each child
 * `OTEL_SERVICE_NAME=<gateway>-<server>`); then the SDK is loaded with a dynamic import and each
 * `tools/call` is a SERVER span whose parent is the context in the request's `params._meta`
 * (SEP-414), so it sits under the gateway's `execute_tool` span. Calls to providers through
 * `httpRequest` are CLIENT spans under it; no trace context is sent to a provider. A process has
 * one tracer (this module's state): runStdio starts it before serving.
 *
 * @example
 *   await startServerTracing(process.env, 'utility')
 *   const result = await traceToolCall({ tool: 'get_time', requestId: 3, meta }, () => run())
 */
import type * as Api from '@opentelemetry/api';
import { readOtelSettings, type OtelEnv } from '../../telemetry/otel-settings.js';
import type { OtelSdk } from '../../telemetry/otel-sdk.js';
import {
  ERROR_TYPE,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_TOOL_NAME,
  HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE,
  JSONRPC_REQUEST_ID,
  MCP_METHOD_NAME,
  NETWORK_TRANSPORT,
  SERVER_ADDRESS,
  SERVER_PORT,
} from '../../telemetry/semconv.js';

interface Active {
  sdk: OtelSdk;
  api: typeof Api;
  captureContent: boolean;
}

let active: Active | undefined;

/** Start tracing when configured (a wrong OTEL_* value throws, naming it); idempotent. */
export async function startServerTracing(env: OtelEnv, serverName: string): Promise<void> {
  if (active) return;
  const settings = readOtelSettings(env, serverName);
  if (!settings.enabled) return;
  const [{ startOtelSdk }, api, { AsyncLocalStorageContextManager }] = await Promise.all([
    import('../../telemetry/otel-sdk.js'),
    import('@opentelemetry/api'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  // The span of a tool call must reach the provider calls its tool makes, across awaits.
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  active = { sdk: startOtelSdk(settings), api, captureContent: settings.captureContent };
}

/** Export what is queued (bounded by the export timeout); before the process exits. */
export async function stopServerTracing(): Promise<void> {
  await active?.sdk.shutdown().catch(() => undefined);
}

export interface ToolCallTrace {
  tool: string;
  /** The JSON-RPC id of the request. */
  requestId: string | number;
  /** The request's `params._meta` (`traceparent`, `tracestate`). */
  meta?: Record<string, unknown>;
  args: unknown;
}

/**
 * Run one `tools/call` inside its SERVER span; `failed(result)` names a result that is an error
 * (`error.type` `tool_error`, the MCP conventions' value for `isError`).
 */
export async function traceToolCall<T>(call: ToolCallTrace, run: () => Promise<T>, failed: (result: T) => string | undefined): Promise<T> {
  if (!active) return run();
  const { api, sdk, captureContent } = active;
  const parent = sdk.propagator.extract(api.ROOT_CONTEXT, call.meta ?? {}, api.defaultTextMapGetter);
  const span = sdk.tracer.startSpan(
    `tools/call ${call.tool}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: {
        [MCP_METHOD_NAME]: 'tools/call',
        [GEN_AI_OPERATION_NAME]: 'execute_tool',
        [GEN_AI_TOOL_NAME]: call.tool,
        [JSONRPC_REQUEST_ID]: String(call.requestId),
        [NETWORK_TRANSPORT]: 'pipe',
      },
    },
    parent,
  );
  if (captureContent && span.isRecording()) span.setAttribute(GEN_AI_TOOL_CALL_ARGUMENTS, JSON.stringify(call.args));
  try {
    const result = await api.context.with(api.trace.setSpan(parent, span), run);
    const failure = failed(result);
    if (failure !== undefined) {
      span.setAttribute(ERROR_TYPE, 'tool_error');
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure });
    } else if (captureContent && span.isRecording()) span.setAttribute(GEN_AI_TOOL_CALL_RESULT, JSON.stringify(result));
    return result;
  } catch (err) {
    span.setAttribute(ERROR_TYPE, err instanceof Error && err.name !== 'Error' ? err.name : '_OTHER');
    span.setStatus({ code: api.SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * One provider request as a CLIENT span under the running tool call (none outside one). Its
 * attributes name the host, never the URL (a query may hold a key); no `traceparent` is sent.
 */
export async function traceProviderCall<T extends { status: number }>(
  method: string,
  target: string | URL,
  run: () => Promise<T>,
): Promise<T> {
  if (!active) return run();
  const { api, sdk } = active;
  const context = api.context.active();
  if (!api.trace.getSpan(context)) return run();
  // Parsed only for a span (tracing off costs nothing); a URL that does not parse fails in `run` as it would untraced.
  const url = URL.canParse(String(target)) ? new URL(target) : undefined;
  if (!url) return run();
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const span = sdk.tracer.startSpan(
    method,
    {
      kind: api.SpanKind.CLIENT,
      attributes: { [HTTP_REQUEST_METHOD]: method, [SERVER_ADDRESS]: url.hostname, [SERVER_PORT]: port },
    },
    context,
  );
  try {
    const response = await run();
    span.setAttribute(HTTP_RESPONSE_STATUS_CODE, response.status);
    if (response.status >= 400) {
      span.setAttribute(ERROR_TYPE, String(response.status));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    return response;
  } catch (err) {
    const kind = (err as { kind?: unknown }).kind;
    span.setAttribute(ERROR_TYPE, typeof kind === 'string' ? kind : '_OTHER');
    span.setStatus({ code: api.SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
