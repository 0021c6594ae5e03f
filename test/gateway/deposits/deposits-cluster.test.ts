/**
 * Cluster mode: every instance runs its watchers against the same PostgreSQL. Three "instances"
 * (three pools, each with its ledger, deposit store and watcher) scanning one Hardhat node at the
 * same time record each log once and credit each deposit once; a reorged deposit is credited by
 * none of them. With the watch lease, one instance scans at a time and another takes over when it
 * stops or its session dies.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Database } from '../../../gateway/storage/postgres/database.js';
import { migrate } from '../../../gateway/storage/postgres/migrate.js';
import { PostgresLedger } from '../../../gateway/ledger/postgres-ledger.js';
import { PostgresDepositStore } from '../../../gateway/storage/postgres/postgres-deposit-store.js';
import { createChainReader } from '../../../gateway/deposits/chain-reader.js';
import { DepositWatcher, type WatchedChain } from '../../../gateway/deposits/deposit-watcher.js';
import { PostgresWatchLease } from '../../../gateway/storage/postgres/postgres-watch-lease.js';
import type { ChainReader } from '../../../gateway/deposits/chain-reader.js';
import { clusterServices, freshDatabase } from '../../helpers/cluster-services.js';
import { DECIMALS, UNITS_PER_CREDIT, startDepositChain, type DepositChain } from './deposit-chain.js';

const services = await clusterServices();
const CONFIRMATIONS = 2;

describe('deposit watchers on every cluster instance', { skip: services.skip }, () => {
  let chain: DepositChain;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const pools: Database[] = [];
  let instances: Array<{ ledger: PostgresLedger; store: PostgresDepositStore; watcher: DepositWatcher }>;
  let watched: WatchedChain;

  before(async () => {
    chain = await startDepositChain();
    database = await freshDatabase();
    for (let i = 0; i < 3; i++) pools.push(await openDatabase(database.url, { max: 3 }));
    await Promise.all(pools.map((pool) => migrate(pool.sql)));
    watched = {
      key: 'local',
      name: 'Local',
      chainId: 31337,
      treasury: chain.treasury.toLowerCase(),
      confirmations: CONFIRMATIONS,
      startBlock: (await chain.head()) + 1,
      tokens: [{ symbol: 'USDC', address: chain.usdc.toLowerCase(), decimals: DECIMALS, unitsPerCredit: UNITS_PER_CREDIT }],
    };
    instances = pools.map((pool) => {
      const ledger = new PostgresLedger(pool.sql, { reservationTtlMs: 60_000 });
      const store = new PostgresDepositStore(pool.sql);
      const reader = createChainReader({ chainId: 31337, rpcUrls: [chain.node.url], timeoutMs: 5_000 });
      return {
        ledger,
        store,
        watcher: new DepositWatcher({ chain: watched, reader, store, ledger, pollIntervalMs: 20, maxBlockRange: 1_000 }),
      };
    });
  });
  after(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await database?.drop();
    await chain?.stop();
  });

  const passAll = () => Promise.all(instances.map(({ watcher }) => watcher.pass()));

  test('three instances passing at once record each log once and credit each deposit once', async () => {
    const [alice, bob] = chain.depositors.map((d) => d.toLowerCase());
    await chain.transfer({ from: 1, amount: 1_000_000n }); // 100 credits
    await chain.transfer({ from: 2, amount: 555_555n }); // 55 credits, 5555 left
    await chain.transfer({ from: 2, amount: 4_445n }); // the remainder's missing 4445: 1 credit
    await passAll();
    const [seen] = await pools[0].sql<Array<{ n: number }>>`select count(*)::int as n from deposits`;
    assert.equal(seen.n, 3, 'one row per log, whoever saw it first');
    await chain.mine(CONFIRMATIONS);
    for (let round = 0; round < 3; round++) await passAll();
    const rows = await pools[0].sql<Array<{ status: string; credits: number }>>`select status, credits from deposits order by seq`;
    assert.deepEqual(
      rows.map((r) => [r.status, r.credits]),
      [
        ['credited', 100],
        ['credited', 55],
        ['credited', 1],
      ],
    );
    assert.deepEqual(await instances[1].ledger.balance(alice), { address: alice, credits: 100, total_deposited: 100, total_spent: 0 });
    assert.deepEqual(await instances[2].ledger.balance(bob), { address: bob, credits: 56, total_deposited: 56, total_spent: 0 });
    const [records] = await pools[0].sql<Array<{ n: number }>>`select count(*)::int as n from external_credits where source = 'deposit'`;
    assert.equal(records.n, 3);
  });

  test('instances running their loops through a reorg credit nothing that was dropped', async () => {
    const alice = chain.depositors[0].toLowerCase();
    const before = (await instances[0].ledger.balance(alice)).total_deposited;
    const snapshot = await chain.snapshot();
    await chain.transfer({ from: 1, amount: 9_000_000n });
    await passAll();
    await chain.revert(snapshot);
    await chain.mine(CONFIRMATIONS + 3);
    for (const { watcher } of instances) watcher.start();
    try {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const rows = await pools[0].sql<Array<{ status: string }>>`select status from deposits where amount = 9000000`;
        if (rows.length === 1 && rows[0].status === 'reorged') break;
        if (Date.now() > deadline) throw new Error(`not reorged: ${JSON.stringify(rows)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      await chain.mine(2);
      await new Promise((r) => setTimeout(r, 200)); // a few more passes of every instance
    } finally {
      await Promise.all(instances.map(({ watcher }) => watcher.stop()));
    }
    assert.equal((await instances[0].ledger.balance(alice)).total_deposited, before);
  });

  test('with the watch lease one instance scans at a time; another takes over when it stops or its session dies', async () => {
    const leases = [0, 1, 2].map(() => new PostgresWatchLease(database.url));
    const scans = [0, 0, 0];
    const leased = leases.map((lease, i) => {
      const reader = createChainReader({ chainId: 31337, rpcUrls: [chain.node.url], timeoutMs: 5_000 });
      const counted: ChainReader = { ...reader, transfersTo: (query) => (scans[i]++, reader.transfersTo(query)) };
      const { ledger, store } = instances[i];
      return new DepositWatcher({ chain: watched, reader: counted, store, ledger, pollIntervalMs: 20, maxBlockRange: 1_000, lease });
    });
    try {
      const alice = chain.depositors[0].toLowerCase();
      const before = (await instances[0].ledger.balance(alice)).total_deposited;
      await chain.transfer({ from: 1, amount: 2_000_000n }); // 200 credits
      await chain.mine(CONFIRMATIONS);
      for (let round = 0; round < 3; round++) await Promise.all(leased.map((watcher) => watcher.pass()));
      const scanning = scans.flatMap((count, i) => (count > 0 ? [i] : []));
      assert.equal(scanning.length, 1, `one instance scanned: ${scans.join(', ')}`);
      const [holder] = scanning;
      assert.deepEqual(
        leased.map((watcher) => watcher.status.standby),
        leased.map((_, i) => i !== holder),
      );
      // Standbys still know the head, so the deposits they list count their confirmations.
      const head = await chain.head();
      assert.deepEqual(
        leased.map((watcher) => watcher.status.head),
        leased.map(() => head),
      );
      assert.equal((await instances[0].ledger.balance(alice)).total_deposited, before + 200);

      // The holder shuts down: its lease goes, the next pass of another takes it.
      await leases[holder].release();
      scans.fill(0);
      const others = [0, 1, 2].filter((i) => i !== holder);
      await Promise.all(others.map((i) => leased[i].pass()));
      const next = others.find((i) => scans[i] > 0);
      assert.ok(next !== undefined && others.filter((i) => scans[i] > 0).length === 1, `one took over: ${scans.join(', ')}`);

      // The new holder's session dies (its process killed): PostgreSQL ends the session, and the lock with it.
      // Only this test's database: other test files run beside this one on the same server.
      const killed = await pools[0].sql<Array<{ pid: number }>>`
        select pid from pg_locks
        where locktype = 'advisory' and granted and objsubid = 2 and pid <> pg_backend_pid()
          and database = (select oid from pg_database where datname = current_database())`;
      assert.equal(killed.length, 1, 'one session holds the lease');
      await pools[0].sql`select pg_terminate_backend(${killed[0].pid}::int)`;
      // The backend exits (and frees its locks) a moment after it is told to.
      for (const deadline = Date.now() + 10_000; ;) {
        const [alive] = await pools[0].sql<
          Array<{ n: number }>
        >`select count(*)::int as n from pg_stat_activity where pid = ${killed[0].pid}::int`;
        if (alive.n === 0) break;
        if (Date.now() > deadline) throw new Error('the terminated backend did not exit');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      scans.fill(0);
      const last = [0, 1, 2].find((i) => i !== holder && i !== next)!;
      await leased[last].pass();
      assert.ok(scans[last] > 0, 'the last instance took over from the dead session');
      assert.equal(leased[last].status.standby, false);
      // The instance whose session died finds out on its next pass (the client may fail one query
      // on the closed connection first): a new session holds nothing, so it stands by.
      await leased[next!].pass().catch(() => {});
      await leased[next!].pass();
      assert.equal(leased[next!].status.standby, true);
      scans.fill(0);
      await Promise.all(leased.map((watcher) => watcher.pass()));
      assert.deepEqual(
        scans.map((count) => count > 0),
        [0, 1, 2].map((i) => i === last),
        `only the last scans: ${scans.join(', ')}`,
      );
    } finally {
      await Promise.all(leases.map((lease) => lease.release()));
    }
  });
});
