/**
 * The MCP server behind `POST /mcp`, one per HTTP request (the SDK's stateless pattern: no session
 * lives between requests, so any instance of a cluster can answer any of them). It speaks
 * `initialize`, `ping`, `tools/list` and `tools/call`; the SDK's zod schemas check every message,
 * and a protocol problem (unknown method, bad params) is a JSON-RPC error. A tool's failure is an
 * `isError` result with the gateway's error code, never a JSON-RPC error.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { CallToolRequestSchema, CancelledNotificationSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { runToolCall, type McpCaller, type ToolCallDeps } from './mcp-tool-call.js';
import { TOOL_EXECUTION_CREDITS } from '../../pricing.js';

/**
 * tools/call registered with its params unchecked: the SDK's Server checks a tools/call against
 * CallToolRequestSchema itself and answers InvalidParams (-32602), where a failed check of the
 * registered schema would answer InternalError (-32603) for the client's mistake.
 */
const toolsCallEnvelope = z.object({ method: z.literal('tools/call'), params: z.unknown() });

const SERVER_INFO = { name: 'switchyard', version: '0.1.0' };

const INSTRUCTIONS =
  'Switchyard: every tool this gateway hosts, behind one endpoint. Call list_tools to find one by words. ' +
  `A successful tools/call costs ${TOOL_EXECUTION_CREDITS} credit; a failed one costs nothing. ` +
  'A failure is an isError result whose text is {"error":{"message","type","code","param"}}.';

/** What every request's server shares: built once, when the route is registered. */
export interface McpServerDeps extends ToolCallDeps {
  /** The SDK builds an Ajv instance per server unless given one; one shared is much cheaper. */
  validator: jsonSchemaValidator;
}

/**
 * A fresh server for one HTTP request; connect it to that request's transport.
 *
 * @example
 *   const server = createMcpServer(deps, { wallet, requestId, disconnected })
 *   await server.connect(new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }))
 */
export function createMcpServer(deps: McpServerDeps, caller: McpCaller): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: deps.validator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: deps.listing.tools(caller.scope) }));
  server.setRequestHandler(toolsCallEnvelope, (request, extra) => {
    const { params } = CallToolRequestSchema.parse(request);
    return runToolCall(deps, caller, {
      id: extra.requestId,
      name: params.name,
      args: params.arguments ?? {},
      ...(params._meta ? { meta: params._meta } : {}),
    });
  });
  // Replaces the SDK's own handler, which knows only this server's requests: the call being
  // cancelled runs under another request's server.
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const { requestId, reason } = notification.params;
    if (requestId !== undefined) deps.running.cancel(caller.wallet, requestId, reason);
  });
  return server;
}
