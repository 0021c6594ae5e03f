/**
 * API keys at rest and over their life: only the SHA-256 lives in DATA_DIR (checked in the raw
 * bytes of every file), listing shows no secret, last_used_at is written at most once a minute,
 * and a revoked key stops working at once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authHeaders, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { ApiKeys, hashKey } from '../../../gateway/keys/api-keys.js';
import { KeyvKeyStore } from '../../../gateway/keys/keyv-key-store.js';
import { MAX_KEYS_PER_WALLET, type KeyStore } from '../../../gateway/keys/key-store.js';
import { openStore } from '../../../gateway/storage/sqlite/keyv-store.js';
import { ALICE, BOB, call, errorOf, mintVerifiedKey, startAccountsGateway } from '../../helpers/accounts.js';

const alice = ALICE.address.toLowerCase();
let gw: TestGateway;
before(async () => {
  gw = await startAccountsGateway();
});
after(() => gw.stop());

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

test('DATA_DIR holds only the SHA-256 of a key, never the key', async () => {
  const keys = [await mintVerifiedKey(gw, ALICE, 'one'), await mintVerifiedKey(gw, ALICE, 'two')];
  // Use them, so last_used_at writes happen too.
  for (const key of keys) assert.equal((await call(`${gw.url}/credits/balance`, { headers: authHeaders(key, alice) })).status, 200);
  const files = filesUnder(gw.dataDir);
  assert.ok(
    files.some((f) => f.endsWith('.sqlite')),
    `store files: ${files.join(', ')}`,
  );
  const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
  for (const key of keys) {
    assert.equal(bytes.indexOf(key), -1, 'the plaintext key is in DATA_DIR');
    assert.equal(bytes.indexOf(key.slice(3)), -1, 'the key body is in DATA_DIR');
    assert.equal(bytes.indexOf(Buffer.from(key.slice(3), 'base64url')), -1, 'the raw key bytes are in DATA_DIR');
  }
  // The store does hold the hashes (the WAL or the main file), which is what lookups use.
  assert.notEqual(bytes.indexOf(hashKey(keys[0])), -1);
  assert.ok(!gw.rawLogs().includes(keys[0]));
});

test("GET /auth/api-keys lists the wallet's keys without any secret", async () => {
  const key = await mintVerifiedKey(gw, BOB, 'bob-only');
  const answer = await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(key, BOB.address) });
  assert.equal(answer.status, 200);
  assert.equal(answer.body.object, 'list');
  assert.equal(answer.body.data.length, 1);
  const [listed] = answer.body.data;
  assert.deepEqual(Object.keys(listed).sort(), ['created_at', 'id', 'last_used_at', 'limits', 'name', 'prefix', 'spend', 'verified']);
  assert.equal(listed.name, 'bob-only');
  assert.equal(listed.verified, true);
  assert.match(listed.id, /^key_[A-Za-z0-9_-]{12}$/);
  assert.equal(listed.prefix, key.slice(0, 7));
  assert.ok(Math.abs(listed.created_at - Date.now() / 1000) < 60);
  // Listing is a use of the key: last_used_at is set now.
  assert.ok(Math.abs(listed.last_used_at - Date.now() / 1000) < 60);
  const text = JSON.stringify(answer.body);
  assert.ok(!text.includes(key) && !text.includes(hashKey(key)));
});

test('last_used_at is written at most once a minute per key, off the request path', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-keys-'));
  const store = await openStore(dir);
  try {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const keyStore = new KeyvKeyStore(store.keys);
    const writes: number[] = [];
    let landed = 0;
    const counting: KeyStore = {
      insert: (hash, record) => keyStore.insert(hash, record),
      get: (hash) => keyStore.get(hash),
      list: (address) => keyStore.list(address),
      remove: (address, id) => keyStore.remove(address, id),
      touch: async (hash, at) => {
        writes.push(at);
        await keyStore.touch(hash, at);
        landed++;
      },
    };
    const keys = new ApiKeys(counting, { now: () => now });
    const { key, record } = await keys.create({ address: alice, name: 'touch', verified: true });
    assert.equal(record.last_used_at, null);
    const stored = async () => (await keyStore.get(hashKey(key)))!.last_used_at;
    // The write runs off the request path: wait until every write asked for has landed.
    const settle = async () => {
      for (let i = 0; i < 200 && landed < writes.length; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    keys.touch(key, (await keys.find(key))!);
    await settle();
    const firstUse = now / 1000;
    assert.equal(await stored(), firstUse);
    now += 59_000;
    keys.touch(key, (await keys.find(key))!);
    await settle();
    assert.deepEqual(writes, [firstUse], 'written again within a minute');
    now += 2_000;
    keys.touch(key, (await keys.find(key))!);
    await settle();
    assert.equal(await stored(), firstUse + 61);
    assert.equal((await keys.list(alice))[0].last_used_at, firstUse + 61);
    // A revoked key is not brought back by a late touch, and the cache forgets it at once.
    assert.equal(await keys.revoke(alice, record.id), true);
    assert.equal(await keys.find(key), undefined);
    now += 120_000;
    keys.touch(key, record);
    await settle();
    assert.equal(await keyStore.get(hashKey(key)), undefined);
    assert.equal(await keys.find(key), undefined);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('keys are served from memory after the first use; unknown keys are never cached', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-keys-'));
  const store = await openStore(dir);
  try {
    const keyStore = new KeyvKeyStore(store.keys);
    let reads = 0;
    const counting: KeyStore = {
      insert: (hash, record) => keyStore.insert(hash, record),
      get: (hash) => {
        reads++;
        return keyStore.get(hash);
      },
      list: (address) => keyStore.list(address),
      remove: (address, id) => keyStore.remove(address, id),
      touch: (hash, at) => keyStore.touch(hash, at),
    };
    const keys = new ApiKeys(counting, { cacheSize: 2 });
    const minted = await Promise.all([1, 2, 3].map((i) => keys.create({ address: alice, name: `k${i}`, verified: true })));
    for (let i = 0; i < 5; i++) assert.equal((await keys.find(minted[0].key))!.id, minted[0].record.id);
    assert.equal(reads, 1, 'one store read, then memory');
    const unknown = `sy_${'A'.repeat(43)}`;
    assert.equal(await keys.find(unknown), undefined);
    assert.equal(await keys.find(unknown), undefined);
    assert.equal(reads, 3, 'an unknown key is read from the store every time');
    // Bounded: a third key pushes the least recently used out.
    await keys.find(minted[1].key);
    await keys.find(minted[2].key);
    const before = reads;
    await keys.find(minted[0].key);
    assert.equal(reads, before + 1, 'evicted, read again');
    // Another instance's revocation reaches this cache through forget().
    await keyStore.remove(alice, minted[0].record.id);
    assert.ok(await keys.find(minted[0].key), 'still cached');
    keys.forget(hashKey(minted[0].key));
    assert.equal(await keys.find(minted[0].key), undefined);
    const changes: string[] = [];
    keys.onChange((change) => changes.push(change.kind));
    await keys.revoke(alice, minted[1].record.id);
    await keys.create({ address: alice, name: 'k4', verified: true });
    assert.deepEqual(changes, ['revoked', 'created']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("DELETE /auth/api-keys/:id revokes at once; unknown ids and other wallets' ids are 404", async () => {
  const keep = await mintVerifiedKey(gw, ALICE, 'keep');
  const drop = await mintVerifiedKey(gw, ALICE, 'drop');
  const bobKey = await mintVerifiedKey(gw, BOB, 'bob');
  const list = await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(keep, alice) });
  const dropId = list.body.data.find((k: { name: string }) => k.name === 'drop').id as string;

  // Bob cannot revoke Alice's key (it is not among his).
  const foreign = await call(`${gw.url}/auth/api-keys/${dropId}`, { method: 'DELETE', headers: authHeaders(bobKey, BOB.address) });
  assert.deepEqual(errorOf(foreign), { status: 404, code: 'api_key_not_found', type: 'not_found_error' });
  assert.equal(foreign.body.error.message, `This wallet has no API key "${dropId}".`);
  assert.equal((await call(`${gw.url}/credits/balance`, { headers: authHeaders(drop, alice) })).status, 200);

  const revoked = await call(`${gw.url}/auth/api-keys/${dropId}`, { method: 'DELETE', headers: authHeaders(keep, alice) });
  assert.equal(revoked.status, 200);
  assert.deepEqual(revoked.body, { id: dropId, revoked: true });
  const after = await call(`${gw.url}/credits/balance`, { headers: authHeaders(drop, alice) });
  assert.deepEqual(errorOf(after), { status: 401, code: 'invalid_api_key', type: 'authentication_error' });
  const again = await call(`${gw.url}/auth/api-keys/${dropId}`, { method: 'DELETE', headers: authHeaders(keep, alice) });
  assert.equal(again.status, 404);
  const names = (await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(keep, alice) })).body.data.map(
    (k: { name: string }) => k.name,
  );
  assert.ok(names.includes('keep') && !names.includes('drop'));

  // A key may revoke itself; it is refused right after.
  const keepId = (await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(keep, alice) })).body.data.find(
    (k: { name: string }) => k.name === 'keep',
  ).id;
  assert.equal((await call(`${gw.url}/auth/api-keys/${keepId}`, { method: 'DELETE', headers: authHeaders(keep, alice) })).status, 200);
  assert.equal((await call(`${gw.url}/auth/api-keys`, { headers: authHeaders(keep, alice) })).body.error.code, 'invalid_api_key');
});

test(`a wallet holds at most ${MAX_KEYS_PER_WALLET} active keys: the next is 409 too_many_api_keys until one is revoked`, async () => {
  const free = await startAccountsGateway({ freeMode: true });
  try {
    const wallet = '0x' + '7'.repeat(40);
    const mint = () => call(`${free.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(wallet), body: {} });
    const keys: string[] = [];
    for (let i = 0; i < MAX_KEYS_PER_WALLET; i++) {
      const answer = await mint();
      assert.equal(answer.status, 200);
      keys.push(answer.body.key);
    }
    const refused = await mint();
    assert.deepEqual(errorOf(refused), { status: 409, code: 'too_many_api_keys', type: 'invalid_request_error' });
    assert.equal(
      refused.body.error.message,
      `This wallet already has ${MAX_KEYS_PER_WALLET} API keys; revoke one (DELETE /auth/api-keys/:id) before creating another.`,
    );
    const listed = await call(`${free.url}/auth/api-keys`, { headers: authHeaders(keys[0], wallet) });
    assert.equal(listed.body.data.length, MAX_KEYS_PER_WALLET);
    const revoke = await call(`${free.url}/auth/api-keys/${listed.body.data[1].id}`, {
      method: 'DELETE',
      headers: authHeaders(keys[0], wallet),
    });
    assert.equal(revoke.status, 200);
    assert.equal((await mint()).status, 200);
  } finally {
    await free.stop();
  }
});

test('a revocation heard while a store read is in flight: the read answers but is not cached', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-keys-'));
  const store = await openStore(dir);
  try {
    const keyStore = new KeyvKeyStore(store.keys);
    let reads = 0;
    let hold: Promise<void> | undefined;
    const slow: KeyStore = {
      insert: (hash, record) => keyStore.insert(hash, record),
      get: async (hash) => {
        reads++;
        const record = await keyStore.get(hash); // the snapshot: taken before the revocation
        await hold;
        return record;
      },
      list: (address) => keyStore.list(address),
      remove: (address, id) => keyStore.remove(address, id),
      touch: (hash, at) => keyStore.touch(hash, at),
    };
    const keys = new ApiKeys(slow);
    const { key, record } = await keys.create({ address: alice, name: 'raced', verified: true });
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const inFlight = keys.find(key);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Another instance revokes the key and broadcasts it while this read is out.
    await keyStore.remove(alice, record.id);
    keys.forget(hashKey(key));
    release();
    assert.ok(await inFlight, 'the read began before the revocation');
    hold = undefined;
    assert.equal(await keys.find(key), undefined, 'the revoked key was not cached by the straddling read');
    assert.equal(reads, 2);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
