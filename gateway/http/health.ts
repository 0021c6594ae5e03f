import type Router from '@koa/router';

/** What one part reports into `/health`. */
export interface HealthReport {
  /** Fields merged into the health body. */
  fields: Record<string, unknown>;
  /** The part works below par (a tool server or upstream down): status `degraded`, HTTP 200. */
  degraded?: boolean;
  /** Without this part the gateway cannot serve at all (the store): status `degraded`, HTTP 503. */
  cannotServe?: boolean;
  /** The instance is stopping (SIGTERM, `server.drainDelayMs`): status `draining`, HTTP 503. */
  draining?: boolean;
}

/** A part of the gateway that reports into `/health` (store, tool servers, upstream models). */
export interface HealthContributor {
  /** Called on every probe: keep it cheap (cache anything that does I/O). */
  health(): HealthReport | Promise<HealthReport>;
}

/**
 * `GET /health`: `{status, uptime, model, ...}` where status is `ok`, `degraded` or `draining`.
 * No auth, no wallet header (load balancers probe it). HTTP 200 unless the gateway cannot serve
 * at all or is stopping, then 503, so a balancer takes it out of rotation only then.
 */
export function registerHealthRoutes(
  router: Router,
  options: { primaryModel: string; startedAt: number; contributors: HealthContributor[] },
): void {
  router.get('/health', async (ctx) => {
    const reports = await Promise.all(options.contributors.map((contributor) => contributor.health()));
    const fields: Record<string, unknown> = {};
    for (const report of reports) Object.assign(fields, report.fields);
    const cannotServe = reports.some((r) => r.cannotServe === true);
    const degraded = cannotServe || reports.some((r) => r.degraded === true);
    const draining = reports.some((r) => r.draining === true);
    ctx.status = cannotServe || draining ? 503 : 200;
    ctx.body = {
      status: draining ? 'draining' : degraded ? 'degraded' : 'ok',
      uptime: Math.round((Date.now() - options.startedAt) / 10) / 100,
      model: options.primaryModel,
      ...fields,
    };
  });
}
