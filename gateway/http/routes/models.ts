import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { ModelConfig } from '../../config.js';
import { json, type RouteDoc } from '../openapi/route-doc.js';

/** `GET /v1/models`: the configured models in the OpenAI list format. */
export function registerModelRoutes(router: Router, guard: Middleware, models: ModelConfig[]): void {
  // The list never changes after start, so build it once.
  const body = {
    object: 'list',
    data: models.map((m) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy, aliases: [m.alias] })),
  };
  router.get('/v1/models', guard, (ctx) => {
    ctx.body = body;
  });
}

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      id: z.string().meta({ description: 'Canonical model id' }),
      object: z.literal('model'),
      created: z.number().int().meta({ description: 'Unix seconds' }),
      owned_by: z.string(),
      aliases: z.array(z.string()),
    }),
  ),
});

export const modelRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/models',
    tag: 'Models',
    summary: 'List models',
    access: 'gated',
    response: { description: 'The configured models, with their aliases', content: json(modelListSchema) },
  },
];
