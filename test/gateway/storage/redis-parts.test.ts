/**
 * The Redis parts of cluster mode against the real local Redis, each "instance" its own
 * connection under one test prefix: nonces issued by one instance spent once by another, request
 * budgets shared (and per-instance insurance while Redis is away), chat leases capped across
 * instances and freed by their TTL when the holder stops renewing, and the "Redis is back" signal.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { openSharedRedis, type SharedRedis } from '../../../gateway/storage/redis/shared-redis.js';
import { RedisNonces } from '../../../gateway/storage/redis/redis-nonces.js';
import { redisLimiters } from '../../../gateway/storage/redis/redis-rate-limits.js';
import { ChatLeases } from '../../../gateway/storage/redis/redis-chat-leases.js';
import { StoreUnavailable } from '../../../gateway/errors.js';
import { clusterServices, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';

const services = await clusterServices();
const A = '0x' + 'a'.repeat(40);
const B = '0x' + 'b'.repeat(40);
const C = '0x' + 'c'.repeat(40);
const unavailable = (err: unknown) => err instanceof StoreUnavailable && err.status === 503 && err.code === 'store_unavailable';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cluster mode on Redis', { skip: services.skip }, () => {
  const space = freshRedisPrefix();
  const opened: SharedRedis[] = [];
  async function instance(): Promise<SharedRedis> {
    const redis = await openSharedRedis({ url: REDIS_URL, prefix: space.prefix });
    opened.push(redis);
    return redis;
  }
  after(async () => {
    await Promise.all(opened.map((redis) => redis.close()));
    await space.clear();
  });

  test('a nonce issued by one instance is spent once by another, by its wallet only; 20 racing spends: one wins', async () => {
    const [one, two] = [new RedisNonces(await instance(), { ttlMs: 60_000 }), new RedisNonces(await instance(), { ttlMs: 60_000 })];
    const { nonce, expiresAt } = await one.issue(A);
    assert.match(nonce, /^[A-Za-z0-9]{96}$/);
    assert.ok(expiresAt > Date.now() + 59_000);
    assert.equal(await two.consume(nonce, B), false, 'another wallet cannot spend it');
    assert.equal(await two.consume(nonce, A), true);
    assert.equal(await one.consume(nonce, A), false, 'never twice, on any instance');
    const raced = (await one.issue(A)).nonce;
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).consume(raced, A)));
    assert.equal(wins.filter(Boolean).length, 1);
  });

  test('a nonce expires by its TTL; a wallet keeps at most 5, the oldest evicted', async () => {
    const short = new RedisNonces(await instance(), { ttlMs: 150 });
    const late = (await short.issue(A)).nonce;
    await sleep(200);
    assert.equal(await short.consume(late, A), false, 'expired');
    const nonces = new RedisNonces(await instance(), { ttlMs: 60_000 });
    const issued = [];
    for (let i = 0; i < 6; i++) issued.push((await nonces.issue(B)).nonce);
    assert.equal(await nonces.consume(issued[0], B), false, 'the sixth evicted the first');
    for (const nonce of issued.slice(1)) assert.equal(await nonces.consume(nonce, B), true);
  });

  test('Redis unreachable: issuing and spending nonces are StoreUnavailable (503 store_unavailable)', async () => {
    const redis = await instance();
    const nonces = new RedisNonces(redis, { ttlMs: 60_000 });
    redis.client.disconnect(); // no reconnect: down from here on
    for (const attempt of [() => nonces.issue(A), () => nonces.consume('x'.repeat(96), A)]) {
      await assert.rejects(attempt, unavailable);
    }
  });

  test('a start against an unreachable Redis names it, without the password', async () => {
    await assert.rejects(openSharedRedis({ url: 'redis://:hunter2@127.0.0.1:9', prefix: space.prefix }), (err: unknown) => {
      assert.ok(err instanceof StoreUnavailable);
      assert.match(err.message, /^Redis at redis:\/\/127\.0\.0\.1:9 cannot be reached: /);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
  });

  test('a request budget of 10 is shared by three instances; without Redis each instance falls back to its own', async () => {
    const limiters = await Promise.all([instance(), instance(), instance()]);
    const budgets = limiters.map((redis) => redisLimiters(redis)('wallet', { points: 10, durationSec: 60 }));
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => budgets[i % 3].consume(A)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 10);
    for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof RateLimiterRes);
    limiters[0].client.disconnect();
    const alone = await Promise.allSettled(Array.from({ length: 12 }, () => budgets[0].consume(B)));
    assert.equal(alone.filter((o) => o.status === 'fulfilled').length, 10, 'the insurance limiter: 10 in this instance');
  });

  test('chat leases: a cap of 3 holds across instances; a released lease frees its slot', async () => {
    const [one, two] = [new ChatLeases(await instance()), new ChatLeases(await instance())];
    try {
      const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).acquire(A, 3)));
      const held = taken.filter((release) => release !== undefined);
      assert.equal(held.length, 3);
      assert.equal(await one.acquire(A, 3), undefined);
      assert.ok(await one.acquire(B, 3), 'another wallet has its own slots');
      held[0]!();
      await sleep(50); // the release is not awaited by the request
      assert.ok(await two.acquire(A, 3), 'a released slot is free again');
    } finally {
      one.stop();
      two.stop();
    }
  });

  test('a killed holder cannot leak slots: leases it stops renewing expire; renewed ones do not', async () => {
    const dead = new ChatLeases(await instance(), 300);
    const alive = new ChatLeases(await instance(), 300);
    try {
      assert.ok(await dead.acquire(C, 2));
      assert.ok(await alive.acquire(C, 2));
      dead.stop();
      assert.equal(await alive.acquire(C, 2), undefined, 'both slots taken');
      await sleep(450);
      const again = await alive.acquire(C, 2);
      assert.ok(again, "the dead holder's lease expired; the renewed one is still held");
      assert.equal(await alive.acquire(C, 2), undefined);
    } finally {
      dead.stop();
      alive.stop();
    }
  });

  test('Redis lost and back: onReturn listeners run once it answers again', async () => {
    const redis = await instance();
    let returned = 0;
    redis.onReturn(() => void returned++);
    const id = await redis.client.client('ID');
    const killer = await instance();
    await killer.client.client('KILL', 'ID', String(id));
    const deadline = Date.now() + 5_000;
    while (returned === 0 && Date.now() < deadline) await sleep(20);
    assert.equal(returned, 1);
    assert.equal(redis.up(), true);
  });
});
