/**
 * What every ResponseStore must do (accounts/response-store.ts), run once per implementation:
 * a record only for its wallet, deletion, expiry on read and by the sweep, and the per-wallet
 * quota in count and bytes with the oldest dropped first.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { ResponseStore } from '../../../gateway/responses/response-store.js';

/** The quota every implementation is opened with for this suite. */
export const CONTRACT_QUOTA = { maxPerWallet: 3, maxBytesPerWallet: 1_000 };

const wallet = () => `0x${randomBytes(20).toString('hex')}`;
const NOW = 1_800_000_000_000;

export function responseStoreContract(name: string, open: () => ResponseStore, options: { skip?: string | false } = {}): void {
  describe(`${name}: the ResponseStore contract`, { skip: options.skip }, () => {
    const put = (store: ResponseStore, owner: string, id: string, body = `{"id":"${id}"}`, at = NOW, ttl = 60_000) =>
      store.put({ id, wallet: owner, createdAt: at, expiresAt: at + ttl, body });

    test('a record is returned to its wallet only, until it is deleted', async () => {
      const store = open();
      const [alice, bob] = [wallet(), wallet()];
      assert.equal(await put(store, alice, 'resp_a1'), true);
      assert.equal(await store.get('resp_a1', alice, NOW), '{"id":"resp_a1"}');
      assert.equal(await store.get('resp_a1', bob, NOW), undefined);
      assert.equal(await store.delete('resp_a1', bob, NOW), false);
      assert.equal(await store.delete('resp_a1', alice, NOW), true);
      assert.equal(await store.get('resp_a1', alice, NOW), undefined);
      assert.equal(await store.delete('resp_a1', alice, NOW), false);
    });

    test('an expired record is never returned, and the sweep deletes it', async () => {
      const store = open();
      const owner = wallet();
      await put(store, owner, `resp_e${owner}`, '{}', NOW, 1_000);
      await put(store, owner, `resp_k${owner}`, '{}', NOW, 10_000);
      assert.equal(await store.get(`resp_e${owner}`, owner, NOW + 999), '{}');
      assert.equal(await store.get(`resp_e${owner}`, owner, NOW + 1_000), undefined);
      assert.ok((await store.sweep(NOW + 1_000)) >= 1);
      assert.equal(await store.delete(`resp_e${owner}`, owner, NOW), false, 'gone from the table, not only hidden');
      assert.equal(await store.get(`resp_k${owner}`, owner, NOW + 1_000), '{}');
    });

    test('over the count quota, the oldest records of that wallet go first', async () => {
      const store = open();
      const [owner, other] = [wallet(), wallet()];
      await put(store, other, `resp_o${other}`);
      for (let i = 1; i <= 5; i++) await put(store, owner, `resp_${i}${owner}`);
      const kept = [];
      for (let i = 1; i <= 5; i++) if (await store.get(`resp_${i}${owner}`, owner, NOW)) kept.push(i);
      assert.deepEqual(kept, [3, 4, 5]);
      assert.ok(await store.get(`resp_o${other}`, other, NOW), 'another wallet keeps its own');
    });

    test('over the byte quota, the oldest go until the bodies fit; one body larger than it is refused', async () => {
      const store = open();
      const owner = wallet();
      const body = (n: number) => JSON.stringify({ pad: 'x'.repeat(n - 10) });
      await put(store, owner, `resp_1${owner}`, body(400));
      await put(store, owner, `resp_2${owner}`, body(400));
      await put(store, owner, `resp_3${owner}`, body(400));
      assert.equal(await store.get(`resp_1${owner}`, owner, NOW), undefined, '1200 bytes > 1000: the oldest went');
      assert.ok(await store.get(`resp_2${owner}`, owner, NOW));
      assert.ok(await store.get(`resp_3${owner}`, owner, NOW));
      assert.equal(await put(store, owner, `resp_big${owner}`, body(1_001)), false);
      assert.equal(await store.get(`resp_big${owner}`, owner, NOW), undefined);
      assert.ok(await store.get(`resp_3${owner}`, owner, NOW), 'a refused record drops nothing');
    });
  });
}
