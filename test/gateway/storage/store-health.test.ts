/**
 * `/health` reports the store: `store: "up"` normally; when either of its files fails (the keys'
 * read, the ledger's commit), the gateway cannot serve, so the answer is HTTP 503 with status
 * `degraded`. The probe times out, is cached for a second and shared by concurrent probes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { storeHealth } from '../../../gateway/storage/store-health.js';
import { STORE_FILE } from '../../../gateway/storage/sqlite/keyv-store.js';
import { startTestGateway, WALLET } from '../../helpers/gateway.js';

/** A stand-in store whose probe does what `probe` says. */
function fakeStore(probe: () => Promise<unknown>): { probe(): Promise<unknown> } {
  return { probe };
}

/** Past the cached answer of the last probe. */
const pastCache = () => new Promise((resolve) => setTimeout(resolve, 1_100));

test('a store that fails makes /health 503 with status degraded and store: down', async () => {
  const gw = await startTestGateway();
  try {
    const up = await fetch(`${gw.url}/health`);
    assert.equal(up.status, 200);
    assert.equal((await up.json()).store, 'up');
    await gw.store!.close(); // every read now fails (SQLITE_MISUSE)
    await pastCache();
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

test('a ledger file that refuses commits is down, though every read passes; up again once it takes them', async () => {
  const gw = await startTestGateway();
  // The test's own connection to the ledger's file (same SQLite library, so locks are shared).
  const file = new Database(join(gw.dataDir, STORE_FILE));
  try {
    assert.equal((await fetch(`${gw.url}/health`)).status, 200);
    // What a full disk does to every write, raised by SQLite on the gateway's own connection.
    for (const [table, change] of [
      ['ledger_meta', 'INSERT'],
      ['ledger_meta', 'UPDATE'],
      ['ledger_wallets', 'INSERT'],
      ['ledger_wallets', 'UPDATE'],
    ]) {
      file.exec(
        `CREATE TRIGGER full_${table}_${change} BEFORE ${change} ON ${table} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`,
      );
    }
    await pastCache();
    const down = await fetch(`${gw.url}/health`);
    assert.equal(down.status, 503);
    assert.deepEqual(
      { status: (await down.json()).status, keysRead: await gw.store!.keys.get('health:probe') },
      { status: 'degraded', keysRead: undefined },
      'degraded while the keys file still reads',
    );
    // And /health says what a charge meets: the ledger cannot commit.
    await assert.rejects(gw.ledger.grant(WALLET, 5), { code: 'store_unavailable' });

    for (const { name } of file.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ name: string }>) {
      file.exec(`DROP TRIGGER ${name}`);
    }
    await pastCache();
    const up = await fetch(`${gw.url}/health`);
    assert.equal(up.status, 200);
    assert.equal((await up.json()).store, 'up');
    assert.equal((await gw.ledger.grant(WALLET, 5)).credits, 5);
  } finally {
    file.close();
    await gw.stop();
  }
});

test('a read that does not answer in time counts as down', async () => {
  const health = storeHealth(
    fakeStore(() => new Promise(() => {})),
    { timeoutMs: 20 },
  );
  assert.deepEqual(await health.health(), { fields: { store: 'down' }, cannotServe: true });
});

test('the answer is reused for cacheMs, and concurrent probes share one read', async () => {
  let now = 0;
  let reads = 0;
  let fail = false;
  const health = storeHealth(
    fakeStore(async () => {
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
