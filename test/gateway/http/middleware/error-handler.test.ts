/**
 * The error handler's mapping of errors thrown by the HTTP stack (http-errors, co-body), on a
 * bare Koa app served on 127.0.0.1: only a body that failed to parse is `invalid_json`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import { errorHandler } from '../../../../gateway/http/middleware/error-handler.js';
import { jsonBody } from '../../../../gateway/http/middleware/json-body.js';

let server: Server;
let url: string;
before(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(errorHandler());
  app.use(async (ctx, next) => {
    if (ctx.path === '/invalid-widget') ctx.throw(400, 'invalid widget size');
    if (ctx.path === '/teapot') ctx.throw(418, "I'm a teapot");
    if (ctx.path === '/hidden') ctx.throw(500, 'secret detail');
    if (ctx.path === '/unexposed') throw Object.assign(new Error('internal invalid state'), { status: 400 });
    await next();
  });
  app.use(jsonBody(1024));
  app.use((ctx) => void (ctx.body = { ok: true }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function errorOf(path: string, body?: string): Promise<{ status: number; error: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, error: ((await res.json()) as { error: Record<string, unknown> }).error };
}

test('a body that does not parse is invalid_json; a 400 whose message says "invalid" is not', async () => {
  // A `__proto__` key is refused by the parser (@hapi/bourne) as a SyntaxError too.
  for (const body of ['{"a":', '"scalar"', "{'single': 1}", '{"__proto__":{"admin":true}}']) {
    const { status, error } = await errorOf('/', body);
    assert.equal(status, 400);
    assert.equal(error.code, 'invalid_json', body);
  }
  assert.deepEqual(await errorOf('/invalid-widget'), {
    status: 400,
    error: { message: 'invalid widget size', type: 'invalid_request_error', code: 'invalid_request', param: null },
  });
});

test('other client errors of the HTTP stack keep their status and words; server errors stay generic', async () => {
  const teapot = await errorOf('/teapot');
  assert.equal(teapot.status, 418);
  assert.equal(teapot.error.code, 'invalid_request');
  assert.equal(teapot.error.message, "I'm a teapot");
  for (const path of ['/hidden', '/unexposed']) {
    const hidden = await errorOf(path);
    assert.equal(hidden.status, 500, path);
    assert.equal(hidden.error.code, 'internal_error');
    assert.doesNotMatch(String(hidden.error.message), /secret|invalid state/);
  }
});
