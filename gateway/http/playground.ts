/**
 * The pages a person opens in a browser: `GET /` (the playground), `GET /docs` (the OpenAPI
 * viewer) and `GET /static/:file` (their scripts and styles). `npm run build` bundles them from
 * playground/ into dist/public/; nothing comes from a CDN. No wallet header or key is needed.
 * Every page has a strict Content-Security-Policy: only this origin's scripts, no inline script.
 *
 * @example
 *   registerPlaygroundRoutes(router, { publicDir: defaultPublicDir() })
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { GatewayError, NotFound } from '../errors.js';
import type { RouteDoc } from './route-doc.js';

/** The playground: its own scripts, styles and API calls only. */
export const PLAYGROUND_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The viewer (Swagger UI) sets `style` attributes while it renders (collapsing sections, the
 * model views): inline styles are all it needs beyond the playground's policy. Its scripts still
 * come only from this origin, and it fetches only `/openapi.json` and the routes it tries out.
 */
export const DOCS_CSP = PLAYGROUND_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");

/** Built asset names: a bundler's output, never a path. */
const ASSET_NAME = /^[a-z0-9][a-z0-9-]*\.(js|css)$/;
const ASSET_TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** dist/public under the project root (the nearest folder up with a package.json), from source or from dist/. */
export function defaultPublicDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('No package.json above the gateway: cannot find dist/public.');
    dir = parent;
  }
  return join(dir, 'dist', 'public');
}

export function registerPlaygroundRoutes(router: Router, options: { publicDir: string }): void {
  const { publicDir } = options;
  const page = (file: string, csp: string) => async (ctx: Context) => {
    ctx.body = await readBuilt(publicDir, file);
    ctx.type = 'text/html; charset=utf-8';
    securityHeaders(ctx, csp);
  };
  router.get('/', page('index.html', PLAYGROUND_CSP));
  router.get('/docs', page('docs.html', DOCS_CSP));
  router.get('/static/:file', async (ctx) => {
    const file = ctx.params.file;
    const match = ASSET_NAME.exec(file);
    if (!match) throw new NotFound(`No static file "${file}".`, 'not_found', 'file');
    ctx.body = await readBuilt(publicDir, file);
    ctx.type = ASSET_TYPES[match[1]];
    securityHeaders(ctx, PLAYGROUND_CSP);
  });
}

function securityHeaders(ctx: Context, csp: string): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // Rebuilt files keep their names: revalidate every time (they are small, and local).
  ctx.set('Cache-Control', 'no-cache');
}

async function readBuilt(publicDir: string, file: string): Promise<Buffer> {
  try {
    return await readFile(join(publicDir, file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (file.endsWith('.html')) {
      throw new GatewayError({ status: 503, code: 'playground_not_built', message: 'The playground is not built: run npm run build.', cause: err });
    }
    throw new NotFound(`No static file "${file}".`, 'not_found', 'file');
  }
}

const html = { 'text/html': undefined };

export const playgroundRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/',
    tag: 'Documentation',
    summary: 'The playground page',
    description: 'Chat, tool explorer, wallet and keys in the browser.',
    access: 'open',
    response: { description: 'The page', content: html },
    errors: [503],
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'Documentation',
    summary: 'This document, rendered',
    access: 'open',
    response: { description: 'The viewer page', content: html },
    errors: [503],
  },
  {
    method: 'get',
    path: '/static/:file',
    tag: 'Documentation',
    summary: 'A script or style sheet of the pages',
    access: 'open',
    pathParams: z.object({ file: z.string().regex(ASSET_NAME).meta({ description: 'e.g. app.js' }) }),
    response: { description: 'The file', content: { 'text/javascript': undefined, 'text/css': undefined } },
    errors: [404],
  },
];
