import Koa, { type Context, type Middleware } from 'koa';
import compose from 'koa-compose';
import Router from '@koa/router';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { echoed, GatewayError, MethodNotAllowed } from './errors.js';
import { errorHandler } from './http/middleware/error-handler.js';
import { jsonBody } from './http/middleware/json-body.js';
import { httpRequirements } from './http/middleware/http-requirements.js';
import { requireWallet } from './http/middleware/wallet.js';
import { modelRouteDocs, registerModelRoutes } from './http/routes/models.js';
import { healthRouteDocs, registerHealthRoutes } from './http/routes/health.js';
import type { HealthContributor } from './health.js';
import { metricsRouteDocs, registerMetricsRoutes } from './http/routes/metrics.js';
import { requestContext } from './http/middleware/request-context.js';
import { corsFor } from './http/middleware/cors.js';
import { perIpRateLimit, perWalletRateLimit } from './http/middleware/rate-limit.js';
import { registerToolRoutes, toolRouteDocs } from './http/routes/tools.js';
import { mcpRouteDocs, registerMcpRoutes } from './http/mcp/mcp-endpoint.js';
import type { ToolRunner } from './tools/types.js';
import { ledgerCharger, NO_CHARGE } from './ledger/charging.js';
import { authenticate } from './http/middleware/auth.js';
import { keyRouteDocs, registerKeyRoutes } from './http/routes/keys.js';
import { creditRouteDocs, registerCreditRoutes } from './http/routes/credits.js';
import { depositRouteDocs, registerDepositRoutes, type DepositRouteDeps } from './http/routes/deposits.js';
import { adminRouteDocs, registerAdminRoutes } from './http/routes/admin.js';
import { chatRouteDocs, registerChatRoutes } from './http/routes/chat.js';
import { registerResponseRoutes, responseRouteDocs } from './http/routes/responses.js';
import { messageErrorBodyByPath, messageRouteDocs, registerMessageRoutes } from './http/routes/messages.js';
import { buildOpenApiDocument } from './http/openapi/openapi-document.js';
import { openApiRouteDocs, registerOpenApiRoutes } from './http/routes/openapi.js';
import { defaultPublicDir, playgroundRouteDocs, registerPlaygroundRoutes } from './http/routes/playground.js';
import { chatConcurrency } from './http/middleware/chat-concurrency.js';
import { admit } from './http/middleware/admission.js';
import { ChatOrchestrator } from './chat/orchestrator.js';
import type { Upstreams } from './chat/upstreams.js';
import { KeptRounds } from './chat/kept-rounds.js';
import type { Stores } from './stores/stores.js';
import type { X402Payments } from './x402/payments.js';
import { x402Payment } from './http/middleware/x402-payment.js';
import { traceRequest } from './http/middleware/trace-request.js';
import type { Tracing } from './tracing/trace-span.js';
import { assertModelAllowed, assertToolAllowed, keyBudgetBeforePayment } from './http/key-scope.js';
import type { KnownNames } from './http/key-limits-body.js';

export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  startedAt: number;
  /** Parts that report into /health (store, tool servers, upstreams). */
  health: HealthContributor[];
  /**
   * Aborted when shutdown's grace period is over and in-flight requests are being cut off; long
   * work (upstream calls, tool calls) can tie its own AbortSignal to it.
   */
  shuttingDown: AbortSignal;
  /** The tool host: /v1/tools, /v1/tools/execute, /mcp and the chat loop's tools. */
  tools: ToolRunner;
  /** Every store, in the mode the composition root chose (stores/stores.ts). */
  stores: Stores;
  /** Each model's upstream client and health: POST /v1/chat/completions. */
  upstreams: Upstreams;
  /** The watched chains (empty when deposits are off): /credits/deposit-info, /credits/deposits. */
  depositChains: DepositRouteDeps['chains'];
  /** Pay on 402 (x402 top-ups) when configured; none otherwise, and never used in free mode. */
  x402: X402Payments | undefined;
  /** OpenTelemetry traces (docs/tracing.md); off: no middleware, every span a no-op. */
  tracing?: Tracing;
}

/**
 * Build the Koa app without listening, so tests run it on an ephemeral port.
 * The middleware order below is the request's path through the gateway.
 */
