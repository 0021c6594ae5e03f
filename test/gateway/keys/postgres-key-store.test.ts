/**
 * The PostgreSQL KeyStore (cluster mode) on the local server: what ApiKeys relies on — insert and
 * get by hash, the wallet's keys oldest first, revocation that stops the key at once, a touch that
 * never brings a revoked key back, and the per-wallet cap holding under concurrent mints.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { PostgresKeyStore } from '../../../gateway/keys/postgres-key-store.js';
import { ApiKeys, hashKey } from '../../../gateway/keys/api-keys.js';
import { TooManyApiKeys } from '../../../gateway/errors.js';
import type { ApiKeyRecord } from '../../../gateway/keys/key-store.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';

const services = await clusterServices();
const wallet = () => `0x${randomBytes(20).toString('hex')}`;

function record(address: string, name: string): { hash: string; record: ApiKeyRecord } {
  return {
    hash: randomBytes(32).toString('hex'),
    record: {
      id: `key_${randomBytes(9).toString('base64url')}`,
      name,
      address,
      created_at: 1_800_000_000,
      last_used_at: null,
      verified: true,
      prefix: 'sy_abcd',
    },
  };
}

describe('PostgreSQL key store', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  before(async () => {
    database = await freshDatabase();
    db = await openDatabase(database.url);
    await migrate(db.sql);
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  test('insert, get, list oldest first, remove, and touch', async () => {
    const store = new PostgresKeyStore(db.sql);
    const owner = wallet();
    const keys = [record(owner, 'first'), record(owner, 'second'), record(owner, 'third')];
    for (const key of keys) await store.insert(key.hash, key.record);
    assert.deepEqual(await store.get(keys[1].hash), keys[1].record);
    assert.equal(await store.get('0'.repeat(64)), undefined);
    assert.deepEqual(
      (await store.list(owner)).map((e) => e.record.name),
      ['first', 'second', 'third'],
    );
    assert.deepEqual(await store.list(wallet()), []);
    await store.touch(keys[0].hash, 1_800_000_100);
    assert.equal((await store.get(keys[0].hash))?.last_used_at, 1_800_000_100);
    assert.equal(await store.remove(wallet(), keys[0].record.id), undefined, 'another wallet cannot revoke it');
    assert.equal(await store.remove(owner, keys[0].record.id), keys[0].hash);
    assert.equal(await store.get(keys[0].hash), undefined);
    await store.touch(keys[0].hash, 1_800_000_200);
    assert.equal(await store.get(keys[0].hash), undefined, 'a touch does not bring a revoked key back');
  });

  test('the per-wallet cap holds when 8 mints race for the last 3 places', async () => {
    const store = new PostgresKeyStore(db.sql, 5);
    const owner = wallet();
    const mint = (name: string) => {
      const entry = record(owner, name);
      return store.insert(entry.hash, entry.record);
    };
    await mint('k0');
    await mint('k1');
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => mint(`race${i}`)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 3);
    for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof TooManyApiKeys);
    assert.equal((await store.list(owner)).length, 5);
  });

  test('ApiKeys over it: a minted key is found, revoked, and then refused', async () => {
    const apiKeys = new ApiKeys(new PostgresKeyStore(db.sql));
    const owner = wallet();
    const { key, record: minted } = await apiKeys.create({ address: owner, name: 'laptop', verified: false });
    assert.deepEqual(await apiKeys.find(key), minted);
    assert.deepEqual(await new PostgresKeyStore(db.sql).get(hashKey(key)), minted);
    assert.equal(await apiKeys.revoke(owner, minted.id), true);
    assert.equal(await apiKeys.find(key), undefined);
  });
});
