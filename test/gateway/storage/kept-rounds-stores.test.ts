/**
 * The kept-rounds stores of cluster mode on the real local Redis and PostgreSQL: the store
 * contract on each, Redis keys under REDIS_PREFIX expiring by PX, PostgreSQL rows swept once expired.
 */
import { after, before, describe } from 'node:test';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSharedRedis, type SharedRedis } from '../../../gateway/storage/redis/shared-redis.js';
import { RedisKeptRounds } from '../../../gateway/storage/redis/redis-kept-rounds.js';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { PostgresKeptRounds } from '../../../gateway/storage/postgres/postgres-kept-rounds.js';
import { clusterServices, freshDatabase, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';
import { keptRoundsContract } from '../chat/kept-rounds-contract.js';

const services = await clusterServices();
/** The default bound (`chat.keptRoundsMaxChars`), far above what these tests put. */
const MAX_BYTES = 64 * 1024 * 1024;

describe('kept rounds in Redis', { skip: services.skip }, () => {
  const space = freshRedisPrefix();
  let redis: SharedRedis;
  let store: RedisKeptRounds;
  before(async () => {
    redis = await openSharedRedis({ url: REDIS_URL, prefix: space.prefix });
    store = new RedisKeptRounds(redis, { maxBytes: MAX_BYTES });
  });
  after(async () => {
    await redis?.close();
    await space.clear();
  });
  keptRoundsContract(
    'redis',
    () => store,
    (maxBytes) => new RedisKeptRounds(redis, { maxBytes }),
  );

  test('redis: one key under the prefix, with its TTL', async () => {
    await store.put('k1', 'v', 60_000);
    const ttl = await redis.client.pttl(`${space.prefix}kept-rounds:k1`);
    assert.ok(ttl > 59_000 && ttl <= 60_000, String(ttl));
  });
});

describe('kept rounds in PostgreSQL', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let db: Database;
  let store: PostgresKeptRounds;
  before(async () => {
    database = await freshDatabase();
    db = await openDatabase(database.url);
    await migrate(db.sql);
    store = new PostgresKeptRounds(db.sql, { maxBytes: MAX_BYTES });
  });
  after(async () => {
    await store?.stop();
    await db?.close();
    await database?.drop();
  });
  keptRoundsContract(
    'postgres',
    () => store,
    (maxBytes) => new PostgresKeptRounds(db.sql, { maxBytes }),
  );

  test('postgres: the sweep deletes expired rows only, and the timer runs it', async () => {
    await db.sql`delete from kept_rounds`;
    await store.put('old', 'x', 50);
    await store.put('new', 'y', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await store.sweep(), 1);
    assert.deepEqual(
      (await db.sql`select key from kept_rounds`).map((r) => r.key),
      ['new'],
    );
    const timed = new PostgresKeptRounds(db.sql, { maxBytes: MAX_BYTES, sweepIntervalMs: 50 });
    await timed.put('brief', 'z', 20);
    timed.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await timed.stop();
    assert.deepEqual(
      (await db.sql`select key from kept_rounds order by key`).map((r) => r.key),
      ['new'],
    );
  });
});
