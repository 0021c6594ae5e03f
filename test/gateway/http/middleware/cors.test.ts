import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, walletHeaders, type TestGateway } from '../../../helpers/gateway.js';

const gateways: TestGateway[] = [];
after(() => Promise.all(gateways.map((g) => g.stop())));

const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization,x-api-key,content-type,x-wallet-address',
  },
});

test('CORS_ORIGINS: an allowed origin gets its preflight answered before any wallet or auth check', async () => {
  const gateway = await startTestGateway({ env: { CORS_ORIGINS: 'https://app.example, https://other.example' } });
  gateways.push(gateway);

  // No wallet header, no key: the preflight is still answered (on a gated route and on an unknown one).
  for (const path of ['/v1/models', '/v1/chat/completions', '/v1/messages']) {
    const res = await fetch(`${gateway.url}${path}`, preflight('https://app.example'));
    assert.equal(res.status, 204, path);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(
      res.headers.get('access-control-allow-headers'),
      'authorization,x-api-key,content-type,x-wallet-address,x-request-id,mcp-protocol-version,anthropic-version,anthropic-beta',
    );
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET,HEAD,POST,DELETE,OPTIONS');
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.match(res.headers.get('vary') ?? '', /Origin/);
  }

  // An actual request from that origin may read our headers, errors included.
  const actual = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(undefined, { origin: 'https://other.example' }) });
  assert.equal(actual.status, 200);
  assert.equal(actual.headers.get('access-control-allow-origin'), 'https://other.example');
  assert.equal(
    actual.headers.get('access-control-expose-headers'),
    'x-request-id,retry-after,x-credits-charged,x-credits-remaining,payment-required,payment-response',
  );
  const failed = await fetch(`${gateway.url}/v1/models`, { headers: { origin: 'https://app.example' } });
  assert.equal(failed.status, 400);
  assert.equal(failed.headers.get('access-control-allow-origin'), 'https://app.example');

  // Another origin gets no CORS headers at all; its preflight falls through to the router.
  const foreign = await fetch(`${gateway.url}/v1/models`, preflight('https://evil.example'));
  assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  assert.notEqual(foreign.status, 204);
  const foreignGet = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(undefined, { origin: 'https://evil.example' }) });
  assert.equal(foreignGet.status, 200);
  assert.equal(foreignGet.headers.get('access-control-allow-origin'), null);
});

test('"*" in CORS_ORIGINS allows any origin', async () => {
  const gateway = await startTestGateway({ env: { CORS_ORIGINS: '*' } });
  gateways.push(gateway);
  const res = await fetch(`${gateway.url}/v1/models`, preflight('https://anything.example'));
  assert.equal(res.status, 204);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
});

test('without CORS_ORIGINS there are no CORS headers, and OPTIONS needs no wallet', async () => {
  const gateway = await startTestGateway();
  gateways.push(gateway);
  const res = await fetch(`${gateway.url}/v1/models`, preflight('https://app.example'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('allow'), 'HEAD, GET');
  assert.equal(res.headers.get('access-control-allow-origin'), null);
  assert.equal(res.headers.get('access-control-allow-headers'), null);
  const get = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(undefined, { origin: 'https://app.example' }) });
  assert.equal(get.headers.get('access-control-allow-origin'), null);
});
