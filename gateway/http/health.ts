import type Router from '@koa/router';

/** A part of the gateway that reports into `/health` (store, tool servers, upstream models). */
export interface HealthContributor {
  /** Fields merged into the health body; `degraded: true` turns the status to `degraded`. */
  health(): { fields: Record<string, unknown>; degraded?: boolean; unavailable?: boolean };
}

/**
 * `GET /health`: `{status, uptime, model, ...}`. No auth, no wallet header (load balancers probe
 * it). HTTP 200 unless the gateway cannot serve at all.
 */
export function registerHealthRoutes(
  router: Router,
  options: { primaryModel: string; startedAt: number; contributors: HealthContributor[] },
): void {
  router.get('/health', (ctx) => {
    let degraded = false;
    let unavailable = false;
    const fields: Record<string, unknown> = {};
    for (const contributor of options.contributors) {
      const report = contributor.health();
      Object.assign(fields, report.fields);
      degraded ||= report.degraded === true;
      unavailable ||= report.unavailable === true;
    }
    ctx.status = unavailable ? 503 : 200;
    ctx.body = {
      status: unavailable ? 'unavailable' : degraded ? 'degraded' : 'ok',
      uptime: Math.round((Date.now() - options.startedAt) / 10) / 100,
      model: options.primaryModel,
      ...fields,
    };
  });
}
