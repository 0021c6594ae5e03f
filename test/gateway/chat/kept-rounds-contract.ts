/**
 * What every KeptRoundsStore must do (memory, Redis, PostgreSQL): values come back by key in the
 * order asked, a put replaces, nothing comes back once its TTL passed, and an empty ask is cheap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KeptRoundsStore } from '../../../gateway/chat/kept-rounds.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function keptRoundsContract(name: string, store: () => KeptRoundsStore): void {
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
}
