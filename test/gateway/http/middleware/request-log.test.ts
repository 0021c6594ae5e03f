import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, walletHeaders, WALLET, WALLET_CHECKSUMMED, type TestGateway } from '../../../helpers/gateway.js';
import { API_KEY, SIGNATURE, SIWE_MESSAGE } from '../../secrets.js';

let gateway: TestGateway;
before(async () => {
  gateway = await startTestGateway();
});
after(() => gateway.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function requestLines(): Array<Record<string, unknown>> {
  return gateway.logs.filter((l) => l.msg === 'request');
}
function lineFor(reqId: string): Record<string, unknown> {
  const found = requestLines().filter((l) => l.reqId === reqId);
  assert.equal(found.length, 1, `exactly one log line for ${reqId}`);
  return found[0];
}

test('one JSON line per request: id, method, route template, status, ms, wallet', async () => {
  const res = await fetch(`${gateway.url}/v1/models`, { headers: walletHeaders(WALLET_CHECKSUMMED, { 'x-request-id': 'trace-1.A_b' }) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-request-id'), 'trace-1.A_b');
  const line = lineFor('trace-1.A_b');
  assert.equal(line.level, 30);
  assert.equal(line.method, 'GET');
  assert.equal(line.route, '/v1/models');
  assert.equal(line.path, '/v1/models');
  assert.equal(line.status, 200);
  assert.equal(line.wallet, WALLET); // canonical lower-case form
  assert.equal(typeof line.ms, 'number');
  assert.ok((line.ms as number) >= 0);
  assert.equal('code' in line, false);
});

test('a 4xx line carries the error code; an unmatched route is logged as "unmatched" with no wallet', async () => {
  const bad = await fetch(`${gateway.url}/v1/models`, { headers: { 'x-request-id': 'no-wallet' } });
  assert.equal(bad.status, 400);
  const badLine = lineFor('no-wallet');
  assert.equal(badLine.code, 'invalid_wallet_address');
  assert.equal(badLine.route, '/v1/models');
  assert.equal(badLine.wallet, null);

  const missing = await fetch(`${gateway.url}/no/such/thing`, { headers: { 'x-request-id': 'scan-1' } });
  assert.equal(missing.status, 404);
  const missingLine = lineFor('scan-1');
  assert.equal(missingLine.route, 'unmatched');
  assert.equal(missingLine.status, 404);
  assert.equal(missingLine.code, 'not_found');
});

test('x-request-id: kept when ≤ 64 chars of [A-Za-z0-9._-], otherwise replaced by a fresh UUID', async () => {
  const longest = 'a'.repeat(64);
  const kept = await fetch(`${gateway.url}/health`, { headers: { 'x-request-id': longest } });
  assert.equal(kept.headers.get('x-request-id'), longest);
  lineFor(longest);

  const seen = new Set<string>();
  for (const rejected of ['a'.repeat(65), 'has space', 'semi;colon', 'slash/id', '', 'ünicode']) {
    const res = await fetch(`${gateway.url}/health`, { headers: { 'x-request-id': rejected } });
    const echoed = res.headers.get('x-request-id') ?? '';
    assert.match(echoed, UUID, `"${rejected}" is replaced`);
    assert.equal(seen.has(echoed), false, 'each fresh id is new');
    seen.add(echoed);
    lineFor(echoed);
  }
  // Error responses carry the id too.
  const error = await fetch(`${gateway.url}/nowhere`);
  assert.match(error.headers.get('x-request-id') ?? '', UUID);
});

test('no key, signature, SIWE message or authorization value reaches the log, whatever the client sends', async () => {
  const secretHeaders = walletHeaders(WALLET, { authorization: `Bearer ${API_KEY}`, 'x-api-key': API_KEY, 'x-signature': SIGNATURE });
  const body = JSON.stringify({ key: API_KEY, signature: SIGNATURE, message: SIWE_MESSAGE });
  const query = `?key=${API_KEY}&signature=${SIGNATURE}&message=${encodeURIComponent(SIWE_MESSAGE)}`;
  await fetch(`${gateway.url}/v1/models${query}`, { method: 'POST', headers: secretHeaders, body });
  await fetch(`${gateway.url}/v1/keys/${API_KEY}${query}`, { headers: secretHeaders });
  await fetch(`${gateway.url}/v1/${SIGNATURE}`, { method: 'POST', headers: secretHeaders, body: '{not json' });
  // A client that sends its key as the request id gets it echoed, but the log never holds it.
  const echoed = await fetch(`${gateway.url}/health`, { headers: { 'x-request-id': API_KEY } });
  assert.equal(echoed.headers.get('x-request-id'), API_KEY);

  const raw = gateway.rawLogs();
  for (const secret of [
    API_KEY,
    API_KEY.slice(0, 24),
    SIGNATURE.slice(0, 140),
    'wants you to sign in',
    'Nonce: abcdef',
    `Bearer ${API_KEY.slice(0, 8)}`,
  ]) {
    assert.equal(raw.includes(secret), false, `the log holds ${secret.slice(0, 24)}…`);
  }
  assert.ok(
    requestLines().some((l) => l.path === '/v1/keys/sy_[redacted]'),
    'the scrubbed path is still logged',
  );
  assert.ok(requestLines().some((l) => l.reqId === 'sy_[redacted]'));
});
