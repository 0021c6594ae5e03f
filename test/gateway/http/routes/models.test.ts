import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseWalletAddress } from '../../../../gateway/wallet-address.js';
import { startTestGateway, walletHeaders, WALLET_CHECKSUMMED, type TestGateway } from '../../../helpers/gateway.js';

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway();
});
after(() => gateway.stop());

test('GET /v1/models lists both models with aliases', async () => {
  const res = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders() });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.object, 'list');
  assert.deepEqual(
    body.data.map((m: { id: string; aliases: string[]; object: string }) => [m.id, m.object, m.aliases]),
    [
      ['svc-32b-conductor', 'model', ['conductor']],
      ['svc-8b-operator', 'model', ['operator']],
    ],
  );
  for (const m of body.data) {
    assert.equal(typeof m.created, 'number');
    assert.equal(m.owned_by, 'switchyard');
  }
});

test('a checksummed wallet header is accepted; a bad checksum is 400 invalid_wallet_address', async () => {
  const ok = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(WALLET_CHECKSUMMED) });
  assert.equal(ok.status, 200);
  const badChecksum = WALLET_CHECKSUMMED.replace('E0F', 'e0F');
  const res = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(badChecksum) });
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error.code, 'invalid_wallet_address');
  assert.equal(body.error.param, 'x-wallet-address');
});

test('an all-upper-case wallet header carries no checksum and is accepted as the same wallet', async () => {
  const upper = '0x' + WALLET_CHECKSUMMED.slice(2).toUpperCase();
  const res = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(upper) });
  assert.equal(res.status, 200);
  assert.equal(parseWalletAddress(upper), WALLET_CHECKSUMMED.toLowerCase());
  assert.equal(parseWalletAddress('0X' + upper.slice(2)), undefined, 'the prefix is 0x');
});

test('missing wallet header is 400; health needs none', async () => {
  const res = await fetch(`${gateway.url}/v1/models`);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'invalid_wallet_address');
  const health = await fetch(`${gateway.url}/health`);
  assert.equal(health.status, 200);
  const body = await health.json();
  // The test config's upstreams point at a closed port, so the upstream probe reports degraded.
  assert.ok(['ok', 'degraded'].includes(body.status), `status ${body.status}`);
  assert.equal(body.model, 'svc-32b-conductor');
  assert.equal(typeof body.uptime, 'number');
});

test('unknown route is 404 not_found; wrong method is 405', async () => {
  const res = await fetch(`${gateway.url}/v1/nothing`, { headers: walletHeaders() });
  assert.equal(res.status, 404);
  assert.deepEqual(Object.keys((await res.json()).error).sort(), ['code', 'message', 'param', 'type']);
  const wrong = await fetch(`${gateway.url}/v1/models`, { method: 'DELETE', headers: walletHeaders() });
  assert.equal(wrong.status, 405);
  assert.equal((await wrong.json()).error.code, 'method_not_allowed');
});