export function createApp(deps: AppDeps): Koa {
  const { config } = deps;
  // Behind one proxy the client's address is the last X-Forwarded-For entry, the one that proxy
  // added: the entries before it are whatever the client sent (Koa takes the first unless told).
  const app = new Koa({ proxy: config.server.trustProxy, maxIpsCount: 1 });
  app.silent = true; // errors are logged by our request logger, not Koa's default stderr dump

  const primaryModel = config.models[0].id;
  // The one free-mode switch for every path that charges; balances and grants keep the real ledger.
  const { stores } = deps;
  const charger = config.freeMode ? NO_CHARGE : ledgerCharger(stores.ledger);

  // 0. With tracing on, the request's server span (outermost: it ends when the response does,
  //    whatever answered); the routes hand it down as `ctx.state.trace`.
  if (deps.tracing?.enabled) app.use(traceRequest(deps.tracing));
  // 1. Request id, one log line and the HTTP metrics per request (outermost: sees the final status).
  app.use(requestContext({ logger: deps.logger, metrics: deps.metrics }));
  // 2. CORS: allowed origins' preflights are answered here, before any limit or auth.
  const cors = corsFor(config.server.corsOrigins);
  if (cors) app.use(cors);
  // 3. Errors → OpenAI-shaped bodies, Anthropic-shaped on /v1/messages* (so every later failure is caught); then the HTTP/1.1 rules
  //    Node would enforce with bare answers (an Expect it cannot meet, a missing Host).
  app.use(errorHandler());
  app.use(httpRequirements());
  // 4. Per-IP request budget, before the wallet check and before reading any body.
  app.use(perIpRateLimit(config.limits.perIp, stores.limiters));
  // 5. Nothing answered: 404, or 405/501 from the router (which sets `Allow`), in the OpenAI shape.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.body != null) return;
    if (ctx.status === 404) {
      throw new GatewayError({ status: 404, code: 'not_found', message: `No route for ${ctx.method} ${echoed(ctx.path)}.` });
    }
    if (ctx.status === 405 || ctx.status === 501) throw new MethodNotAllowed();
  });
  // 6. Routes. Open ones (health, metrics, the playground and docs pages) take no wallet; every other route takes `gated`:
  //    wallet header → API key (see http/middleware/auth.ts for who may call what) → per-wallet request
  //    budget → the admission gate (the budgets decided together, http/middleware/admission.ts) → JSON body.
  //    Bodies are read only once the caller is known and admitted, and inside the route, so a
  //    route's own error shape (e.g. `ok`/`tool` on /v1/tools/execute) covers invalid_json.
  const readJson = jsonBody(config.server.bodyLimitBytes);
  const auth = (keyRequired: 'always' | 'unless-free') =>
    authenticate(stores.apiKeys, { freeMode: config.freeMode, keyRequired, logger: deps.logger });
  // One budget per wallet across every route group: a limiter per chain would triple it.
  const walletBudget = perWalletRateLimit(config.limits.perWallet, stores.limiters);
  /** A route group's guard: who calls, then its gate (`admit`, or the chat slot), then the body, then `afterBody`. */
  const guard = (caller: Middleware[], gate: Middleware = admit, ...afterBody: Middleware[]) =>
    compose([...caller, gate, readJson, ...afterBody]);
  const keyUnlessFree: Middleware[] = [requireWallet(), auth('unless-free'), walletBudget];
  const gated = guard(keyUnlessFree);
  const router = new Router();
  registerHealthRoutes(router, { primaryModel, startedAt: deps.startedAt, contributors: deps.health });
  registerMetricsRoutes(router, { registry: deps.metrics.registry, adminToken: config.adminToken });
  registerModelRoutes(router, gated, config.models);
  const orchestrator = new ChatOrchestrator({
    config,
    logger: deps.logger,
    metrics: deps.metrics,
    fleets: deps.upstreams.fleets,
    tools: deps.tools,
    charger,
    keptRounds: new KeptRounds(stores.keptRounds, { ttlMs: config.chat.keptRoundsTtlMs, logger: deps.logger }),
  });
  // Pay on 402 only where credits are spent, after auth (a payment tops up a known wallet, it is no key); /mcp offers none.
  // A payment is never taken for a request its key may not make (http/key-scope.ts).
  const budgetBeforePayment = keyBudgetBeforePayment(stores.ledger);
  const modelBeforePayment = (ctx: Context) => {
    const model = (ctx.request.body as { model?: unknown } | undefined)?.model;
    if (model === undefined || typeof model === 'string') assertModelAllowed(ctx, orchestrator.resolveModel(model).id);
  };
  const toolBeforePayment = (ctx: Context) => {
    const tool = (ctx.request.body as { tool?: unknown } | undefined)?.tool;
    if (typeof tool === 'string' && deps.tools.hasTool(tool)) assertToolAllowed(ctx, tool, deps.tools);
  };
  const payOn402For = (check: (ctx: Context) => void) =>
    deps.x402 && !config.freeMode ? x402Payment(deps.x402, config.server.publicUrl, [check, budgetBeforePayment]) : undefined;
  const payOn402 = payOn402For(toolBeforePayment);
  const chatPayOn402 = payOn402For(modelBeforePayment);
  const paid = chatPayOn402 ? [chatPayOn402] : [];
  // One set of slots: chat completions, responses and messages share the per-wallet and total caps. The
  // wallet's slot is the chat routes' admission gate, taken beside the budgets; the instance's
  // slot only once the body is in (http/middleware/chat-concurrency.ts).
  const chatSlots = chatConcurrency(config.limits, stores.sharedChatSlots);
  const gatedChat = guard(keyUnlessFree, chatSlots.wallet, chatSlots.total, ...paid);
  registerChatRoutes(router, [gatedChat], orchestrator);
  registerResponseRoutes(
    router,
    { create: [gatedChat], read: [gated] },
    { orchestrator, store: stores.responses, tools: deps.tools, ttlMs: config.responses.ttlMs, logger: deps.logger },
  );
  registerMessageRoutes(router, { create: [gatedChat], count: [gated] }, { orchestrator, tools: deps.tools, logger: deps.logger });
  registerToolRoutes(router, gated, { tools: deps.tools, charger, shuttingDown: deps.shuttingDown, payOn402 });
  registerMcpRoutes(router, gated, { tools: deps.tools, charger, shuttingDown: deps.shuttingDown, logger: deps.logger });
  // Key routes have their own guards: minting a key cannot need a key.
  const walletOnly = guard([requireWallet(), walletBudget]);
  const keyOfWallet = guard([requireWallet(), auth('always'), walletBudget]);
  // What key limits may name: the tools and servers configured, and the models (id or alias).
  const known: KnownNames = {
    hasTool: (name) => deps.tools.hasTool(name),
    servers: Object.keys(config.mcpServers),
    modelId: (name) => config.models.find((model) => model.id === name || model.alias === name)?.id,
  };
  registerKeyRoutes(router, { accounts: stores, known, freeMode: config.freeMode, walletOnly, keyOfWallet });
  registerCreditRoutes(router, gated, { ledger: stores.ledger, usage: stores.usage });
  registerDepositRoutes(router, { chains: deps.depositChains, store: stores.deposits, walletOnly, gated });
  registerAdminRoutes(router, {
    adminToken: config.adminToken,
    ledger: stores.ledger,
    usage: stores.usage,
    apiKeys: stores.apiKeys,
    known,
    jsonBody: readJson,
  });
  // The document lists every route group's own entries; a route missing here fails the OpenAPI coverage test.
  const routeDocs = [
    ...healthRouteDocs,
    ...metricsRouteDocs,
    ...modelRouteDocs,
    ...chatRouteDocs,
    ...responseRouteDocs,
    ...messageRouteDocs,
    ...toolRouteDocs,
    ...mcpRouteDocs,
    ...keyRouteDocs,
    ...creditRouteDocs,
    ...depositRouteDocs,
    ...adminRouteDocs,
    ...openApiRouteDocs,
    ...playgroundRouteDocs,
  ];
  const openApiOptions = {
    freeMode: config.freeMode,
    publicUrl: config.server.publicUrl,
    adminToken: config.adminToken !== undefined,
    errorBodiesByPath: [messageErrorBodyByPath],
  };
  registerOpenApiRoutes(router, buildOpenApiDocument(routeDocs, openApiOptions));
  registerPlaygroundRoutes(router, { publicDir: defaultPublicDir() });
  app.use(router.routes());
  app.use(
    // No `throw`: the router then sets the `Allow` header a 405 must carry; step 5 adds the body.
    router.allowedMethods(),
  );

  return app;
}
