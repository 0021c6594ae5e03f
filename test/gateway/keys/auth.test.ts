/**
 * Who may call what (issue 3's table), row by row, in both modes, with every auth error code.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { walletHeaders, authHeaders, apiKeyFor, startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { ADMIN_TOKEN, ALICE, BOB, call, errorOf, startAccountsGateway } from '../../helpers/accounts.js';

const alice = ALICE.address.toLowerCase();
const bob = BOB.address.toLowerCase();
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('free mode off', () => {
  let gw: TestGateway;
  let aliceKey: string;
  let bobKey: string;
  before(async () => {
    gw = await startAccountsGateway();
    aliceKey = await apiKeyFor(gw, alice);
    bobKey = await apiKeyFor(gw, bob);
  });
  after(() => gw.stop());

  test('GET /health and OPTIONS need nothing', async () => {
    assert.equal((await call(`${gw.url}/health`)).status, 200);
    const options = await fetch(`${gw.url}/credits/balance`, { method: 'OPTIONS' });
    assert.equal(options.status, 200);
    assert.match(options.headers.get('allow') ?? '', /GET/);
  });

  test('GET /metrics and /admin/* need the admin token', async () => {
    assert.deepEqual(errorOf(await call(`${gw.url}/metrics`)), { status: 401, code: 'invalid_admin_token', type: 'authentication_error' });
    assert.equal((await call(`${gw.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status, 401);
    assert.equal((await fetch(`${gw.url}/metrics`, { headers: admin })).status, 200);
    // A wallet key is not an admin token.
    assert.deepEqual(errorOf(await call(`${gw.url}/admin/credits/${alice}`, { headers: authHeaders(aliceKey, alice) })), {
      status: 401,
      code: 'invalid_admin_token',
      type: 'authentication_error',
    });
    const ok = await call(`${gw.url}/admin/credits/${alice}`, { headers: admin });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { address: alice, credits: 0, total_deposited: 0, total_spent: 0 });
  });

  test('GET /auth/nonce needs the wallet header only', async () => {
    assert.deepEqual(errorOf(await call(`${gw.url}/auth/nonce`)), {
      status: 400,
      code: 'invalid_wallet_address',
      type: 'invalid_request_error',
    });
    const answer = await call(`${gw.url}/auth/nonce`, { headers: walletHeaders(alice) });
    assert.equal(answer.status, 200);
    assert.deepEqual(Object.keys(answer.body).sort(), ['domain', 'expires_at', 'nonce', 'uri']);
    assert.match(answer.body.nonce, /^[A-Za-z0-9]{16,}$/);
    assert.equal(answer.body.domain, 'switchyard.test');
    assert.equal(answer.body.uri, 'https://switchyard.test');
    const ttl = Date.parse(answer.body.expires_at) - Date.now();
    assert.ok(ttl > 9 * 60_000 && ttl <= 10 * 60_000, `nonce TTL ${ttl} ms`);
  });

  test('POST /auth/api-keys without a proof is 401 siwe_proof_required', async () => {
    const answer = await call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(alice), body: { name: 'x' } });
    assert.deepEqual(errorOf(answer), { status: 401, code: 'siwe_proof_required', type: 'authentication_error' });
    assert.equal(
      answer.body.error.message,
      'Creating a key needs a wallet-ownership proof: sign a SIWE message with a nonce from GET /auth/nonce and send {message, signature}.',
    );
    // Half a proof is a bad request, naming the missing half.
    const half = await call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(alice), body: { message: 'x' } });
    assert.deepEqual([half.status, half.body.error.code, half.body.error.param], [400, 'invalid_request', 'signature']);
    const badName = await call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(alice), body: { name: 7 } });
    assert.deepEqual([badName.status, badName.body.error.param], [400, 'name']);
    const extra = await call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(alice), body: { admin: true } });
    assert.equal(extra.status, 400);
  });

  test('key routes need a key of that wallet', async () => {
    assert.deepEqual(errorOf(await call(`${gw.url}/auth/api-keys`, { headers: walletHeaders(alice) })), {
      status: 401,
      code: 'missing_api_key',
      type: 'authentication_error',
    });
    assert.equal(
      (await call(`${gw.url}/auth/api-keys/key_x`, { method: 'DELETE', headers: walletHeaders(alice) })).body.error.code,
      'missing_api_key',
    );
    assert.equal((await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(bobKey, alice) })).body.error.code, 'wallet_mismatch');
    const list = await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(aliceKey, alice) });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
  });

  for (const path of ['/credits/balance', '/v1/models']) {
    test(`${path}: wallet + Bearer key, each refusal with its code`, async () => {
      const missing = await call(`${gw.url}${path}`, { headers: walletHeaders(alice) });
      assert.deepEqual(errorOf(missing), { status: 401, code: 'missing_api_key', type: 'authentication_error' });
      assert.equal(
        missing.body.error.message,
        'An API key is required: send Authorization: Bearer <key> or x-api-key: <key> (create one with POST /auth/api-keys).',
      );
      const unknownKey = 'sy_' + 'A'.repeat(43);
      for (const authorization of [`Bearer ${unknownKey}`, 'Bearer sy_short', `Basic ${unknownKey}`, 'Bearer']) {
        const answer = await call(`${gw.url}${path}`, { headers: walletHeaders(alice, { authorization }) });
        assert.deepEqual(errorOf(answer), { status: 401, code: 'invalid_api_key', type: 'authentication_error' }, authorization);
        assert.equal(answer.body.error.message, 'The API key is not valid: it is unknown, malformed or revoked.');
        // The presented key never comes back in an error.
        assert.ok(!JSON.stringify(answer.body).includes(unknownKey));
      }
      const mismatch = await call(`${gw.url}${path}`, { headers: authHeaders(bobKey, alice) });
      assert.deepEqual(errorOf(mismatch), { status: 403, code: 'wallet_mismatch', type: 'permission_error' });
      assert.equal(mismatch.body.error.message, 'This API key belongs to another wallet than x-wallet-address.');
      assert.ok(!JSON.stringify(mismatch.body).includes(bobKey));
      // The wallet header is checked before the key.
      assert.equal((await call(`${gw.url}${path}`, { headers: { authorization: `Bearer ${aliceKey}` } })).status, 400);
      assert.equal((await call(`${gw.url}${path}`, { headers: authHeaders(aliceKey, alice) })).status, 200);
      // A checksummed header is the same wallet.
      assert.equal((await call(`${gw.url}${path}`, { headers: authHeaders(aliceKey, ALICE.address) })).status, 200);
    });
  }

  test('x-api-key carries a key as Bearer does; two different keys are 401 ambiguous_api_key', async () => {
    const viaHeader = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, { 'x-api-key': aliceKey }) });
    assert.equal(viaHeader.status, 200);
    const same = await call(`${gw.url}/credits/balance`, { headers: authHeaders(aliceKey, alice, { 'x-api-key': aliceKey }) });
    assert.equal(same.status, 200);
    const wrong = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, { 'x-api-key': 'sy_' + 'C'.repeat(43) }) });
    assert.deepEqual(errorOf(wrong), { status: 401, code: 'invalid_api_key', type: 'authentication_error' });
    const other = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, { 'x-api-key': bobKey }) });
    assert.deepEqual(errorOf(other), { status: 403, code: 'wallet_mismatch', type: 'permission_error' });
    const both = await call(`${gw.url}/credits/balance`, { headers: authHeaders(aliceKey, alice, { 'x-api-key': bobKey }) });
    assert.deepEqual(errorOf(both), { status: 401, code: 'ambiguous_api_key', type: 'authentication_error' });
    assert.equal(both.body.error.message, 'Authorization and x-api-key carry different keys: send one key, in either header.');
    assert.ok(!JSON.stringify(both.body).includes(bobKey));
    // With credits on, a placeholder is no key: refused, not ignored.
    for (const headers of [{ authorization: 'Bearer unused-in-free-mode' }, { 'x-api-key': 'unused-in-free-mode' }] as Record<
      string,
      string
    >[]) {
      const answer = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, headers) });
      assert.deepEqual(errorOf(answer), { status: 401, code: 'invalid_api_key', type: 'authentication_error' });
    }
  });

  test('the plaintext key never reaches the logs', () => {
    assert.ok(!gw.rawLogs().includes(aliceKey));
    assert.ok(!gw.rawLogs().includes(bobKey));
  });
});

describe('free mode on, then off on the same DATA_DIR', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-auth-'));
  let gw: TestGateway;
  let unverifiedKey: string;
  before(async () => {
    gw = await startAccountsGateway({ freeMode: true, dataDir, adminToken: null });
  });
  after(async () => {
    await gw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('POST /auth/api-keys with the wallet header alone mints an unverified key', async () => {
    const answer = await call(`${gw.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(ALICE.address), body: {} });
    assert.equal(answer.status, 200);
    assert.match(answer.body.key, /^sy_[A-Za-z0-9_-]{43}$/);
    assert.equal(answer.body.name, 'default');
    assert.equal(answer.body.address, alice);
    assert.equal(answer.body.verified, false);
    assert.equal(answer.body.message, 'Store this key now: it is shown only once and cannot be retrieved later.');
    unverifiedKey = answer.body.key;
  });

  test('other routes take the wallet header alone; a key, if sent, is still checked', async () => {
    assert.equal((await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/models`, { headers: walletHeaders(alice) })).status, 200);
    const bad = await call(`${gw.url}/credits/balance`, {
      headers: walletHeaders(alice, { authorization: `Bearer sy_${'B'.repeat(43)}` }),
    });
    assert.deepEqual(errorOf(bad), { status: 401, code: 'invalid_api_key', type: 'authentication_error' });
    const other = await call(`${gw.url}/credits/balance`, { headers: authHeaders(unverifiedKey, bob) });
    assert.deepEqual(errorOf(other), { status: 403, code: 'wallet_mismatch', type: 'permission_error' });
    assert.equal((await call(`${gw.url}/credits/balance`, { headers: authHeaders(unverifiedKey, alice) })).status, 200);
  });

  test('a value not shaped like a Switchyard key is ignored, in either header; one shaped like a key is checked', async () => {
    const placeholders: Record<string, string>[] = [
      { authorization: 'Bearer unused-in-free-mode' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { 'x-api-key': 'unused-in-free-mode' },
    ];
    for (const headers of placeholders) {
      const answer = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, headers) });
      assert.equal(answer.status, 200, JSON.stringify(headers));
      // A route that always needs a key sees none.
      const list = await call(`${gw.url}/auth/api-keys`, { headers: walletHeaders(alice, headers) });
      assert.deepEqual(errorOf(list), { status: 401, code: 'missing_api_key', type: 'authentication_error' });
    }
    const mistyped = await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, { 'x-api-key': 'sy_typo' }) });
    assert.deepEqual(errorOf(mistyped), { status: 401, code: 'invalid_api_key', type: 'authentication_error' });
    assert.equal((await call(`${gw.url}/credits/balance`, { headers: walletHeaders(alice, { 'x-api-key': unverifiedKey }) })).status, 200);
    // Two different values are refused even when one of them would be ignored alone.
    const both = await call(`${gw.url}/credits/balance`, { headers: authHeaders(unverifiedKey, alice, { 'x-api-key': 'unused' }) });
    assert.deepEqual(errorOf(both), { status: 401, code: 'ambiguous_api_key', type: 'authentication_error' });
  });

  test('key listing still needs a key of that wallet', async () => {
    assert.equal((await call(`${gw.url}/auth/api-keys`, { headers: walletHeaders(alice) })).body.error.code, 'missing_api_key');
    const list = await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(unverifiedKey, alice) });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.map((k: { name: string; verified: boolean }) => [k.name, k.verified]),
      [['default', false]],
    );
  });

  test('/admin/* is disabled without ADMIN_TOKEN; /metrics is open', async () => {
    const answer = await call(`${gw.url}/admin/credits/grant`, {
      method: 'POST',
      headers: walletHeaders(alice),
      body: { address: alice, amount: 1 },
    });
    assert.deepEqual(errorOf(answer), { status: 404, code: 'not_found', type: 'not_found_error' });
    assert.equal((await fetch(`${gw.url}/metrics`)).status, 200);
  });

  test('with free mode off, a key minted without proof is 401 unverified_api_key', async () => {
    await gw.stop();
    gw = await startAccountsGateway({ freeMode: false, dataDir });
    for (const path of ['/credits/balance', '/auth/api-keys']) {
      const answer = await call(`${gw.url}${path}`, { headers: authHeaders(unverifiedKey, alice) });
      assert.deepEqual(errorOf(answer), { status: 401, code: 'unverified_api_key', type: 'authentication_error' }, path);
      assert.equal(
        answer.body.error.message,
        'This API key was created in free mode without a wallet-ownership proof; create a new key with a SIWE proof.',
      );
    }
  });
});

test('the per-wallet request budget is one budget across key, gated and key-of-wallet routes', async () => {
  const gw = await startTestGateway({ config: (json) => (json.limits = { perWallet: { points: 3, durationSec: 60 } }) });
  try {
    const key = await apiKeyFor(gw, alice);
    assert.equal((await call(`${gw.url}/auth/nonce`, { headers: walletHeaders(alice) })).status, 200);
    assert.equal((await call(`${gw.url}/v1/models`, { headers: walletHeaders(alice) })).status, 200);
    assert.equal((await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(key, alice) })).status, 200);
    const over = await call(`${gw.url}/auth/nonce`, { headers: walletHeaders(alice) });
    assert.deepEqual(errorOf(over), { status: 429, code: 'rate_limited', type: 'rate_limit_error' });
    // Another wallet has its own budget.
    assert.equal((await call(`${gw.url}/auth/nonce`, { headers: walletHeaders(bob) })).status, 200);
  } finally {
    await gw.stop();
  }
});
