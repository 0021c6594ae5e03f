/**
 * SIWE nonces live in memory, bounded: a few per wallet (oldest evicted), a cap in all, expired
 * ones dropped as new ones are issued, each spent once. Over HTTP: nothing reaches DATA_DIR, and a
 * wallet's sixth nonce evicts its first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NonceStore, NONCES_PER_WALLET } from '../../../gateway/keys/nonce-store.js';
import { walletHeaders } from '../../helpers/gateway.js';
import { ALICE, call, errorOf, signedProof, startAccountsGateway } from '../../helpers/accounts.js';

const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);

test('a nonce is spent once, only by the wallet it was issued to, only before it expires', () => {
  let now = 1_000;
  const nonces = new NonceStore({ ttlMs: 100, now: () => now });
  const first = nonces.issue(A).nonce;
  assert.equal(nonces.consume(first, B), false, 'another wallet cannot spend it');
  assert.equal(nonces.consume(first, A), true);
  assert.equal(nonces.consume(first, A), false, 'single use');
  const late = nonces.issue(A).nonce;
  now += 100;
  assert.equal(nonces.consume(late, A), false, 'expired');
});

test(`a wallet holds at most ${NONCES_PER_WALLET} nonces: the oldest is evicted`, () => {
  const nonces = new NonceStore({ ttlMs: 60_000 });
  const issued = Array.from({ length: NONCES_PER_WALLET + 2 }, () => nonces.issue(A).nonce);
  const other = nonces.issue(B).nonce;
  assert.equal(nonces.size, NONCES_PER_WALLET + 1);
  assert.equal(nonces.consume(issued[0], A), false);
  assert.equal(nonces.consume(issued[1], A), false);
  for (const nonce of issued.slice(2)) assert.equal(nonces.consume(nonce, A), true);
  assert.equal(nonces.consume(other, B), true);
  assert.equal(nonces.size, 0);
});

test('expired nonces are dropped as new ones are issued, and the total is capped', () => {
  let now = 0;
  const nonces = new NonceStore({ ttlMs: 10, total: 3, now: () => now });
  for (let i = 0; i < 3; i++) nonces.issue(`0x${String(i).repeat(40)}`);
  now = 10;
  nonces.issue(A);
  assert.equal(nonces.size, 1, 'the three expired ones are gone');
  const oldest = nonces.issue(B).nonce;
  nonces.issue('0x' + 'c'.repeat(40));
  nonces.issue('0x' + 'd'.repeat(40));
  assert.equal(nonces.size, 3);
  assert.equal(nonces.consume(oldest, B), true, 'B was second-oldest: still there');
});

test("over HTTP: nonces never reach DATA_DIR, and a wallet's newest nonces evict its oldest", async () => {
  const gw = await startAccountsGateway();
  try {
    const evicted = await signedProof(gw, ALICE);
    const issued: string[] = [];
    for (let i = 0; i < NONCES_PER_WALLET; i++) {
      issued.push((await call(`${gw.url}/auth/nonce`, { headers: walletHeaders(ALICE.address) })).body.nonce);
    }
    const bytes = Buffer.concat(readdirSync(gw.dataDir).map((f) => readFileSync(join(gw.dataDir, f))));
    for (const nonce of [evicted.nonce, ...issued]) assert.equal(bytes.indexOf(nonce), -1, 'a nonce is in DATA_DIR');
    const answer = await call(`${gw.url}/auth/api-keys`, {
      method: 'POST',
      headers: walletHeaders(ALICE.address),
      body: { message: evicted.message, signature: evicted.signature },
    });
    assert.deepEqual(errorOf(answer), { status: 401, code: 'siwe_nonce_invalid', type: 'authentication_error' });
  } finally {
    await gw.stop();
  }
});
