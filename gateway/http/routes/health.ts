import type Router from '@koa/router';
import { z } from 'zod';
import type { HealthContributor, HealthReport } from '../../health.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';

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

/** The fields every health body has; each contributor adds its own (store, tool servers, upstreams). */
export const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded', 'draining']),
    uptime: z.number().nonnegative().meta({ description: 'Seconds since start' }),
    model: z.string().meta({ description: 'Canonical id of the primary model' }),
    tracing: z
      .object({
        enabled: z.boolean(),
        exporter: z.string().optional().meta({ description: 'The OTLP collector, as an origin' }),
        protocol: z.enum(['http/protobuf', 'http/json']).optional(),
        exported_spans: z.number().int().nonnegative().optional(),
        dropped_spans: z.number().int().nonnegative().optional().meta({ description: 'Queue full, or the export failed' }),
        last_failure: z
          .object({ at: z.string(), message: z.string() })
          .optional()
          .meta({ description: 'The last failed export; URLs cut to their origin' }),
      })
      .meta({ description: 'OpenTelemetry traces (docs/tracing.md)' }),
  })
  .loose();

export const healthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/health',
    tag: 'Operations',
    summary: 'Model status and uptime',
    description:
      'HTTP 200 unless the gateway cannot serve at all (its store fails): then 503 with the same body, status `degraded`; ' +
      'or it is stopping (SIGTERM, for server.drainDelayMs): 503, status `draining`.',
    access: 'open',
    response: { description: "Status `ok`, `degraded` or `draining`, plus each part's report", content: json(healthSchema) },
    errors: [503],
  },
];
