/**
 * What every ResponseStore must do (responses/response-store.ts), run once per implementation:
 * a record only for its wallet, deletion, expiry on read and by the sweep, the per-wallet
 * quota in count and bytes with the oldest dropped first, and the output items' index, whose
 * items go with their record however it goes.
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
    const put = (
      store: ResponseStore,
      owner: string,
      id: string,
      body = `{"id":"${id}"}`,
      at = NOW,
      ttl = 60_000,
      itemIds: string[] = [],
    ) => store.put({ id, wallet: owner, createdAt: at, expiresAt: at + ttl, body, itemIds });
    const item = (prefix: string) => `${prefix}_${randomBytes(24).toString('hex')}`;
    const holders = async (store: ResponseStore, ids: string[], owner: string, now = NOW) =>
      Object.fromEntries((await store.findItems(ids, owner, now)).responseOf);

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

    test('items are found for their wallet only, each with its record, whose body comes once', async () => {
      const store = open();
      const [alice, bob] = [wallet(), wallet()];
      const [m1, c1, m2] = [item('msg'), item('mcp'), item('msg')];
      await put(store, alice, `resp_1${alice}`, '{"n":1}', NOW, 60_000, [m1, c1]);
      await put(store, alice, `resp_2${alice}`, '{"n":2}', NOW, 60_000, [m2]);
      const found = await store.findItems([m1, c1, m2, item('msg')], alice, NOW);
      assert.deepEqual(Object.fromEntries(found.responseOf), { [m1]: `resp_1${alice}`, [c1]: `resp_1${alice}`, [m2]: `resp_2${alice}` });
      assert.deepEqual(Object.fromEntries(found.bodies), { [`resp_1${alice}`]: '{"n":1}', [`resp_2${alice}`]: '{"n":2}' });
      assert.deepEqual(await holders(store, [m1, m2], bob), {}, "another wallet finds none of alice's items");
      assert.deepEqual(await holders(store, [], alice), {});
    });

    test('items go with their record: deleted, expired, swept, or dropped for the quota', async () => {
      const store = open();
      const owner = wallet();
      const [deleted, expiring, dropped, kept] = [item('msg'), item('msg'), item('mcp'), item('msg')];
      await put(store, owner, `resp_d${owner}`, '{}', NOW, 60_000, [deleted]);
      await put(store, owner, `resp_x${owner}`, '{}', NOW, 1_000, [expiring]);
      assert.equal(await store.delete(`resp_d${owner}`, owner, NOW), true);
      assert.deepEqual(await holders(store, [deleted], owner), {}, 'deleted');
      assert.deepEqual(await holders(store, [expiring], owner, NOW + 999), { [expiring]: `resp_x${owner}` });
      assert.deepEqual(await holders(store, [expiring], owner, NOW + 1_000), {}, 'expired: never found');
      assert.ok((await store.sweep(NOW + 1_000)) >= 1);
      // Three more records: the quota (3) drops the oldest, and its items with it.
      await put(store, owner, `resp_q1${owner}`, '{}', NOW, 60_000, [dropped]);
      await put(store, owner, `resp_q2${owner}`, '{}', NOW, 60_000, []);
      await put(store, owner, `resp_q3${owner}`, '{}', NOW, 60_000, []);
      await put(store, owner, `resp_q4${owner}`, '{}', NOW, 60_000, [kept]);
      assert.equal(await store.get(`resp_q1${owner}`, owner, NOW), undefined);
      assert.deepEqual(await holders(store, [dropped, kept], owner), { [kept]: `resp_q4${owner}` });
    });
  });
}
