/**
 * The pages a person opens in a browser: `GET /` (the playground), `GET /docs` (the OpenAPI
 * viewer) and `GET /static/:file` (their scripts and styles). `npm run build` bundles them from
 * playground/ into dist/public/; nothing comes from a CDN. No wallet header or key is needed.
 * Every page has a strict Content-Security-Policy: only this origin's scripts and styles, nothing inline.
 *
 * @example
 *   registerPlaygroundRoutes(router, { publicDir: defaultPublicDir() })
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { echoed, GatewayError, NotFound } from '../../errors.js';
import type { RouteDoc } from '../openapi/route-doc.js';

/**
 * Both pages: their own scripts, styles and API calls only. The viewer (Swagger UI) needs nothing
 * more: the browser tests fail on any CSP violation, on either page.
 */
export const PAGE_CSP = [
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
  const page = (file: string) => async (ctx: Context) => {
    await sendBuilt(ctx, publicDir, file, 'text/html; charset=utf-8');
  };
  router.get('/', page('index.html'));
  router.get('/docs', page('docs.html'));
  router.get('/static/:file', async (ctx) => {
    const file = ctx.params.file;
    const match = ASSET_NAME.exec(file);
    if (!match) throw new NotFound(`No static file "${echoed(file)}".`, 'not_found', 'file');
    await sendBuilt(ctx, publicDir, file, ASSET_TYPES[match[1]]);
  });
}

/** Send a built file, or 304 when the browser's copy is current (the viewer's bundle is 1.5 MB). */
async function sendBuilt(ctx: Context, publicDir: string, file: string, type: string): Promise<void> {
  const info = await statBuilt(publicDir, file);
  securityHeaders(ctx);
  ctx.type = type;
  ctx.etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = await readFile(join(publicDir, file));
}

function securityHeaders(ctx: Context): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // A rebuild changes files in place under the same names: revalidate every time (ETag).
  ctx.set('Cache-Control', 'no-cache');
}

async function statBuilt(publicDir: string, file: string): Promise<{ size: number; mtimeMs: number }> {
  try {
    return await stat(join(publicDir, file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (file.endsWith('.html')) {
      const message = 'The playground is not built: run npm run build.';
      throw new GatewayError({ status: 503, type: 'server_error', code: 'playground_not_built', message, cause: err });
    }
    throw new NotFound(`No static file "${echoed(file)}".`, 'not_found', 'file');
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
