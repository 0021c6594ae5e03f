/**
 * `GET /v1/tools` (the tools that can run now) and `POST /v1/tools/execute` (run one directly).
 * Every execute failure carries `ok: false` and `tool` beside the OpenAI error object.
 */
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import { withCharge, type Charger } from '../accounts/charging.js';
import { InvalidRequest, type GatewayError } from '../errors.js';
import { invalidToolArguments, toolNotFound } from '../tools/tool-errors.js';
import type { ToolRunner } from '../tools/types.js';
import { callerWallet } from './wallet.js';

export interface ToolRoutesOptions {
  tools: ToolRunner;
  /** The app's charging switch: a successful run costs 1, held before, settled after, released on failure. */
  charger: Charger;
  /** Aborted when shutdown cuts in-flight work off. */
  shuttingDown?: AbortSignal;
}

/** A direct tool execution costs the minimum. */
export const TOOL_EXECUTION_CREDITS = 1;

const executeBody = z.object({
  tool: z.string().min(1).max(200),
  args: z.unknown().optional(),
});

/**
 * Register the tool routes behind `guard` (wallet header, auth).
 *
 * @example
 *   registerToolRoutes(router, gated, { tools: toolHost, charger })
 */
export function registerToolRoutes(router: Router, guard: Middleware, options: ToolRoutesOptions): void {
  const { tools } = options;

  router.get('/v1/tools', guard, (ctx) => {
    ctx.body = {
      tools: tools.listTools().map((tool) => ({
        name: tool.name,
        description: tool.description,
        params: tool.params,
        server: tool.server,
        input_schema: tool.inputSchema,
      })),
    };
  });

  router.post('/v1/tools/execute', executeErrorShape, guard, async (ctx) => {
    const body: unknown = ctx.request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequest('The body must be a JSON object: {"tool": "...", "args": {...}}.');
    }
    const parsed = executeBody.safeParse(body);
    if (!parsed.success) throw new InvalidRequest('tool must be a tool name (a non-empty string).', 'tool');
    const rawArgs = parsed.data.args ?? {};
    if (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs)) {
      throw invalidToolArguments('args must be a JSON object.', 'args');
    }
    const args = rawArgs as Record<string, unknown>;
    const name = parsed.data.tool;
    // Refused before credits are reserved, even while the tool's server is down.
    if (!tools.hasTool(name)) throw toolNotFound(name);

    const signal = callSignal(ctx, options.shuttingDown);
    const result = await withCharge(options.charger, callerWallet(ctx), TOOL_EXECUTION_CREDITS, async () => ({
      result: await tools.callTool(name, args, { signal }),
      cost: TOOL_EXECUTION_CREDITS,
    }));
    ctx.body = { ok: true, tool: name, result };
  });
}

/**
 * Before the guard, so a refused wallet or key also answers `{ok: false, tool, error}`. The body
 * is parsed later, inside the guard (after auth), so the tool name is read only when an error is
 * shaped; it is null when the body was never parsed or names no tool.
 */
async function executeErrorShape(ctx: Context, next: Next): Promise<void> {
  ctx.state.errorBody = (err: GatewayError) => {
    const tool = (ctx.request.body as { tool?: unknown } | undefined)?.tool;
    return { ok: false, tool: typeof tool === 'string' ? tool : null, ...err.toBody() };
  };
  await next();
}

/** Aborted when the client goes away before the answer is written, or shutdown cuts work off. */
function callSignal(ctx: Context, shuttingDown: AbortSignal | undefined): AbortSignal {
  const disconnect = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) disconnect.abort(new Error('client disconnected'));
  });
  return shuttingDown ? AbortSignal.any([disconnect.signal, shuttingDown]) : disconnect.signal;
}
