/**
 * The chat concurrency cap on a tiny Koa app: the same error handler as the gateway, a stand-in
 * wallet step, the body read between the wallet's slot and the instance's, and a handler that
 * holds each request until the test releases it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import { errorHandler } from '../../../../gateway/http/middleware/error-handler.js';
import { chatConcurrency, type SharedWalletSlots } from '../../../../gateway/http/middleware/chat-concurrency.js';

const held = new Map<string, { release(): void; stream?: PassThrough }>();
let server: Server;
let url: string;

before(async () => {
  const app = new Koa();
  app.use(errorHandler());
  app.use(async (ctx, next) => {
    const wallet = ctx.get('x-wallet-address');
    if (wallet) ctx.state.wallet = wallet;
    await next();
  });
  const slots = chatConcurrency({ chatConcurrencyPerWallet: 2, chatConcurrencyTotal: 3 });
  app.use(slots.wallet);
  // The body is read between the two slots, as in the gateway.
  app.use(async (ctx, next) => {
    await new Promise((resolve) => ctx.req.on('end', resolve).resume());
    await next();
  });
  app.use(slots.total);
  app.use(async (ctx) => {
    const id = ctx.get('x-test-id');
    if (ctx.query.stream === '1') {
      // A streamed answer: the handler returns at once, the stream ends when the test says so.
      const stream = new PassThrough();
      held.set(id, { release: () => stream.end('data: [DONE]\n\n'), stream });
      ctx.type = 'text/event-stream';
      ctx.body = stream;
      stream.write('data: {}\n\n');
      return;
    }
    await new Promise<void>((resolve) => held.set(id, { release: resolve }));
    ctx.body = { ok: true, id };
  });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function waitUntilHeld(id: string): Promise<void> {
  for (let i = 0; i < 400 && !held.has(id); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(held.has(id), `${id} reached the handler`);
}

function send(id: string, wallet: string, query = ''): Promise<Response> {
  return fetch(`${url}/chat${query}`, { headers: { 'x-wallet-address': wallet, 'x-test-id': id } });
}

async function expectCapped(res: Response, message: string): Promise<void> {
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.deepEqual(await res.json(), { error: { message, type: 'rate_limit_error', code: 'rate_limited', param: null } });
}

const PER_WALLET = 'Too many chat requests running for this wallet (limit 2); retry when one finishes.';
const TOTAL = 'The gateway is running as many chat requests as it can; retry shortly.';

test('per-wallet and total caps on running chat requests; a finished request frees its slot', async () => {
  const a1 = send('a1', 'A');
  const a2 = send('a2', 'A');
  await waitUntilHeld('a1');
  await waitUntilHeld('a2');
  await expectCapped(await send('a3', 'A'), PER_WALLET);

  const b1 = send('b1', 'B');
  await waitUntilHeld('b1');
  await expectCapped(await send('c1', 'C'), TOTAL); // 3 running in all

  held.get('a1')!.release();
  assert.deepEqual(await (await a1).json(), { ok: true, id: 'a1' });
  const a4 = send('a4', 'A'); // A has one slot again, and the total has room
  await waitUntilHeld('a4');

  for (const id of ['a2', 'b1', 'a4']) held.get(id)!.release();
  assert.equal((await a2).status, 200);
  assert.equal((await b1).status, 200);
  assert.equal((await a4).status, 200);
  held.clear();
});

test('a streamed answer holds its slot until the stream ends', async () => {
  const s1 = await send('s1', 'S', '?stream=1');
  const s2 = await send('s2', 'S', '?stream=1');
  assert.equal(s1.status, 200);
  assert.equal(s2.status, 200);
  await expectCapped(await send('s3', 'S'), PER_WALLET);

  held.get('s1')!.release();
  assert.equal(await s1.text(), 'data: {}\n\ndata: [DONE]\n\n');
  // The slot is freed when the response closes, just after the client read the end.
  let next: Response | undefined;
  for (let i = 0; i < 100; i++) {
    next = await send(`s4-${i}`, 'S', '?stream=1');
    if (next.status === 200) break;
    await next.arrayBuffer();
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(next?.status, 200);
  for (const [, h] of held) h.release();
  await s2.text();
  await next!.text();
  held.clear();
});

test("a chat whose body is still arriving holds its wallet's slot, not one of the instance's", async () => {
  // Headers and half a body, then nothing: the request waits in the body read.
  const slow = request(`${url}/chat`, { method: 'POST', headers: { 'x-wallet-address': 'W', 'x-test-id': 'w1', 'content-length': '10' } });
  slow.write('{"a":');
  await new Promise((r) => setTimeout(r, 100));
  // All three of the instance's slots are still free for other wallets…
  const others = ['x1', 'y1', 'z1'].map((id) => send(id, id[0].toUpperCase()));
  for (const id of ['x1', 'y1', 'z1']) await waitUntilHeld(id);
  await expectCapped(await send('v1', 'V'), TOTAL);
  // …while the slow one holds one of its wallet's two.
  held.get('x1')!.release();
  const second = send('w2', 'W');
  await waitUntilHeld('w2');
  await expectCapped(await send('w3', 'W'), PER_WALLET);
  for (const id of ['y1', 'z1', 'w2']) held.get(id)!.release();
  for (const res of [...(await Promise.all(others)), await second]) assert.equal(res.status, 200);
  // The rest of the body: now it takes an instance slot and runs.
  const answered = new Promise<number>((resolve) => slow.on('response', (res) => resolve(res.resume().statusCode!)));
  slow.end('1}   ');
  await waitUntilHeld('w1');
  held.get('w1')!.release();
  assert.equal(await answered, 200);
  held.clear();
});

test("a JSON answer's slots are given back once it is written, not before (a shared store's release then never delays it)", async () => {
  let response: ServerResponse | undefined;
  const writtenAtRelease: boolean[] = [];
  const shared: SharedWalletSlots = {
    acquire: async () => () => void writtenAtRelease.push(response!.writableFinished),
  };
  const app = new Koa();
  app.use(errorHandler());
  app.use(async (ctx, next) => {
    ctx.state.wallet = '0x' + 'ab'.repeat(20);
    await next();
  });
  const slots = chatConcurrency({ chatConcurrencyPerWallet: 1, chatConcurrencyTotal: 1 }, shared);
  app.use(slots.wallet);
  app.use(slots.total);
  app.use(async (ctx) => {
    response = ctx.res;
    if (ctx.query.fail === '1') throw new Error('boom');
    ctx.body = { ok: true };
  });
  const json = createServer(app.callback());
  await new Promise<void>((resolve) => json.listen(0, '127.0.0.1', resolve));
  try {
    const at = `http://127.0.0.1:${(json.address() as AddressInfo).port}/`;
    for (let i = 0; i < 3; i++) assert.equal((await fetch(at, { method: 'POST' })).status, 200, 'the one slot was given back each time');
    const failed = await fetch(`${at}?fail=1`, { method: 'POST' });
    assert.equal(failed.status, 500);
    assert.equal((await fetch(at, { method: 'POST' })).status, 200, 'a failed request gives its slot back too');
    assert.deepEqual(writtenAtRelease, [true, true, true, true, true]);
  } finally {
    await new Promise<void>((resolve) => json.close(() => resolve()));
  }
});
