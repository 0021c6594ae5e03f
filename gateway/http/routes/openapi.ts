/**
 * `GET /openapi.json`: the document openapi/openapi-document.ts builds at start, served as it is.
 */
import type Router from '@koa/router';
import type { JsonObject } from '../openapi/openapi-document.js';
import type { RouteDoc } from '../openapi/route-doc.js';

/**
 * Register `GET /openapi.json` (no wallet, no key).
 *
 * @example
 *   registerOpenApiRoutes(router, buildOpenApiDocument(routeDocs, options))
 */
export function registerOpenApiRoutes(router: Router, document: JsonObject): void {
  // Serialized once: the document never changes after start.
  const body = JSON.stringify(document);
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
}

export const openApiRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'Documentation',
    summary: 'This OpenAPI 3.1 document',
    access: 'open',
    response: { description: 'The OpenAPI document', content: { 'application/json': undefined } },
  },
];
