/**
 * Cluster mode end to end, in-process: gateways started through startGateway with DATABASE_URL and
 * REDIS_URL on the real local PostgreSQL and Redis (a throw-away database and key prefix). Two
 * instances share keys (a revocation through one is refused by the other within 1 s), SIWE nonces
 * (spent once, anywhere) and request budgets; a third reaches the stores through TCP proxies, so
 * the tests can take PostgreSQL or Redis away from it and give them back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, authHeaders, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase, freshRedisPrefix, POSTGRES_URL, REDIS_URL } from '../../helpers/cluster-services.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { StoreUnavailable } from '../../../gateway/errors.js';
import { MIGRATIONS } from '../../../gateway/storage/postgres/migrations/index.js';
import { ALICE, BOB, call, errorOf, signedProof, startAccountsGateway } from '../../helpers/accounts.js';

const services = await clusterServices();
const alice = ALICE.address.toLowerCase();
const bob = BOB.address.toLowerCase();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function through(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.port = String(port);
  return parsed.toString();
}

describe('cluster mode, in-process gateways', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const space = freshRedisPrefix();
  const gateways: TestGateway[] = [];
  let env: Record<string, string>;
  let one: TestGateway;
  let two: TestGateway;

  async function clusterGateway(extra: Record<string, string> = {}, limits?: Record<string, unknown>): Promise<TestGateway> {
    const gateway = await startAccountsGateway({ env: { ...env, ...extra }, config: (json) => limits && (json.limits = limits) });
    gateways.push(gateway);
    return gateway;
  }

  before(async () => {
    database = await freshDatabase();
    env = { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: space.prefix };
    const limits = { perWallet: { points: 6, durationSec: 60 } };
    [one, two] = [await clusterGateway({}, limits), await clusterGateway({}, limits)];
  });
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await database?.drop();
    await space.clear();
  });

  test('health names both stores; the first start migrated, the second found it done', async () => {
    const health = await call(`${one.url}/health`);
    assert.equal(health.status, 200);
    assert.equal(health.body.store, 'up');
    assert.equal(health.body.postgres, 'up');
    assert.equal(health.body.redis, 'up');
    const migrated = [one, two].map((g) => g.logs.find((l) => l.msg === 'cluster mode: accounts on PostgreSQL')?.migrated);
    assert.deepEqual(migrated, [MIGRATIONS.map((m) => m.version), []]);
    assert.equal(one.store, undefined, 'no DATA_DIR store in cluster mode');
  });

  test('a key minted through one instance works on the other; revoked through one, refused by the other within 1 s', async () => {
    const { key, record } = await one.apiKeys.create({ address: alice, name: 'shared', verified: true });
    await one.ledger.grant(alice, 5);
    const onTwo = await call(`${two.url}/credits/balance`, { headers: authHeaders(key, alice) });
    assert.equal(onTwo.status, 200, 'the key is found in PostgreSQL (and cached by instance two)');
    assert.equal(onTwo.body.credits, 5);
    const revoked = await call(`${one.url}/auth/api-keys/${record.id}`, { method: 'DELETE', headers: authHeaders(key, alice) });
    assert.equal(revoked.status, 200);
    const revokedAt = Date.now();
    let answer;
    do {
      answer = await call(`${two.url}/credits/balance`, { headers: authHeaders(key, alice) });
    } while (answer.status === 200 && Date.now() - revokedAt < 1_000);
    assert.equal(errorOf(answer).code, 'invalid_api_key');
    assert.ok(Date.now() - revokedAt < 1_000, `refused after ${Date.now() - revokedAt} ms`);
  });

  test('a nonce issued by one instance is accepted once by the other, and never twice', async () => {
    const proof = await signedProof(one, BOB);
    const body = { name: 'siwe', message: proof.message, signature: proof.signature };
    const minted = await call(`${two.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(BOB.address), body });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    assert.equal(minted.body.address, bob);
    for (const gateway of [one, two]) {
      const replay = await call(`${gateway.url}/auth/api-keys`, { method: 'POST', headers: walletHeaders(BOB.address), body });
      assert.deepEqual(errorOf(replay), { status: 401, code: 'siwe_nonce_invalid', type: 'authentication_error' });
    }
  });

  test('a per-wallet budget of 6 admits 6 across both instances, not 12', async () => {
    const wallet = '0x' + '7'.repeat(40);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const answer = await fetch(`${(i % 2 ? one : two).url}/auth/nonce`, { headers: walletHeaders(wallet) });
        return answer.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 6);
    assert.equal(statuses.filter((s) => s === 429).length, 6);
  });

  test('DATABASE_URL alone: a warning, a revocation elsewhere refused within 5 s; a store down at start names it', async () => {
    const alone = await clusterGateway({ REDIS_URL: '' });
    assert.ok(alone.logs.some((l) => l.level === 40 && String(l.msg).startsWith('cluster mode without REDIS_URL: rate limits')));
    assert.equal((await call(`${alone.url}/health`)).body.redis, 'off');
    // Without Redis no broadcast reaches it: its key cache re-checks PostgreSQL every 5 s.
    const { key, record } = await one.apiKeys.create({ address: alice, name: 'no-redis', verified: true });
    assert.equal((await call(`${alone.url}/credits/balance`, { headers: authHeaders(key, alice) })).status, 200);
    await one.apiKeys.revoke(alice, record.id);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 6_000) {
      await sleep(100);
      status = (await call(`${alone.url}/credits/balance`, { headers: authHeaders(key, alice) })).status;
    }
    assert.equal(status, 401);
    assert.ok(Date.now() - revokedAt <= 5_200, `refused after ${Date.now() - revokedAt} ms`);
    const downPg = through(POSTGRES_URL, 9);
    const naming = (store: string) => (err: unknown) => err instanceof StoreUnavailable && err.message.startsWith(`${store} at `);
    await assert.rejects(clusterGateway({ DATABASE_URL: downPg }), naming('PostgreSQL'));
    await assert.rejects(clusterGateway({ REDIS_URL: 'redis://127.0.0.1:9' }), naming('Redis'));
  });

  describe('stores lost and back (through TCP proxies)', () => {
    let pgProxy: TcpProxy;
    let redisProxy: TcpProxy;
    let three: TestGateway;
    let key: string;
    before(async () => {
      pgProxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
      redisProxy = await startTcpProxy(Number(new URL(REDIS_URL).port || 6379));
      three = await clusterGateway({ DATABASE_URL: through(database.url, pgProxy.port), REDIS_URL: through(REDIS_URL, redisProxy.port) });
      key = (await three.apiKeys.create({ address: alice, name: 'faults', verified: true })).key;
    });
    after(async () => {
      await pgProxy?.close();
      await redisProxy?.close();
    });

    test('Redis down: health degraded (200), nonces 503 store_unavailable, paid routes go on; back: key cache emptied', async () => {
      assert.equal((await call(`${three.url}/credits/balance`, { headers: authHeaders(key, alice) })).status, 200);
      redisProxy.cut();
      await sleep(100);
      const health = await call(`${three.url}/health`);
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'degraded');
      assert.equal(health.body.redis, 'down');
      const nonce = await call(`${three.url}/auth/nonce`, { headers: walletHeaders(BOB.address) });
      assert.deepEqual(errorOf(nonce), { status: 503, code: 'store_unavailable', type: 'server_error' });
      assert.equal(nonce.body.error.message, 'Redis is unavailable; retry shortly.');
      assert.equal((await call(`${three.url}/credits/balance`, { headers: authHeaders(key, alice) })).status, 200, 'paid routes go on');
      // A revocation elsewhere while this instance hears nothing: refused once Redis is back.
      const listed = await one.apiKeys.list(alice);
      await one.apiKeys.revoke(alice, listed.find((k) => k.name === 'faults')!.id);
      redisProxy.restore();
      const deadline = Date.now() + 5_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        await sleep(50);
        status = (await call(`${three.url}/credits/balance`, { headers: authHeaders(key, alice) })).status;
      }
      assert.equal(status, 401, 'the cache was emptied when Redis came back');
      assert.equal((await call(`${three.url}/health`)).body.redis, 'up');
    });

    test('Redis silent (connections open, nothing answered): requests go on within the command timeout, health degraded; back: up', async () => {
      const fresh = (await three.apiKeys.create({ address: alice, name: 'redis-silent', verified: true })).key;
      const balance = async () => {
        const started = Date.now();
        const answer = await call(`${three.url}/credits/balance`, { headers: authHeaders(fresh, alice) });
        return { status: answer.status, ms: Date.now() - started };
      };
      redisProxy.stall();
      const first = await balance();
      assert.equal(first.status, 200, 'limits fell back to this instance');
      assert.ok(first.ms < 4_000, `answered in ${first.ms} ms: two budgets, each waiting at most the 1 s command timeout`);
      let health = await call(`${three.url}/health`);
      for (const deadline = Date.now() + 5_000; health.body.redis !== 'down' && Date.now() < deadline;) {
        await sleep(100);
        health = await call(`${three.url}/health`);
      }
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'degraded');
      assert.equal(health.body.redis, 'down', 'the watchdog dropped the silent connection');
      const next = await balance();
      assert.equal(next.status, 200);
      assert.ok(next.ms < 500, `answered in ${next.ms} ms: commands fail at once while the client reconnects`);
      const nonce = await call(`${three.url}/auth/nonce`, { headers: walletHeaders(BOB.address) });
      assert.deepEqual(errorOf(nonce), { status: 503, code: 'store_unavailable', type: 'server_error' });
      redisProxy.restore();
      for (const deadline = Date.now() + 5_000; health.body.redis !== 'up' && Date.now() < deadline;) {
        await sleep(100);
        health = await call(`${three.url}/health`);
      }
      assert.equal(health.body.redis, 'up');
    });

    test('PostgreSQL down: health 503 naming it, requests that need it 503 store_unavailable; back: served again', async () => {
      const fresh = (await three.apiKeys.create({ address: alice, name: 'pg-faults', verified: true })).key;
      pgProxy.cut();
      await sleep(1_100); // the health probe's answer is reused for a second
      const health = await call(`${three.url}/health`);
      assert.equal(health.status, 503);
      assert.equal(health.body.postgres, 'down');
      assert.equal(health.body.store, 'down');
      const balance = await call(`${three.url}/credits/balance`, { headers: authHeaders(fresh, alice) });
      assert.deepEqual(errorOf(balance), { status: 503, code: 'store_unavailable', type: 'server_error' });
      assert.equal(balance.body.error.message, 'PostgreSQL is unavailable; retry shortly.');
      pgProxy.restore();
      await sleep(1_100);
      assert.equal((await call(`${three.url}/health`)).status, 200);
      assert.equal((await call(`${three.url}/credits/balance`, { headers: authHeaders(fresh, alice) })).status, 200);
    });
  });
});
