/**
 * The deposit watcher against a real Hardhat node, with the embedded ledger and deposit store on
 * a real SQLite file, reading through a JSON-RPC proxy that records every method: confirmations,
 * ignored transfers, reorgs (evm_snapshot / evm_revert: the transfer dropped, or mined again
 * elsewhere), a crash between seeing and crediting, a cursor reset, remainders, paging under a
 * provider's range cap, a flaky RPC, and no method but reads ever sent.
 */
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type SqliteConnection } from '../../../gateway/storage/sqlite/sqlite-connection.js';
import { openEmbeddedLedger, type EmbeddedLedger } from '../../../gateway/ledger/embedded-ledger.js';
import { openSqliteDepositStore, type SqliteDepositStore } from '../../../gateway/storage/sqlite/sqlite-deposit-store.js';
import { createChainReader } from '../../../gateway/deposits/chain-reader.js';
import { DepositWatcher, type WatchedChain } from '../../../gateway/deposits/deposit-watcher.js';
import type { DepositStore } from '../../../gateway/deposits/deposit-store.js';
import { startRpcProxy, type JsonRpcCall, type RpcProxy } from '../../helpers/rpc-proxy.js';
import { DECIMALS, UNITS_PER_CREDIT, startDepositChain, type DepositChain } from './deposit-chain.js';

const CONFIRMATIONS = 3;
const READ_METHODS = new Set(['eth_chainId', 'eth_blockNumber', 'eth_getBlockByNumber', 'eth_getLogs']);

