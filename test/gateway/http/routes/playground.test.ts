import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import { errorHandler } from '../../../../gateway/http/middleware/error-handler.js';
import { PAGE_CSP, registerPlaygroundRoutes } from '../../../../gateway/http/routes/playground.js';
import { startTestGateway, type TestGateway } from '../../../helpers/gateway.js';

// These read what `npm run build` wrote to dist/public (npm test builds first).
describe('the built pages', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway({ config: (json) => void (json.freeMode = false) });
  });
  after(() => gateway?.stop());

  test('/ and /docs need no wallet or key and carry the strict CSP', async () => {
    assert.equal(
      PAGE_CSP,
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    for (const [path, script] of [
      ['/', 'static/app.js'],
      ['/docs', 'static/docs.js'],
    ]) {
      const res = await fetch(`${gateway.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('content-security-policy'), PAGE_CSP);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const html = await res.text();
      assert.ok(html.includes(`<script type="module" src="${script}"></script>`), `${path} loads ${script}`);
      assert.doesNotMatch(html, /<script>|<script type="module">|\son[a-z]+="/, 'no inline script or handler');
    }
  });

  test('static files: JS and CSS by name, revalidated with an ETag', async () => {
    const js = await fetch(`${gateway.url}/static/app.js`);
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'no-cache');
    assert.ok((await js.text()).length > 1000);
    const etag = js.headers.get('etag');
    assert.match(etag ?? '', /^W\/"[0-9a-f]+-[0-9a-f]+"$/);
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request, which forbids a 304.
    const again = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      get(`${gateway.url}/static/app.js`, { headers: { 'if-none-match': etag as string } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      }).on('error', reject);
    });
    assert.deepEqual(again, { status: 304, body: '' });
    const css = await fetch(`${gateway.url}/static/docs.css`);
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  });

  test('anything but a built script or style sheet is 404 in the OpenAI shape', async () => {
    for (const name of ['missing.js', 'index.html', '..%2Fpackage.json', '..%2F..%2Fpackage.json', 'app.js.map']) {
      const res = await fetch(`${gateway.url}/static/${name}`);
      assert.equal(res.status, 404, name);
      const body = (await res.json()) as { error: Record<string, unknown> };
      assert.equal(body.error.code, 'not_found', name);
      assert.equal(body.error.param, 'file', name);
    }
  });
});

describe('before the build', () => {
  let server: Server;
  let url: string;
  const empty = mkdtempSync(join(tmpdir(), 'switchyard-public-'));
  before(async () => {
    const app = new Koa();
    app.use(errorHandler());
    const router = new Router();
    registerPlaygroundRoutes(router, { publicDir: empty });
    app.use(router.routes());
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(empty, { recursive: true, force: true });
  });

  test('the pages answer 503 playground_not_built; a missing script is 404', async () => {
    const page = await fetch(`${url}/`);
    assert.equal(page.status, 503);
    const message = 'The playground is not built: run npm run build.';
    assert.deepEqual(await page.json(), { error: { message, type: 'server_error', code: 'playground_not_built', param: null } });
    assert.equal((await fetch(`${url}/static/app.js`)).status, 404);
  });
});
