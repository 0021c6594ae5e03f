import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ModelConfig } from '../config.js';

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