describe('deposit watcher on a Hardhat node', () => {
  let chain: DepositChain;
  let proxy: RpcProxy;
  /** A provider's cap on eth_getLogs: wider ranges are refused with -32005 (EIP-1474 "limit exceeded"). */
  let maxLogRange: number | undefined;
  let refusedRanges = 0;
  /** A backend behind the others: it knows no block yet at the heights the watcher asks about. */
  let blocksUnknown = false;
  const refuseWideRanges = (call: JsonRpcCall) => {
    if (call.method === 'eth_getBlockByNumber' && blocksUnknown) return { jsonrpc: '2.0' as const, id: call.id, result: null };
    if (call.method !== 'eth_getLogs' || maxLogRange === undefined) return undefined;
    const { fromBlock, toBlock } = call.params?.[0] as { fromBlock: string; toBlock: string };
    if (Number(BigInt(toBlock) - BigInt(fromBlock)) + 1 <= maxLogRange) return undefined;
    refusedRanges++;
    return { jsonrpc: '2.0' as const, id: call.id, error: { code: -32005, message: `query exceeds max block range ${maxLogRange}` } };
  };
  let dir: string;
  let db: SqliteConnection;
  let ledger: EmbeddedLedger;
  let store: SqliteDepositStore;
  let watched: WatchedChain;
  const watchers: DepositWatcher[] = [];

  before(async () => {
    chain = await startDepositChain();
    proxy = await startRpcProxy(chain.node.url, { answer: refuseWideRanges });
  });
  after(async () => {
    await proxy?.close();
    await chain?.stop();
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-deposits-'));
    db = await openSqlite(join(dir, 'store.sqlite'));
    ledger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    store = await openSqliteDepositStore(join(dir, 'store.sqlite'));
    // Each test starts after everything earlier tests sent.
    watched = {
      key: 'local',
      name: 'Local',
      chainId: 31337,
      treasury: chain.treasury.toLowerCase(),
      confirmations: CONFIRMATIONS,
      startBlock: (await chain.head()) + 1,
      tokens: [{ symbol: 'USDC', address: chain.usdc.toLowerCase(), decimals: DECIMALS, unitsPerCredit: UNITS_PER_CREDIT }],
    };
  });
  afterEach(async () => {
    for (const watcher of watchers.splice(0)) await watcher.stop();
    proxy.failEveryOther = false;
    maxLogRange = undefined;
    blocksUnknown = false;
    await store.close();
    await ledger.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function watcher(options: { store?: DepositStore; maxBlockRange?: number; ledger?: EmbeddedLedger } = {}): DepositWatcher {
    const made = new DepositWatcher({
      chain: watched,
      reader: createChainReader({ chainId: 31337, rpcUrls: [proxy.url], timeoutMs: 5_000 }),
      store: options.store ?? store,
      ledger: options.ledger ?? ledger,
      pollIntervalMs: 20,
      maxBlockRange: options.maxBlockRange ?? 1_000,
    });
    watchers.push(made);
    return made;
  }

  async function depositsOf(wallet: string) {
    return store.forWallet(wallet, { limit: 100 });
  }

  async function until(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  test('a transfer is pending, then credited after N confirmations with the right credits and total_deposited', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    const w = watcher();
    const sent = await chain.transfer({ from: 1, amount: 2_500_000n }); // 2.5 USDC = 250 credits
    await w.pass();
    let [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'pending');
    assert.equal(deposit.txHash, sent.hash);
    assert.equal(deposit.blockNumber, sent.blockNumber);
    assert.equal(deposit.amount, 2_500_000n);
    assert.equal(deposit.token, chain.usdc.toLowerCase());
    for (let confirmations = 2; confirmations < CONFIRMATIONS; confirmations++) {
      await chain.mine(1);
      await w.pass();
      assert.equal((await depositsOf(depositor))[0].status, 'pending', `${confirmations} confirmations`);
      assert.equal((await ledger.balance(depositor)).credits, 0);
    }
    await chain.mine(1);
    await w.pass();
    [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'credited');
    assert.equal(deposit.credits, 250);
    assert.deepEqual(await ledger.balance(depositor), { address: depositor, credits: 250, total_deposited: 250, total_spent: 0 });
    await chain.mine(2);
    await w.pass();
    assert.equal((await ledger.balance(depositor)).total_deposited, 250, 'later passes add nothing');
  });

  test('a tag rule (finalized) credits once the node tags the block finalized', async () => {
    // Hardhat has no consensus layer: it tags its latest block `finalized` (and `safe`).
    const depositor = chain.depositors[1].toLowerCase();
    watched = { ...watched, confirmations: 'finalized' };
    const blockReads = proxy.callCount('eth_getBlockByNumber');
    await chain.transfer({ from: 2, amount: 70_000n });
    await watcher().pass();
    assert.equal((await depositsOf(depositor))[0].status, 'credited');
    assert.equal((await ledger.balance(depositor)).credits, 7);
    assert.ok(proxy.callCount('eth_getBlockByNumber') > blockReads);
  });

  test('a transfer to another address and a token not configured are ignored', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    const w = watcher();
    await chain.transfer({ from: 1, to: chain.node.accounts[4].address, amount: 5_000_000n });
    await chain.transfer({ from: 1, token: chain.other, amount: 5_000_000n });
    await chain.mine(CONFIRMATIONS + 1);
    await w.pass();
    assert.deepEqual(await depositsOf(depositor), []);
    assert.equal((await ledger.balance(depositor)).total_deposited, 0);
  });

  test('remainders below one credit add up across deposits', async () => {
    const depositor = chain.depositors[1].toLowerCase();
    const w = watcher();
    await chain.transfer({ from: 2, amount: 1_234_560n }); // 123 credits, 4560 units left
    await chain.transfer({ from: 2, amount: 5_439n }); // 9999 left: no credit yet
    await chain.mine(CONFIRMATIONS);
    await w.pass();
    assert.equal((await ledger.balance(depositor)).credits, 123);
    await chain.transfer({ from: 2, amount: 1n }); // exactly one credit more
    await chain.mine(CONFIRMATIONS);
    await w.pass();
    const deposits = await depositsOf(depositor);
    assert.deepEqual(
      deposits.map((d) => [d.amount, d.credits, d.status]),
      [
        [1n, 1, 'credited'],
        [5_439n, 0, 'credited'],
        [1_234_560n, 123, 'credited'],
      ],
    );
    assert.deepEqual(await ledger.balance(depositor), { address: depositor, credits: 124, total_deposited: 124, total_spent: 0 });
  });

  test('a reorg that drops the transfer: marked reorged, never credited', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    const w = watcher();
    const snapshot = await chain.snapshot();
    await chain.transfer({ from: 1, amount: 7_000_000n });
    await chain.mine(1);
    await w.pass();
    assert.equal((await depositsOf(depositor))[0].status, 'pending');
    await chain.revert(snapshot);
    await chain.mine(CONFIRMATIONS + 3); // a longer chain without it
    await w.pass();
    await w.pass();
    const [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'reorged');
    assert.equal(deposit.credits, null);
    assert.equal((await ledger.balance(depositor)).total_deposited, 0);
  });

  test('a node behind the head that knows no block at the height: not a reorg; the deposit is credited on a later pass', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    const w = watcher();
    await chain.transfer({ from: 1, amount: 1_000_000n });
    await chain.mine(CONFIRMATIONS);
    blocksUnknown = true;
    await w.pass();
    assert.equal((await depositsOf(depositor))[0].status, 'pending');
    blocksUnknown = false;
    await w.pass();
    const [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'credited');
    assert.equal(deposit.credits, 100);
  });

  test('a reorg that mines the same transfer elsewhere: re-recorded where it landed, credited once', async () => {
    const depositor = chain.depositors[1].toLowerCase();
    const w = watcher();
    const snapshot = await chain.snapshot();
    const raw = await chain.signTransfer({ from: 2, amount: 3_000_000n }); // 300 credits
    const first = await chain.send(raw);
    await w.pass();
    await chain.revert(snapshot);
    await chain.mine(CONFIRMATIONS + 2); // its old block is settled and no longer has it
    await w.pass();
    assert.equal((await depositsOf(depositor))[0].status, 'reorged');
    const again = await chain.send(raw); // the same signed transaction, in a later block
    assert.equal(again.hash, first.hash);
    assert.notEqual(again.blockNumber, first.blockNumber);
    await w.pass();
    let [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'pending');
    assert.equal(deposit.blockNumber, again.blockNumber);
    assert.equal(deposit.blockHash, again.blockHash);
    await chain.mine(CONFIRMATIONS);
    await w.pass();
    await w.pass();
    [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'credited');
    assert.deepEqual(await ledger.balance(depositor), { address: depositor, credits: 300, total_deposited: 300, total_spent: 0 });
    assert.equal((await depositsOf(depositor)).length, 1, 'one record: (chain, tx hash, log index) is its identity');
  });

  test('a crash between seeing and crediting resumes without loss; a crash after the credit does not credit twice', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    await chain.transfer({ from: 1, amount: 1_000_000n }); // 100 credits
    await watcher().pass();
    assert.equal((await depositsOf(depositor))[0].status, 'pending');
    // "Crash": a new ledger, store and watcher on the same file; the first never ran again.
    await chain.mine(CONFIRMATIONS);
    const restartedLedger = await openEmbeddedLedger(db, { reservationTtlMs: 60_000 });
    // This one dies after the ledger committed the credit, before the record says so.
    const dying: DepositStore = Object.assign(Object.create(store) as DepositStore, {
      markCredited: async () => {
        throw new Error('killed');
      },
    });
    await assert.rejects(watcher({ store: dying, ledger: restartedLedger }).pass(), /killed/);
    assert.equal((await depositsOf(depositor))[0].status, 'pending');
    assert.equal((await restartedLedger.balance(depositor)).credits, 100);
    await watcher({ ledger: restartedLedger }).pass();
    assert.equal((await depositsOf(depositor))[0].status, 'credited');
    assert.equal((await depositsOf(depositor))[0].credits, 100);
    assert.deepEqual(await restartedLedger.balance(depositor), { address: depositor, credits: 100, total_deposited: 100, total_spent: 0 });
    await restartedLedger.stop();
  });

  test('a cursor reset to startBlock (even with the deposit records lost) never credits twice', async () => {
    const depositor = chain.depositors[1].toLowerCase();
    const w = watcher();
    await chain.transfer({ from: 2, amount: 2_000_000n });
    await chain.mine(CONFIRMATIONS);
    await w.pass();
    assert.equal((await ledger.balance(depositor)).credits, 200);
    await db.run('DELETE FROM deposit_cursors');
    await w.pass();
    await db.run('DELETE FROM deposits');
    await db.run('DELETE FROM deposit_cursors');
    await w.pass();
    const [deposit] = await depositsOf(depositor);
    assert.equal(deposit.status, 'credited');
    assert.equal(deposit.credits, 200, 'the ledger answers what the first credit added');
    assert.deepEqual(await ledger.balance(depositor), { address: depositor, credits: 200, total_deposited: 200, total_spent: 0 });
  });

  test('eth_getLogs is paged, and a provider range cap halves the pages until they fit', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    await chain.mine(40);
    await chain.transfer({ from: 1, amount: 100_000n });
    await chain.mine(20);
    await chain.transfer({ from: 1, amount: 200_000n });
    await chain.mine(CONFIRMATIONS);
    maxLogRange = 8;
    const calls = proxy.callCount('eth_getLogs');
    await watcher({ maxBlockRange: 50 }).pass();
    assert.ok(refusedRanges > 0, 'the cap was hit');
    const getLogs = proxy.callCount('eth_getLogs') - calls;
    assert.ok(getLogs >= 8, `${getLogs} eth_getLogs calls for ~66 blocks under a cap of 8`);
    assert.deepEqual(
      (await depositsOf(depositor)).map((d) => [d.amount, d.status]),
      [
        [200_000n, 'credited'],
        [100_000n, 'credited'],
      ],
    );
    assert.equal((await ledger.balance(depositor)).credits, 30);
  });

  test('a halved page grows back once pages fit again (the cap lifted, or another provider), and stays put under a fixed cap', async () => {
    const w = watcher({ maxBlockRange: 64 });
    await chain.mine(70);
    maxLogRange = 8;
    await w.pass();
    // Under a fixed cap every try to grow is refused, and tries grow rarer: 4, 8, 16… pages apart.
    await chain.mine(200);
    const refusedBefore = refusedRanges;
    const cappedCalls = proxy.callCount('eth_getLogs');
    await w.pass();
    const capped = proxy.callCount('eth_getLogs') - cappedCalls;
    assert.ok(
      capped >= 25 && refusedRanges - refusedBefore <= 4,
      `${capped} calls, ${refusedRanges - refusedBefore} refused for 200 blocks under a cap of 8`,
    );
    // Cap lifted: the next try to grow fits, and 600 blocks take far fewer than 75 pages of 8.
    maxLogRange = undefined;
    await chain.mine(600);
    const calls = proxy.callCount('eth_getLogs');
    await w.pass();
    const getLogs = proxy.callCount('eth_getLogs') - calls;
    assert.ok(getLogs <= 50, `${getLogs} eth_getLogs calls for ~600 blocks once the cap is gone`);
  });

  test('a flaky RPC (every other call fails) delays but does not lose a deposit', async () => {
    const depositor = chain.depositors[0].toLowerCase();
    proxy.failEveryOther = true;
    const failuresBefore = proxy.failures;
    watcher().start();
    await chain.transfer({ from: 1, amount: 4_200_000n });
    await chain.mine(CONFIRMATIONS);
    await until(async () => (await depositsOf(depositor))[0]?.status === 'credited');
    assert.ok(proxy.failures > failuresBefore, 'the proxy did fail calls');
    assert.deepEqual(await ledger.balance(depositor), { address: depositor, credits: 420, total_deposited: 420, total_spent: 0 });
  });

  test('a dead first RPC URL: the watcher reads through the next one', async () => {
    const depositor = chain.depositors[1].toLowerCase();
    const w = new DepositWatcher({
      chain: watched,
      reader: createChainReader({ chainId: 31337, rpcUrls: ['http://127.0.0.1:9', proxy.url], timeoutMs: 2_000 }),
      store,
      ledger,
      pollIntervalMs: 20,
      maxBlockRange: 1_000,
    });
    await chain.transfer({ from: 2, amount: 60_000n });
    await chain.mine(CONFIRMATIONS);
    await w.pass();
    assert.equal((await depositsOf(depositor))[0].status, 'credited');
    assert.equal((await ledger.balance(depositor)).credits, 6);
  });

  test('a deposit the ledger refuses stays pending and does not hold up the others', async () => {
    const [first, second] = chain.depositors.map((d) => d.toLowerCase());
    const refused = await chain.transfer({ from: 1, amount: 10_000n });
    await chain.transfer({ from: 2, amount: 20_000n });
    // The ledger already holds this deposit's id with other terms (a corrupted or foreign record).
    await ledger.creditExternal({
      wallet: first,
      source: 'deposit',
      externalId: `31337:${refused.hash}:0`,
      units: 1n,
      unitsPerCredit: 1n,
      remainderKey: 'elsewhere',
    });
    await chain.mine(CONFIRMATIONS);
    await watcher().pass();
    assert.equal((await depositsOf(first))[0].status, 'pending');
    assert.equal((await depositsOf(second))[0].status, 'credited');
    assert.equal((await ledger.balance(second)).credits, 2);
  });

  test('the watcher never sends a transaction: the proxy saw only read methods', () => {
    const total = Object.values(proxy.calls).reduce((sum, n) => sum + n, 0);
    assert.ok(total > 50, `${total} calls seen`);
    const others = Object.keys(proxy.calls).filter((method) => !READ_METHODS.has(method));
    assert.deepEqual(others, []);
  });
});
