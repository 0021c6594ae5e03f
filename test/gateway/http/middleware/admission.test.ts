/**
 * A request's admission checks run side by side and are decided at one gate (http/middleware/admission.ts),
 * on a tiny Koa app with the gateway's error handler, rate limits, key check and chat slots. The
 * wallet's budget and chat slot are stand-ins the test answers by hand, so it sees what is in
 * flight at once; the IP's budget is the real memory limiter.
 */
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { errorHandler } from '../../../../gateway/http/middleware/error-handler.js';
import { perIpRateLimit, rateLimit } from '../../../../gateway/http/middleware/rate-limit.js';
import { chatConcurrency, type SharedWalletSlots } from '../../../../gateway/http/middleware/chat-concurrency.js';
import { admit } from '../../../../gateway/http/middleware/admission.js';
import { authenticate } from '../../../../gateway/http/middleware/auth.js';
import { requireWallet } from '../../../../gateway/http/middleware/wallet.js';
import { ApiKeys } from '../../../../gateway/keys/api-keys.js';
import { createLogger } from '../../../../gateway/logger.js';
import type { KeyStore } from '../../../../gateway/keys/key-store.js';

const WALLET = '0x' + 'ad'.repeat(20);
const UNKNOWN_KEY = 'sy_' + 'A'.repeat(43);

/** A hand-answered check: each call waits until the test answers it. */
class ManualCheck {
  readonly calls: Array<{ answer(ok: boolean): void }> = [];
  waiting(): number {
    return this.calls.length;
  }
}

/** The wallet's budget: a limiter whose verdicts the test gives. */
const walletBudget = new ManualCheck();
const manualLimiter = {
  consume: () =>
    new Promise((resolve, reject) => {
      walletBudget.calls.push({ answer: (ok) => (ok ? resolve(new RateLimiterRes()) : reject(new RateLimiterRes(0, 30_000))) });
    }),
} as unknown as RateLimiterAbstract;

/** The wallet's chat slot: shared slots whose grants the test gives; releases are counted. */
const slots = new ManualCheck();
let released = 0;
const manualSlots: SharedWalletSlots = {
  acquire: () =>
    new Promise((resolve) => {
      slots.calls.push({ answer: (ok) => resolve(ok ? () => void released++ : undefined) });
    }),
};

/** Key store reads, to see whether an unknown key reached the store. */
let storeReads = 0;
const keyStore: KeyStore = {
  get: async () => {
    storeReads++;
    return undefined;
  },
  insert: async () => {},
  touch: async () => {},
  list: async () => [],
  remove: async () => undefined,
};

let server: Server;
let url: string;
let ipLimiter: RateLimiterMemory;

before(async () => {
  const app = new Koa();
  app.use(errorHandler());
  ipLimiter = new RateLimiterMemory({ points: 1_000, duration: 60 });
  app.use(perIpRateLimit({ points: 1_000, durationSec: 60 }, () => ipLimiter));
  const budget = rateLimit({ subject: 'wallet', points: 5, durationSec: 60, keyOf: (ctx) => ctx.state.wallet, limiter: manualLimiter });
  const auth = authenticate(new ApiKeys(keyStore), { freeMode: true, keyRequired: 'unless-free', logger: createLogger('silent') });
  const chatSlots = chatConcurrency({ chatConcurrencyPerWallet: 4, chatConcurrencyTotal: 100 }, manualSlots);
  const answered: Middleware = (ctx) => {
    ctx.body = { ok: true };
  };
  const chatSteps: Middleware[] = [requireWallet(), auth, budget, chatSlots.wallet, chatSlots.total, answered];
  const otherSteps: Middleware[] = [requireWallet(), auth, budget, admit, answered];
  const router = new Map<string, Middleware>([
    ['/chat', compose(chatSteps)],
    ['/other', compose(otherSteps)],
  ]);
  app.use((ctx, next) => (router.get(ctx.path) ?? next)(ctx, next));
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  walletBudget.calls.length = 0;
  slots.calls.length = 0;
  released = 0;
  storeReads = 0;
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(condition(), what);
}

/** A POST naming a wallet: the requests whose IP budget is decided at the gate (GETs decide it first). */
function send(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'x-wallet-address': WALLET, ...headers } });
}

/** A chat whose wallet budget and slot are both in flight before either is answered; then the slot answers, then the budget. */
async function chatAnswered(verdicts: { budget: boolean; slot: boolean }): Promise<Response> {
  const res = send('/chat');
  await until(() => walletBudget.waiting() === 1 && slots.waiting() === 1, 'the budget and the slot are asked together');
  slots.calls[0].answer(verdicts.slot);
  walletBudget.calls[0].answer(verdicts.budget);
  return res;
}

test("a chat's budget and slot are both in flight before either is answered, and the chat runs once both admit it", async () => {
  assert.equal((await chatAnswered({ budget: true, slot: true })).status, 200);
  assert.equal(released, 1, 'the slot is given back when the chat ends');
});

test('a refused budget answers 429 for the wallet, and the slot taken beside it is given back', async () => {
  const refused = await chatAnswered({ budget: false, slot: true });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '30');
  assert.equal(
    ((await refused.json()) as { error: { message: string } }).error.message,
    'Rate limit exceeded for this wallet: 5 requests per 60 s.',
  );
  await until(() => released === 1, 'the slot is released');
});

test('the budget is decided before the slot: a refused budget outranks a full slot', async () => {
  const refused = await chatAnswered({ budget: false, slot: false });
  assert.equal(refused.status, 429);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /for this wallet: 5 requests/);
});

test('over the IP budget: 429 for the IP, though the wallet admits; an unknown key never reaches the key store', async () => {
  // Within the IP's budget an unknown key is looked up (and refused)…
  const first = send('/other', { authorization: `Bearer ${UNKNOWN_KEY}` });
  assert.equal((await first).status, 401);
  assert.equal(storeReads, 1);
  // …over it, the lookup waits for the IP's verdict, which refuses.
  await ipLimiter.set('::ffff:127.0.0.1', 1_000, 60);
  await ipLimiter.set('127.0.0.1', 1_000, 60);
  const res = await send('/other', { authorization: `Bearer ${UNKNOWN_KEY}` });
  assert.equal(res.status, 429);
  assert.match(((await res.json()) as { error: { message: string } }).error.message, /for this IP address/);
  assert.equal(storeReads, 1, 'the store was not read for the refused request');
  // A chat over the IP budget is refused though its wallet budget and slot admit it; its slot is given back.
  assert.equal((await chatAnswered({ budget: true, slot: true })).status, 429);
  await until(() => released === 1, 'the slot is released');
  // A GET is refused for its IP before anything else: its wallet's budget is never asked.
  const get = await fetch(`${url}/other`, { headers: { 'x-wallet-address': WALLET } });
  assert.equal(get.status, 429);
  assert.equal(walletBudget.waiting(), 1, 'only the POST asked the wallet budget');
  await ipLimiter.delete('::ffff:127.0.0.1');
  await ipLimiter.delete('127.0.0.1');
});
