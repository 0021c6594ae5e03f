/**
 * The MCP server behind `POST /mcp`, one per HTTP request (the SDK's stateless pattern: no session
 * lives between requests, so any instance of a cluster can answer any of them). It speaks
 * `initialize`, `ping`, `tools/list` and `tools/call`; the SDK's zod schemas check every message,
 * and a protocol problem (unknown method, bad params) is a JSON-RPC error. A tool's failure is an
 * `isError` result with the gateway's error code, never a JSON-RPC error.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { withCharge } from '../accounts/charging.js';
import type { Ledger } from '../accounts/types.js';
import { toGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { toolNotFound } from '../tools/tool-errors.js';
import type { ToolRunner } from '../tools/types.js';
import type { RunningCalls } from './mcp-running-calls.js';
import type { McpToolListing } from './mcp-tool-listing.js';
import { toolErrorResult, toolResult } from './mcp-tool-results.js';
import { TOOL_EXECUTION_CREDITS } from './tools.js';

/**
 * tools/call registered with its params unchecked: the SDK's Server checks a tools/call against
 * CallToolRequestSchema itself and answers InvalidParams (-32602), where a failed check of the
 * registered schema would answer InternalError (-32603) for the client's mistake.
 */
const toolsCallEnvelope = z.object({ method: z.literal('tools/call'), params: z.unknown() });

const SERVER_INFO = { name: 'switchyard', version: '0.1.0' };

const INSTRUCTIONS =
  'Switchyard: every tool this gateway hosts (on-chain, web, knowledge, utility). Call list_tools to find one by words. ' +
  `A successful tools/call costs ${TOOL_EXECUTION_CREDITS} credit; a failed one costs nothing. ` +
  'A failure is an isError result whose text is {"error":{"message","type","code","param"}}.';

/** What every request's server shares: built once, when the route is registered. */
export interface McpServerDeps {
  tools: ToolRunner;
  listing: McpToolListing;
  /** The calls running now; aborts them all when shutdown cuts in-flight work off. */
  running: RunningCalls;
  /** Charged when the caller is billed; undefined charges nothing. */
  ledger?: Ledger;
  logger: Logger;
  /** The SDK builds an Ajv instance per server unless given one; one shared is much cheaper. */
  validator: jsonSchemaValidator;
}

/** Who is calling, as the guard left it on `ctx.state`. */
export interface McpCaller {
  wallet: string;
  /** Credits are charged (free mode off). */
  billing: boolean;
  /** The HTTP request's id, for the per-call log line. */
  requestId: string;
}

/**
 * A fresh server for one HTTP request; connect it to that request's transport.
 *
 * @example
 *   const server = createMcpServer(deps, { wallet, billing: true, requestId })
 *   await server.connect(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }))
 */
export function createMcpServer(deps: McpServerDeps, caller: McpCaller): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: deps.validator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: deps.listing.tools() }));
  server.setRequestHandler(toolsCallEnvelope, (request, extra) => {
    const { params } = CallToolRequestSchema.parse(request);
    return callTool(deps, caller, extra.requestId, params.name, params.arguments ?? {}, extra.signal);
  });
  // Replaces the SDK's own handler, which knows only this server's requests: the call being
  // cancelled runs under another request's server.
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const { requestId, reason } = notification.params;
    if (requestId !== undefined) deps.running.cancel(caller.wallet, requestId, reason);
  });
  return server;
}

/**
 * One tools/call, as `/v1/tools/execute` runs it: unknown names refused before credits are
 * reserved, then the tool host under the charging helper (1 credit on success, nothing on
 * failure). `requestSignal` is the SDK's: aborted when this request's transport closes (the
 * client went away).
 */
async function callTool(
  deps: McpServerDeps,
  caller: McpCaller,
  id: RequestId,
  name: string,
  args: Record<string, unknown>,
  requestSignal: AbortSignal,
): Promise<CallToolResult> {
  const started = performance.now();
  const running = deps.running.start(caller.wallet, id, requestSignal);
  try {
    if (!deps.listing.offers(name)) throw toolNotFound(name);
    const { signal } = running;
    const result = await withCharge(deps.ledger, { wallet: caller.wallet, billing: caller.billing, reserve: TOOL_EXECUTION_CREDITS }, async () => ({
      result: await deps.tools.callTool(name, args, { signal }),
      cost: TOOL_EXECUTION_CREDITS,
    }));
    logCall(deps.logger, caller, name, started, 'ok');
    return toolResult(result);
  } catch (thrown) {
    const error = toGatewayError(thrown);
    logCall(deps.logger, caller, name, started, error.code, error.status >= 500 ? error.details ?? error.message : undefined);
    return toolErrorResult(error);
  } finally {
    running.end();
  }
}

/** One line per tools/call (the request line says only `/mcp`); a 5xx's detail goes here, never to the client. */
function logCall(logger: Logger, caller: McpCaller, tool: string, started: number, outcome: string, details?: string): void {
  const line = { reqId: caller.requestId, wallet: caller.wallet, tool, outcome, ms: Math.round((performance.now() - started) * 10) / 10 };
  if (details === undefined) logger.info(line, 'mcp tool call');
  else logger.error({ ...line, details }, 'mcp tool call');
}
