/**
 * `POST /mcp`: every tool the gateway hosts behind one MCP endpoint (Streamable HTTP, stateless,
 * JSON responses), with the wallet, keys, limits and credits of the HTTP API. The route sits
 * behind the same guard as `/v1/tools/execute`, so a refused wallet or key is an HTTP 401/403
 * before any MCP message is read. A lone tools/call is answered directly (mcp-lone-tool-call.ts);
 * every other request gets a fresh SDK server and transport.
 * `GET`/`DELETE /mcp` are 405 with `Allow: POST` (from the router): a stateless server offers
 * neither a standalone SSE stream nor sessions to end.
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Charger } from '../../ledger/charging.js';
import type { Logger } from '../../logger.js';
import type { ToolRunner } from '../../tools/types.js';
import { RunningCalls } from './mcp-running-calls.js';
import { jsonRpcResult, loneToolCall } from './mcp-lone-tool-call.js';
import { createMcpServer, type McpServerDeps } from './mcp-server.js';
import { runToolCall, type McpCaller } from './mcp-tool-call.js';
import { McpToolListing } from './mcp-tool-listing.js';
import { callerWallet } from '../middleware/wallet.js';
import { clientGoneSignal } from '../client-disconnect.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { json, type RouteDoc } from '../openapi/route-doc.js';

export interface McpRouteOptions {
  tools: ToolRunner;
  /** The app's charging switch: 1 credit per successful tools/call. */
  charger: Charger;
  /** Aborted when shutdown cuts in-flight work off. */
  shuttingDown?: AbortSignal;
  logger: Logger;
}

/**
 * Register `POST /mcp` behind `guard` (wallet header, auth, per-wallet budget, JSON body).
 *
 * @example
 *   registerMcpRoutes(router, gated, { tools: toolHost, charger, logger })
 */
export function registerMcpRoutes(router: Router, guard: Middleware, options: McpRouteOptions): void {
  const deps: McpServerDeps = {
    tools: options.tools,
    listing: new McpToolListing(options.tools, options.logger),
    running: new RunningCalls(options.shuttingDown),
    charger: options.charger,
    logger: options.logger,
    validator: new AjvJsonSchemaValidator(),
  };

  router.post('/mcp', guard, async (ctx) => {
    const caller: McpCaller = {
      wallet: callerWallet(ctx),
      requestId: ctx.state.requestId,
      // Its calls are cancelled at the tool server when the client goes away.
      disconnected: clientGoneSignal(ctx),
    };
    const call = loneToolCall(ctx);
    if (call) {
      ctx.type = 'application/json';
      ctx.body = jsonRpcResult(call.id, await runToolCall(deps, caller, call));
      return;
    }
    const server = createMcpServer(deps, caller);
    // JSON responses, not an SSE stream per call: every answer is one message, and a stream per
    // request costs more than it brings (the gateway sends no progress notifications).
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    await handOver(ctx, transport);
  });
}

/** The request headers the transport reads (Streamable HTTP's own); the rest are the gateway's business. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/**
 * The transport answers a web Request with a web Response. In JSON-response mode that Response is
 * one finished JSON-RPC message (or an empty 202 for notifications), so Koa writes it like any
 * other body, and the request log, metrics and error handler see its real status. (The SDK's
 * Node wrapper would write it through @hono/node-server, which waits a timer tick per response
 * for a body it cannot see the end of: about a millisecond on every call.)
 */
async function handOver(ctx: Context, transport: WebStandardStreamableHTTPServerTransport): Promise<void> {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = ctx.get(name);
    if (value) headers.set(name, value);
  }
  // The URL only reaches handlers as requestInfo (unused here): the route's path on a fixed origin
  // keeps an odd Host header from failing the Request.
  const request = new Request(`http://gateway${ctx.path}`, { method: ctx.method, headers });
  const response = await transport.handleRequest(request, { parsedBody: ctx.request.body });
  ctx.status = response.status;
  response.headers.forEach((value, name) => ctx.set(name, value));
  const text = await response.text();
  ctx.body = text;
  if (!text) ctx.remove('Content-Type');
}

/** A JSON-RPC message or a batch of them, as the SDK's transport validates it. */
const mcpBodySchema = z.union([JSONRPCMessageSchema, z.array(JSONRPCMessageSchema)]);

export const mcpRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/mcp',
    tag: 'MCP',
    summary: 'MCP over Streamable HTTP (stateless): initialize, ping, tools/list, tools/call, notifications/cancelled',
    description:
      'Every tool /v1/tools lists, with the wallet, keys, limits and credits of the HTTP API; a successful tools/call costs 1 credit. ' +
      'A tool failure (insufficient_credits included) is a result with isError; a protocol problem is a JSON-RPC error. ' +
      'Send Accept: application/json, text/event-stream.',
    access: 'gated',
    headers: z.object({
      accept: z.string().meta({ description: 'Must allow application/json and text/event-stream' }),
      'mcp-protocol-version': z.string().optional().meta({ description: 'A protocol revision the SDK speaks' }),
    }),
    body: mcpBodySchema,
    response: {
      description: 'The JSON-RPC response(s); 202 with no body for notifications only',
      content: json(mcpBodySchema),
    },
    errors: [406],
  },
];
