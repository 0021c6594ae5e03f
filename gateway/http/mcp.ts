/**
 * `POST /mcp`: every tool the gateway hosts behind one MCP endpoint (Streamable HTTP, stateless,
 * JSON responses), with the wallet, keys, limits and credits of the HTTP API. The route sits
 * behind the same guard as `/v1/tools/execute`, so a refused wallet or key is an HTTP 401/403
 * before any MCP message is read; each request then gets a fresh MCP server and transport.
 * `GET`/`DELETE /mcp` are 405 with `Allow: POST` (from the router): a stateless server offers
 * neither a standalone SSE stream nor sessions to end.
 */
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Ledger } from '../accounts/types.js';
import type { Logger } from '../logger.js';
import type { ToolRunner } from '../tools/types.js';
import { RunningCalls } from './mcp-running-calls.js';
import { createMcpServer, type McpServerDeps } from './mcp-server.js';
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
    const server = createMcpServer(deps, {
      wallet: ctx.state.wallet as string,
      billing: ctx.state.billing === true,
      requestId: ctx.state.requestId as string,
    });
    // JSON responses, not an SSE stream per call: every answer is one message, and a stream per
    // request costs more than it brings (the gateway sends no progress notifications).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // Closing the server aborts the signal of every handler still running: a client that goes
    // away cancels its call at the tool server. After a finished response there is nothing to
    // abort, and nothing outlives the request (no timers, no listeners elsewhere) to free.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) void server.close();
    });
    await server.connect(transport);
    await handOver(ctx, transport);
  });
}

/** The transport writes the response itself (status, headers, body) from the body the guard already parsed. */
async function handOver(ctx: Context, transport: StreamableHTTPServerTransport): Promise<void> {
  ctx.respond = false;
  try {
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  } catch (err) {
    // Nothing written yet: let Koa answer with the error handler's body after all.
    if (!ctx.res.headersSent) ctx.respond = true;
    throw err;
  }
}
