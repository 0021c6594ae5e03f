import type Router from '@koa/router';
import type { HealthContributor, HealthReport } from '../health.js';

/**
 * `GET /health`: `{status, uptime, model, ...}` where status is `ok` or `degraded`. No auth, no
 * wallet header (load balancers probe it). HTTP 200 unless the gateway cannot serve at all, then
 * 503, so a balancer takes it out of rotation only when it is truly useless.
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
    ctx.status = cannotServe ? 503 : 200;
    ctx.body = {
      status: degraded ? 'degraded' : 'ok',
      uptime: Math.round((Date.now() - options.startedAt) / 10) / 100,
      model: options.primaryModel,
      ...fields,
    };
  });
}
