/**
 * `/health` reports the store: `store: "up"` normally; when the store fails, the gateway cannot
 * serve, so the answer is HTTP 503 with status `degraded`. The probe times out, is cached for a
 * second and shared by concurrent probes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type Keyv from 'keyv';
import { storeHealth } from '../../../gateway/accounts/store-health.js';
import { startTestGateway } from '../../helpers/gateway.js';

/** A stand-in for the store's `keys` namespace whose reads do what `get` says. */
function fakeKeys(get: () => Promise<unknown>): { keys: Keyv } {
  return { keys: { get } as unknown as Keyv };
}

test('a store that fails makes /health 503 with status degraded and store: down', async () => {
  const gw = await startTestGateway();
  try {
    const up = await fetch(`${gw.url}/health`);
    assert.equal(up.status, 200);
    assert.equal((await up.json()).store, 'up');
    await gw.store!.close(); // every read now fails (SQLITE_MISUSE)
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the cached answer
    const down = await fetch(`${gw.url}/health`);
    assert.equal(down.status, 503);
    const body = await down.json();
    assert.equal(body.status, 'degraded');
    assert.equal(body.store, 'down');
    assert.equal(body.model, 'svc-32b-conductor');
  } finally {
    await gw.stop();
  }
});

test('a read that does not answer in time counts as down', async () => {
  const health = storeHealth(
    fakeKeys(() => new Promise(() => {})),
    { timeoutMs: 20 },
  );
  assert.deepEqual(await health.health(), { fields: { store: 'down' }, cannotServe: true });
});

test('the answer is reused for cacheMs, and concurrent probes share one read', async () => {
  let now = 0;
  let reads = 0;
  let fail = false;
  const health = storeHealth(
    fakeKeys(async () => {
      reads++;
      if (fail) throw new Error('disk gone');
      return undefined;
    }),
    { cacheMs: 1_000, now: () => now },
  );
  await Promise.all([health.health(), health.health(), health.health()]);
  assert.equal(reads, 1);
  fail = true;
  now = 999;
  assert.equal((await health.health()).fields.store, 'up', 'cached');
  assert.equal(reads, 1);
  now = 1_000;
  assert.deepEqual(await health.health(), { fields: { store: 'down' }, cannotServe: true });
  assert.equal(reads, 2);
});
