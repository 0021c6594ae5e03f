/**
 * `GET /v1/tools` (the tools that can run now) and `POST /v1/tools/execute` (run one directly).
 * Every execute failure the route answers carries `ok: false` and `tool` beside the OpenAI error
 * object; the per-IP budget's 429 comes before any route (app.ts) and is the plain OpenAI error.
 */
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { z } from 'zod';
import { withCharge, type Charger } from '../../ledger/charging.js';
import { TOOL_EXECUTION_CREDITS } from '../../pricing.js';
import { echoed, InvalidRequest, type GatewayError } from '../../errors.js';
import { invalidToolArguments, toolNotFound } from '../../tools/tool-errors.js';
import type { ToolRunner } from '../../tools/types.js';
import { x402RouteDocs } from '../middleware/x402-payment.js';
import { traceOf } from '../middleware/trace-request.js';
import { assertToolAllowed, payerOf, toolScopeOf } from '../key-scope.js';
import { LIST_TOOLS_NAME, type ListToolsResult } from '../../tools/list-tools-builtin.js';
import { chargeOrigin } from '../charge-origin.js';
import { clientGoneSignal } from '../client-disconnect.js';
import { errorObjectSchema, json, type RouteDoc } from '../openapi/route-doc.js';

export interface ToolRoutesOptions {
  tools: ToolRunner;
  /** The app's charging switch: a successful run costs TOOL_EXECUTION_CREDITS, held before, settled after, released on failure. */
  charger: Charger;
  /** Aborted when shutdown cuts in-flight work off. */
  shuttingDown?: AbortSignal;
  /** Pay on 402 (x402), after the guard, on the route that costs credits; absent when x402 is off. */
  payOn402?: Middleware;
}

const executeBody = z.object({
  tool: z.string().min(1).max(200).meta({ description: 'A tool name from GET /v1/tools' }),
  args: z.record(z.string(), z.unknown()).nullish().meta({ description: "The tool's arguments (its input_schema)" }),
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
    const all = tools.listTools();
    // A key limited to some tools sees only those.
    const listed = toolScopeOf(ctx)?.filter(all) ?? all;
    ctx.body = {
      tools: listed.map((tool) => ({
        name: tool.name,
        description: tool.description,
        params: tool.params,
        server: tool.server,
        input_schema: tool.inputSchema,
      })),
    };
  });

  const paid = options.payOn402 ? [options.payOn402] : [];
  router.post('/v1/tools/execute', executeErrorShape, guard, ...paid, async (ctx) => {
    // (payOn402 checked the key's scope and budget before taking a payment: app.ts.)
    const body: unknown = ctx.request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new InvalidRequest('The body must be a JSON object: {"tool": "...", "args": {...}}.');
    }
    const parsed = executeBody.safeParse(body);
    if (!parsed.success) {
      if (parsed.error.issues[0].path[0] === 'args') throw invalidToolArguments('args must be a JSON object.', 'args');
      throw new InvalidRequest('tool must be a tool name (a non-empty string).', 'tool');
    }
    const args = parsed.data.args ?? {};
    const name = parsed.data.tool;
    // Refused before credits are reserved, even while the tool's server is down.
    if (!tools.hasTool(name)) throw toolNotFound(name);
    assertToolAllowed(ctx, name, tools);

    const signal = callSignal(ctx, options.shuttingDown);
    const result = await withCharge(options.charger, payerOf(ctx), chargeOrigin(ctx, 'tool'), TOOL_EXECUTION_CREDITS, async () => ({
      result: await tools.callTool(name, args, { signal, trace: traceOf(ctx) }),
      cost: TOOL_EXECUTION_CREDITS,
      usage: { tools: { [name]: 1 }, promptTokens: 0, completionTokens: 0 },
    }));
    const scope = toolScopeOf(ctx);
    // list_tools answers for every tool: a limited key hears only of its own.
    const shown = scope && name === LIST_TOOLS_NAME ? { tools: (result as ListToolsResult).tools.filter((t) => scope.allows(t)) } : result;
    ctx.body = { ok: true, tool: name, result: shown };
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
    return { ok: false, tool: typeof tool === 'string' ? echoed(tool) : null, ...err.toBody() };
  };
  await next();
}

/** Aborted when the client goes away before the answer is written, or shutdown cuts work off. */
function callSignal(ctx: Context, shuttingDown: AbortSignal | undefined): AbortSignal {
  const gone = clientGoneSignal(ctx);
  return shuttingDown ? AbortSignal.any([gone, shuttingDown]) : gone;
}

const toolListSchema = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      params: z.array(z.string()).meta({ description: 'Argument names, in schema order' }),
      server: z.string().meta({ description: 'The tool server offering it ("gateway" for built-ins)' }),
      input_schema: z.record(z.string(), z.unknown()).meta({ description: 'JSON Schema of the arguments' }),
    }),
  ),
});

const executeResultSchema = z.object({
  ok: z.literal(true),
  tool: z.string(),
  result: z.unknown().meta({ description: "The tool's structured result" }),
});

const executeErrorSchema = z.object({ ok: z.literal(false), tool: z.string().nullable(), error: errorObjectSchema });

export const toolRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/tools',
    tag: 'Tools',
    summary: 'List the tools that can run now',
    access: 'gated',
    response: { description: 'Each tool with its parameter names and JSON Schema', content: json(toolListSchema) },
  },
  {
    method: 'post',
    path: '/v1/tools/execute',
    tag: 'Tools',
    summary: 'Run one tool directly',
    description:
      `Costs ${TOOL_EXECUTION_CREDITS} credit when credits are on. ` +
      'Every failure carries `ok: false` and `tool` beside `error`.' +
      x402RouteDocs.description,
    access: 'gated',
    headers: x402RouteDocs.headers,
    errorHeaders: x402RouteDocs.errorHeaders,
    body: executeBody,
    response: { description: "The tool's result", content: json(executeResultSchema), headers: x402RouteDocs.responseHeaders },
    errors: [401, 402, 403, 404, 502, 503, 504],
    errorBody: executeErrorSchema,
  },
];
