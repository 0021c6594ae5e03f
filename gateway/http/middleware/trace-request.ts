import type { Context, Next } from 'koa';
import {
  HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE,
  HTTP_ROUTE,
  NETWORK_PROTOCOL_VERSION,
  SWITCHYARD_WALLET_HMAC,
  URL_SCHEME,
} from '../../../telemetry/semconv.js';
import { NO_SPAN, type TraceSpan, type Tracing } from '../../tracing/trace-span.js';
import { routeTemplateOf, UNMATCHED_ROUTE } from './request-context.js';

/**
 * The HTTP server span of each request (installed only with tracing on), continuing the client's
 * trace from its `traceparent`/`tracestate` (parent-based sampling keeps its sampled flag). Named
 * `{method} {route template}` once the route is known; no path, query, client address or
 * header goes on it (a path can hold a response id). `/health` and `/metrics` are not traced. It ends when the response does (Koa writes
 * the body after the chain returns; a stream ends later still), and is left on `ctx.state.trace`
 * for the routes to hand down.
 *
 * @example
 *   if (tracing.enabled) app.use(traceRequest(tracing))
 */
export function traceRequest(tracing: Tracing) {
  return async function traceHttpRequest(ctx: Context, next: Next): Promise<void> {
    // A load balancer's probes and the scraper's pulls would bury the traces worth reading.
    if (UNTRACED.has(ctx.path)) return next();
    const span = tracing.serverSpan(ctx.method, ctx.headers, {
      [HTTP_REQUEST_METHOD]: ctx.method,
      [URL_SCHEME]: ctx.protocol,
      [NETWORK_PROTOCOL_VERSION]: ctx.req.httpVersion,
    });
    ctx.state.trace = span;
    try {
      await next();
    } finally {
      if (ctx.res.closed) finish(ctx, span, tracing);
      else ctx.res.once('close', () => finish(ctx, span, tracing));
    }
  };
}

/** Routes with no span: `/health` and `/metrics` are polled every few seconds. */
const UNTRACED = new Set(['/health', '/metrics']);

function finish(ctx: Context, span: TraceSpan, tracing: Tracing): void {
  const route = routeTemplateOf(ctx);
  const status = ctx.status;
  const wallet = ctx.state.wallet;
  if (route !== UNMATCHED_ROUTE) span.rename(`${ctx.method} ${route}`);
  span.set({
    ...(route !== UNMATCHED_ROUTE ? { [HTTP_ROUTE]: route } : {}),
    [HTTP_RESPONSE_STATUS_CODE]: status,
    // Only a keyed hash, and only with TRACE_WALLET_HMAC_SECRET set: the address never.
    ...(wallet ? { [SWITCHYARD_WALLET_HMAC]: tracing.walletTag(wallet) } : {}),
  });
  // A server span counts a 5xx as its error; a 4xx is the client's.
  if (status >= 500) span.fail(String(status), ctx.state.error?.code);
  span.end();
}

/** The request's span (NO_SPAN with tracing off), to hand down to the work it starts. */
export function traceOf(ctx: Context): TraceSpan {
  return ctx.state.trace ?? NO_SPAN;
}
