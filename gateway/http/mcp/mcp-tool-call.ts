/**
 * One MCP `tools/call`, run as `/v1/tools/execute` runs a tool: a name /mcp does not offer is
 * refused before credits are reserved, then the tool host runs it under the charging helper
 * (1 credit on success, nothing on failure or cancellation). Never throws: every failure,
 * insufficient credits included, is an `isError` result. Both ways a call reaches the gateway
 * (the SDK server, the lone-call fast path) go through here.
 *
 * @example
 *   const result = await runToolCall(deps, caller, { id: 7, name: 'get_time', args: { timezone: 'UTC' } })
 */
import type { CallToolResult, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { withCharge, type Charger } from '../../ledger/charging.js';
import { toGatewayError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { toolNotFound } from '../../tools/tool-errors.js';
import { LIST_TOOLS_NAME, type ListToolsResult } from '../../tools/list-tools-builtin.js';
import type { ToolRunner } from '../../tools/types.js';
import type { RunningCalls } from './mcp-running-calls.js';
import type { McpToolListing } from './mcp-tool-listing.js';
import { toolErrorResult, toolResult } from './mcp-tool-results.js';
import { TOOL_EXECUTION_CREDITS } from '../../pricing.js';
import { NO_SPAN, type TraceSpan } from '../../tracing/trace-span.js';
import {
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_NAME,
  JSONRPC_REQUEST_ID,
  MCP_METHOD_NAME,
  NETWORK_TRANSPORT,
} from '../../../telemetry/semconv.js';
import type { ToolScope } from '../../tools/tool-scope.js';
import { toolNotAllowed } from '../key-scope.js';

/** What every call shares: built once, when the route is registered. */
export interface ToolCallDeps {
  tools: ToolRunner;
  listing: McpToolListing;
  /** The calls running now; aborts them all when shutdown cuts in-flight work off. */
  running: RunningCalls;
  /** The app's charging switch (NO_CHARGE in free mode). */
  charger: Charger;
  logger: Logger;
}

/** Who is calling, as the guard left it on `ctx.state`, and how the request ends. */
export interface McpCaller {
  wallet: string;
  /** The API key the request came with: its budgets are charged too, and it is the call's usage record's key id. */
  key?: string;
  /** The tools the key may use; absent: every tool. */
  scope?: ToolScope;
  /** The HTTP request's id, for the per-call log line and the call's usage record. */
  requestId: string;
  /** Aborted when the client closes the connection before the answer is written. */
  disconnected: AbortSignal;
  /** The HTTP request's span (NO_SPAN untraced). */
  trace?: TraceSpan;
}

export interface ToolCall {
  /** The JSON-RPC id: with the wallet, the key a `notifications/cancelled` names the call by. */
  id: RequestId;
  name: string;
  args: Record<string, unknown>;
  /** The request's `params._meta`: its `traceparent`/`tracestate` parent the call's span (SEP-414). */
  meta?: Record<string, unknown>;
}

export async function runToolCall(deps: ToolCallDeps, caller: McpCaller, call: ToolCall): Promise<CallToolResult> {
  const started = performance.now();
  const running = deps.running.start(caller.wallet, call.id, caller.disconnected);
  // The MCP server span: its parent is the client's context from params._meta, else the HTTP request's.
  const span = (caller.trace ?? NO_SPAN).child(
    `tools/call ${call.name}`,
    'server',
    {
      [MCP_METHOD_NAME]: 'tools/call',
      [GEN_AI_OPERATION_NAME]: 'execute_tool',
      [GEN_AI_TOOL_NAME]: call.name,
      [JSONRPC_REQUEST_ID]: String(call.id),
      [NETWORK_TRANSPORT]: 'tcp',
    },
    call.meta,
  );
  try {
    if (!deps.listing.offers(call.name)) throw toolNotFound(call.name);
    if (caller.scope && !caller.scope.allowsName(call.name, deps.tools.listTools())) throw toolNotAllowed(call.name);
    const { signal } = running;
    const payer = caller.key === undefined ? { wallet: caller.wallet } : { wallet: caller.wallet, key: caller.key };
    const origin = { kind: 'mcp' as const, requestId: caller.requestId, model: null };
    const result = await withCharge(deps.charger, payer, origin, TOOL_EXECUTION_CREDITS, async () => ({
      result: await deps.tools.callTool(call.name, call.args, { signal, trace: span }),
      cost: TOOL_EXECUTION_CREDITS,
      usage: { tools: { [call.name]: 1 }, promptTokens: 0, completionTokens: 0 },
    }));
    logCall(deps.logger, caller, call.name, started, 'ok');
    return toolResult(call.name === LIST_TOOLS_NAME ? deps.listing.onlyOffered(result as ListToolsResult, caller.scope) : result);
  } catch (thrown) {
    const error = toGatewayError(thrown);
    // Every failure is answered as an isError result: `tool_error` by the MCP conventions.
    span.fail('tool_error', error.code);
    logCall(deps.logger, caller, call.name, started, error.code, error.status >= 500 ? (error.details ?? error.message) : undefined);
    return toolErrorResult(error);
  } finally {
    span.end();
    running.end();
  }
}

/** One line per tools/call (the request line says only `/mcp`); a 5xx's detail goes here, never to the client. */
function logCall(logger: Logger, caller: McpCaller, tool: string, started: number, outcome: string, details?: string): void {
  const line = { reqId: caller.requestId, wallet: caller.wallet, tool, outcome, ms: Math.round((performance.now() - started) * 10) / 10 };
  if (details === undefined) logger.info(line, 'mcp tool call');
  else logger.error({ ...line, details }, 'mcp tool call');
}
