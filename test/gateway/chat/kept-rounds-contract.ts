/**
 * What every KeptRoundsStore must do (memory, Redis, PostgreSQL): values come back by key in the
 * order asked, a put replaces, nothing comes back once its TTL passed, an empty ask is cheap, and
 * the values held stay within the store's bound, the oldest dropped first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KeptRoundsStore } from '../../../gateway/chat/kept-rounds.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function keptRoundsContract(name: string, store: () => KeptRoundsStore, bounded: (max: number) => KeptRoundsStore): void {
  const key = () => randomBytes(32).toString('hex');

  test(`${name}: values by key in the order asked, missing keys undefined, a put replaces`, async () => {
    const [a, b, c] = [key(), key(), key()];
    await store().put(a, '[1]', 60_000);
    await store().put(b, '[2]', 60_000);
    assert.deepEqual(await store().getMany([b, c, a]), ['[2]', undefined, '[1]']);
    await store().put(a, '[3]', 60_000);
    assert.deepEqual(await store().getMany([a]), ['[3]']);
    assert.deepEqual(await store().getMany([]), []);
  });

  test(`${name}: nothing comes back once the TTL passed`, async () => {
    const [short, long] = [key(), key()];
    await store().put(short, 'soon gone', 150);
    await store().put(long, 'stays', 60_000);
    assert.deepEqual(await store().getMany([short, long]), ['soon gone', 'stays']);
    await sleep(250);
    assert.deepEqual(await store().getMany([short, long]), [undefined, 'stays']);
  });

  // Last: the bounded store shares the others' space, and pushes out what they left too.
  test(`${name}: over its bound the oldest values go first, the newest stay`, async () => {
    const small = bounded(30);
    const keys = [key(), key(), key(), key()];
    // Ten characters each, put in order (expiries 10 ms apart, so the order holds on any clock).
    for (const [i, k] of keys.entries()) await small.put(k, String(i).repeat(10), 60_000 + i * 10);
    assert.deepEqual(await small.getMany(keys), [undefined, '1'.repeat(10), '2'.repeat(10), '3'.repeat(10)]);
  });

  test(`${name}: a value past its TTL no longer counts toward the bound`, async () => {
    const small = bounded(25);
    const [gone, kept, newest] = [key(), key(), key()];
    await small.put(gone, 'g'.repeat(10), 100);
    await sleep(150);
    await small.put(kept, 'k'.repeat(10), 60_000);
    await small.put(newest, 'n'.repeat(10), 60_010);
    assert.deepEqual(await small.getMany([gone, kept, newest]), [undefined, 'k'.repeat(10), 'n'.repeat(10)]);
  });
}
