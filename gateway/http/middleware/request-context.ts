import type { Context, Next } from 'koa';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../metrics.js';
import type { GatewayError } from '../../errors.js';
import { requestIdFrom } from './request-id.js';

/** What the request log line and the metrics say about a route nobody declared (404 scans). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route *template* that served a request (`/v1/models`, `/v1/keys/:id`), never the raw path,
 * so label sets stay bounded whatever paths clients send.
 */
export function routeTemplateOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  return matched === undefined ? UNMATCHED_ROUTE : String(matched);
}

/**
 * Outermost middleware: gives each request its id (`ctx.state.requestId`, echoed in
 * `x-request-id`), then writes one JSON log line and the HTTP metrics once the response is done.
 * A 5xx's internal detail (stored by the error handler in `ctx.state.error`) goes only here.
 *
 * @example
 *   app.use(requestContext({ logger, metrics }))
 */
export function requestContext(deps: { logger: Logger; metrics: Metrics }) {
  const { metrics } = deps;
  // The request line holds only the fields built below (no header, body or credential), so it
  // skips pino's structured redaction, whose `*.` paths re-parse every path on every value of
  // every line (~5 KB of garbage per request); the written line is still scrubbed of secrets.
  const logger = deps.logger.child({}, { redact: [] });
  const series = new SeriesCache(metrics);
  return async function trackRequest(ctx: Context, next: Next): Promise<void> {
    const startedAt = process.hrtime.bigint();
    const requestId = requestIdFrom(ctx.get('x-request-id') || undefined);
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);

    try {
      await next();
    } finally {
      // A streamed body (SSE) is still being written when the middleware chain returns: record
      // when the response really ends, so duration and status cover the whole stream.
      if (isStream(ctx.body) && !ctx.res.writableEnded) ctx.res.once('close', () => record(ctx, startedAt, requestId, logger, series));
      else record(ctx, startedAt, requestId, logger, series);
    }
  };
}

function record(ctx: Context, startedAt: bigint, requestId: string, logger: Logger, series: SeriesCache): void {
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const route = routeTemplateOf(ctx);
  const status = ctx.status;
  const method = ctx.method;
  const handles = series.of(method, route, status);
  handles.requests.inc();
  handles.duration.observe(seconds);
  const error = ctx.state.error;
  const line = {
    reqId: requestId,
    method,
    route,
    path: ctx.path,
    status,
    ms: Math.round(seconds * 10_000) / 10,
    wallet: ctx.state.wallet ?? null,
    // Left out of the line when undefined (every chat of a model with one deployment, every other route).
    deployments: ctx.state.deployments,
  };
  if (status >= 500) logger.error(error ? { ...line, ...errorFields(error, status) } : line, 'request');
  else logger.info(error ? { ...line, ...errorFields(error, status) } : line, 'request');
}

/**
 * The HTTP metrics' child handles per (method, route template, status), made once: prom-client
 * otherwise checks and copies the label object on every request. Label sets are bounded (Node
 * accepts a fixed list of methods; routes are templates), so the cache is too.
 */
class SeriesCache {
  private readonly handles = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();

  constructor(private readonly metrics: Metrics) {}

  of(method: string, route: string, status: number): { requests: { inc(): void }; duration: { observe(value: number): void } } {
    const key = `${method} ${status} ${route}`;
    let handles = this.handles.get(key);
    if (handles === undefined) {
      const labels = { method, route, status: String(status) };
      handles = { requests: this.metrics.httpRequests.labels(labels), duration: this.metrics.httpDuration.labels(labels) };
      this.handles.set(key, handles);
    }
    return handles;
  }
}

function errorFields(error: GatewayError | undefined, status: number): Record<string, unknown> {
  if (!error) return {};
  // Not `err`: pino's error serializer would add an empty stack and a type to this plain object.
  if (status >= 500) return { error: { code: error.code, message: error.message, details: error.details } };
  return { code: error.code };
}

function isStream(body: unknown): boolean {
  return typeof body === 'object' && body !== null && typeof (body as { pipe?: unknown }).pipe === 'function';
}
