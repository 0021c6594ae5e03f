/**
 * Key limits in cluster mode: three in-process gateways on one PostgreSQL (a throw-away database)
 * and one Redis (a throw-away prefix). A key's budget is PostgreSQL's (`ledger_batch` takes from
 * wallet and key under both row locks), so three instances together never let it spend past its
 * cap; a change of limits through one instance reaches the others' key caches within 1 s.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { clusterServices, freshDatabase, freshRedisPrefix, REDIS_URL } from '../../helpers/cluster-services.js';
import { ALICE, call, signedProof, startAccountsGateway } from '../../helpers/accounts.js';
import { burstOfExecutes, mintKeyWith } from '../../helpers/key-limits.js';

const services = await clusterServices();
const wallet = ALICE.address.toLowerCase();

describe('key limits across three cluster instances', { skip: services.skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const space = freshRedisPrefix();
  let gateways: TestGateway[] = [];

  before(async () => {
    database = await freshDatabase();
    const env = { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: space.prefix };
    const plenty = { points: 100_000, durationSec: 60 };
    // One after another: the first applies the migrations.
    for (let i = 0; i < 3; i++) {
      gateways.push(await startAccountsGateway({ env, config: (json) => (json.limits = { perWallet: plenty, perIp: plenty }) }));
    }
  });
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    gateways = [];
    await database?.drop();
    await space.clear();
  });

  test('200 concurrent executes over three instances on a key capped at 50, wallet 1,000: exactly 50 of 200, 150 of 402 key_budget_exhausted', async () => {
    await gateways[0].ledger.grant(wallet, 1_000);
    const minted = await mintKeyWith(gateways[1], ALICE, { max_credits: 50 });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    const counts = await burstOfExecutes(
      gateways.map((g) => g.url),
      minted.body.key,
      wallet,
      200,
    );
    assert.deepEqual(Object.fromEntries(counts), { '200': 50, '402 key_budget_exhausted': 150 });
    assert.deepEqual(await gateways[2].ledger.balance(wallet), { address: wallet, credits: 950, total_deposited: 1_000, total_spent: 50 });
    const usage = (await gateways[0].ledger.keyUsage([minted.body.id])).get(minted.body.id);
    assert.deepEqual([usage?.spent, usage?.spentToday], [50, 50]);
    // A second burst finds it spent everywhere.
    const again = await burstOfExecutes(
      gateways.map((g) => g.url),
      minted.body.key,
      wallet,
      30,
    );
    assert.deepEqual(Object.fromEntries(again), { '402 key_budget_exhausted': 30 });
  });

  test('limits changed through one instance apply on the others within 1 s (their key caches drop the key)', async () => {
    await gateways[0].ledger.grant(wallet, 100);
    const owner = (await mintKeyWith(gateways[0], ALICE, {})).body;
    assert.equal(owner.limits, null);
    const agent = (await mintKeyWith(gateways[0], ALICE, { max_credits: 100 })).body;
    const listTools = async (gateway: TestGateway) =>
      (
        await call(`${gateway.url}/v1/tools/execute`, {
          method: 'POST',
          headers: authHeaders(agent.key, wallet),
          body: { tool: 'list_tools', args: {} },
        })
      ).status;
    // Every instance has the key cached, allowed every tool.
    for (const gateway of gateways) assert.equal(await listTools(gateway), 200);
    const proof = await signedProof(gateways[0], ALICE);
    const patched = await call(`${gateways[0].url}/auth/api-keys/${agent.id}`, {
      method: 'PATCH',
      headers: authHeaders(owner.key, wallet),
      body: { tools: [], message: proof.message, signature: proof.signature },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const at = Date.now();
    for (const gateway of gateways.slice(1)) {
      let status = 200;
      while (status === 200 && Date.now() - at < 1_000) status = await listTools(gateway);
      assert.equal(status, 403, `refused by ${gateway.url} after ${Date.now() - at} ms`);
    }
  });
});
