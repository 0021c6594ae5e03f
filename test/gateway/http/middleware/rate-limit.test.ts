import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../../helpers/gateway.js';

const OTHER_WALLET = '0x' + '1'.repeat(40);
const gateways: TestGateway[] = [];
after(() => Promise.all(gateways.map((g) => g.stop())));

async function expectRateLimited(res: Response, message: string): Promise<void> {
  assert.equal(res.status, 429);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.deepEqual(await res.json(), { error: { message, type: 'rate_limit_error', code: 'rate_limited', param: null } });
}

test('per-IP budget: over it → 429 rate_limited with Retry-After, before the wallet check; /health is exempt', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.limits = { perIp: { points: 3, durationSec: 60 } };
    },
  });
  gateways.push(gateway);
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(OTHER_WALLET) })).status, 200);
  assert.equal((await fetch(`${gateway.url}/v1/models`)).status, 400); // no wallet: still counts for the IP
  const message = 'Rate limit exceeded for this IP address: 3 requests per 60 s.';
  await expectRateLimited(await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() }), message);
  // Limited before the wallet check: a request without a wallet gets 429, not 400.
  await expectRateLimited(await fetch(`${gateway.url}/v1/models`), message);
  await expectRateLimited(await fetch(`${gateway.url}/no-such-route`), message);
  // Load balancer probes keep working.
  for (let i = 0; i < 5; i++) assert.equal((await fetch(`${gateway.url}/health`)).status, 200);
  const line = gateway.logs.find((l) => l.msg === 'request' && l.status === 429);
  assert.equal(line?.code, 'rate_limited');
});

test('behind a proxy (trustProxy) the per-IP budget keys on the address the proxy added, not on what the client wrote before it', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.server = { ...(json.server as object), trustProxy: true };
      json.limits = { perIp: { points: 2, durationSec: 60 } };
    },
  });
  gateways.push(gateway);
  // One client inventing a new first entry each time: the proxy appends its real address last.
  const spoofed = (i: number) => ({ ...walletHeaders(), 'x-forwarded-for': `10.0.0.${i}, 203.0.113.9` });
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: spoofed(1) })).status, 200);
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: spoofed(2) })).status, 200);
  await expectRateLimited(
    await fetch(`${gateway.url}/v1/models`, { headers: spoofed(3) }),
    'Rate limit exceeded for this IP address: 2 requests per 60 s.',
  );
  // Another client behind the same proxy has its own budget.
  assert.equal(
    (await fetch(`${gateway.url}/v1/models`, { headers: { ...walletHeaders(), 'x-forwarded-for': '198.51.100.7' } })).status,
    200,
  );
});

test('per-wallet budget: one wallet over it → 429; another wallet is unaffected', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.limits = { perWallet: { points: 2, durationSec: 30 } };
    },
  });
  gateways.push(gateway);
  for (let i = 0; i < 2; i++) assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
  await expectRateLimited(
    await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() }),
    'Rate limit exceeded for this wallet: 2 requests per 30 s.',
  );
  const other = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(OTHER_WALLET) });
  assert.equal(other.status, 200);
  // Requests without a valid wallet never touch a wallet's budget.
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: { 'x-wallet-address': 'nope' } })).status, 400);
  assert.equal(gateway.logs.filter((l) => l.msg === 'request' && l.status === 429 && l.wallet === WALLET).length, 1);
});

test('the budget refills after its window', async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.limits = { perWallet: { points: 1, durationSec: 1 } };
    },
  });
  gateways.push(gateway);
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
  const limited = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() });
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '1');
  await new Promise((r) => setTimeout(r, 1_100));
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
});

test("per-IP budget on /v1/tools/execute: with a wallet header it is decided at the route's gate and shaped like the route's errors; without, plain", async () => {
  const gateway = await startTestGateway({
    config: (json) => {
      json.limits = { perIp: { points: 1, durationSec: 60 } };
    },
  });
  gateways.push(gateway);
  const execute = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/v1/tools/execute`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"tool":"x"}',
    });
  assert.equal((await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() })).status, 200);
  const message = 'Rate limit exceeded for this IP address: 1 requests per 60 s.';
  const shaped = await execute(walletHeaders());
  assert.equal(shaped.status, 429);
  assert.deepEqual(await shaped.json(), {
    ok: false,
    tool: null,
    error: { message, type: 'rate_limit_error', code: 'rate_limited', param: null },
  });
  await expectRateLimited(await execute({}), message);
});
