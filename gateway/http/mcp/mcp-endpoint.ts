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
import { traceOf } from '../middleware/trace-request.js';
import { toolScopeOf } from '../key-scope.js';
import { bodyIsJson } from '../middleware/json-body.js';
import { clientGoneSignal } from '../client-disconnect.js';
import { ErrorCode, isJSONRPCRequest, JSONRPCMessageSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { echoed } from '../../errors.js';
import { z } from 'zod';
import { errorBodySchema, json, type RouteDoc } from '../openapi/route-doc.js';

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
    const scope = toolScopeOf(ctx);
    const key = ctx.state.apiKey?.id;
    const caller: McpCaller = {
      wallet: callerWallet(ctx),
      ...(key !== undefined ? { key } : {}),
      ...(scope ? { scope } : {}),
      requestId: ctx.state.requestId,
      // Its calls are cancelled at the tool server when the client goes away.
      disconnected: clientGoneSignal(ctx),
      trace: traceOf(ctx),
    };
    const repeated = repeatedRequestId(ctx.request.body);
    if (repeated !== undefined) {
      // The transport answers each id once: the other calls of that id would run, and cost, unanswered.
      ctx.status = 400;
      ctx.body = {
        jsonrpc: '2.0',
        error: {
          code: ErrorCode.InvalidRequest,
          message: `Invalid Request: two requests of the batch have the id ${echoed(JSON.stringify(repeated))}; give each its own`,
        },
        id: null,
      };
      return;
    }
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

/** An id two requests of a batch share, if any (a number and a string of the same digits are two ids, as for the transport). */
function repeatedRequestId(body: unknown): RequestId | undefined {
  if (!Array.isArray(body)) return undefined;
  const seen = new Set<RequestId>();
  for (const message of body) {
    if (!isJSONRPCRequest(message)) continue;
    if (seen.has(message.id)) return message.id;
    seen.add(message.id);
  }
  return undefined;
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
  // The gateway's body reader decides what is JSON, for /mcp as for every route: a body it read
  // as JSON (any +json type too) is application/json to the transport, which takes only that.
  if (bodyIsJson(ctx)) headers.set('content-type', 'application/json');
  // The URL only reaches handlers as requestInfo (unused here): the route's path on a fixed origin
  // keeps an odd Host header from failing the Request. The Request carries no body: the SDK takes
  // the one the gateway's reader parsed (size and depth checked), and without one (no JSON body)
  // it refuses the content type before it would read anything.
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

/** How the SDK's transport refuses an HTTP request: a JSON-RPC error whose id is null (no message was taken). */
const transportErrorSchema = z.object({
  jsonrpc: z.literal('2.0'),
  error: z.object({
    code: z
      .number()
      .int()
      .meta({ examples: [-32700, -32600, -32000] }),
    message: z.string(),
    data: z.unknown().optional(),
  }),
  id: z.null(),
});

/** A status both the gateway (before the MCP message is read) and the transport answer. */
const gatewayOrTransportError = z.union([errorBodySchema, transportErrorSchema]);

export const mcpRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/mcp',
    tag: 'MCP',
    summary: 'MCP over Streamable HTTP (stateless): initialize, ping, tools/list, tools/call, notifications/cancelled',
    description:
      'Every tool /v1/tools lists, with the wallet, keys, limits and credits of the HTTP API; a successful tools/call costs 1 credit. ' +
      'A tool failure (insufficient_credits included) is a result with isError; a protocol problem is a JSON-RPC error. ' +
      'Send Accept: application/json, text/event-stream, and the body as application/json (any +json type is JSON too, as on every route). ' +
      'What the gateway refuses before the MCP message is read (the wallet, the key, the budgets, a body that is not JSON, too ' +
      'large, too deep or not decodable) has the OpenAI error body. What the MCP transport refuses is a JSON-RPC error with id ' +
      'null: 406 for an Accept without both types, 415 for a POST with no JSON body, 400 for a body that is no JSON-RPC message ' +
      "(-32700), a batch over the SDK's size, with two initialize requests or with two requests of one id (-32600), or an " +
      'MCP-Protocol-Version it does not speak (-32000).',
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
    errorBodies: { 400: gatewayOrTransportError, 406: transportErrorSchema, 415: gatewayOrTransportError },
  },
];
