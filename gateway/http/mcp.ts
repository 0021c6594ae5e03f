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
import type { Ledger } from '../accounts/types.js';
import type { Logger } from '../logger.js';
import type { ToolRunner } from '../tools/types.js';
import { RunningCalls } from './mcp-running-calls.js';
import { jsonRpcResult, loneToolCall } from './mcp-lone-tool-call.js';
import { createMcpServer, type McpServerDeps } from './mcp-server.js';
import { runToolCall, type McpCaller } from './mcp-tool-call.js';
import { McpToolListing } from './mcp-tool-listing.js';

export interface McpRouteOptions {
  tools: ToolRunner;
  /** Credits, when the request is billed (`ctx.state.billing`): 1 per successful tools/call. */
  billing?: { ledger: Ledger };
  /** Aborted when shutdown cuts in-flight work off. */
  shuttingDown?: AbortSignal;
  logger: Logger;
}

/**
 * Register `POST /mcp` behind `guard` (wallet header, auth, per-wallet budget, JSON body).
 *
 * @example
 *   registerMcpRoutes(router, gated, { tools: toolHost, billing: { ledger }, logger })
 */
export function registerMcpRoutes(router: Router, guard: Middleware, options: McpRouteOptions): void {
  const deps: McpServerDeps = {
    tools: options.tools,
    listing: new McpToolListing(options.tools, options.logger),
    running: new RunningCalls(options.shuttingDown),
    ledger: options.billing?.ledger,
    logger: options.logger,
    validator: new AjvJsonSchemaValidator(),
  };

  router.post('/mcp', guard, async (ctx) => {
    const caller: McpCaller = {
      wallet: ctx.state.wallet as string,
      billing: ctx.state.billing === true,
      requestId: ctx.state.requestId as string,
      disconnected: disconnectSignal(ctx),
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

/** Aborted when the client goes away before the answer is written: its calls are cancelled at the tool server. */
function disconnectSignal(ctx: Context): AbortSignal {
  const disconnect = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) disconnect.abort(new Error('client disconnected'));
  });
  return disconnect.signal;
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
