import type Router from '@koa/router';
import type { Registry } from 'prom-client';
import { requireAdmin } from '../middleware/admin-auth.js';
import type { RouteDoc } from '../openapi/route-doc.js';

/**
 * `GET /metrics`: Prometheus text exposition of the gateway's registry. No wallet header; when
 * `ADMIN_TOKEN` is set it requires `Authorization: Bearer <ADMIN_TOKEN>`.
 *
 * @example
 *   registerMetricsRoutes(router, { registry: metrics.registry, adminToken: config.adminToken })
 */
export function registerMetricsRoutes(router: Router, options: { registry: Registry; adminToken: string | undefined }): void {
  router.get('/metrics', requireAdmin(options.adminToken, 'open'), async (ctx) => {
    ctx.type = options.registry.contentType;
    ctx.body = await options.registry.metrics();
  });
}

export const metricsRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    description: 'Needs `Authorization: Bearer <ADMIN_TOKEN>` when ADMIN_TOKEN is set; open otherwise.',
    access: 'admin-if-set',
    response: { description: 'Prometheus text exposition', content: { 'text/plain': undefined } },
  },
];
