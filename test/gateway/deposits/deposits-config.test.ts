/**
 * The deposits section of the config (file, DEPOSIT_TREASURY_<CHAIN> / DEPOSIT_CONFIRMATIONS_<CHAIN>),
 * how it resolves against the chain list, deposits off until a treasury is set, and the watchers'
 * part of /health (degraded once a chain has not completed a pass for `stallAfterMs`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, parseConfig } from '../../../gateway/config.js';
import { createDeposits, watchedChains, type DepositsOptions } from '../../../gateway/deposits/deposit-watchers.js';
import type { ChainReader } from '../../../gateway/deposits/chain-reader.js';
import { createMetrics } from '../../../gateway/metrics.js';
import { createLogger } from '../../../gateway/logger.js';
import { parseChainList } from '../../../chains/chain-list.js';
import type { DepositStore } from '../../../gateway/deposits/deposit-store.js';
import { startTestGateway } from '../../helpers/gateway.js';
import { waitFor } from '../tools/fixture-servers.js';

const TREASURY = '0x000000000000000000000000000000000000dEaD';
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const usdc = { symbol: 'USDC', address: USDC_BASE, decimals: 6, unitsPerCredit: 1000 };

function fileJson(deposits?: unknown): Record<string, unknown> {
  return {
    models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3:32b' } }],
    ...(deposits === undefined ? {} : { deposits }),
  };
}

const chainList = parseChainList(
  {
    chains: {
      base: { id: 8453, name: 'Base', native_symbol: 'ETH', block_time_ms: 2000, rpc_urls: ['http://127.0.0.1:9'] },
      'zksync-era': { id: 324, name: 'zkSync Era', native_symbol: 'ETH', block_time_ms: 1000, rpc_urls: ['http://127.0.0.1:9'] },
    },
  },
  {},
);

test('defaults: deposits off, finalized confirmations, 5 s polls, degraded after 10 minutes without a pass', () => {
  const config = parseConfig(fileJson({ chains: { base: { tokens: [usdc] } } }), {});
  assert.equal(config.deposits.pollIntervalMs, 5_000);
  assert.equal(config.deposits.stallAfterMs, 600_000);
  assert.equal(config.deposits.maxBlockRange, 1_000);
  assert.equal(config.deposits.chains.base.confirmations, 'finalized');
  assert.equal(config.deposits.chains.base.treasury, undefined);
  assert.equal(config.deposits.chains.base.tokens[0].unitsPerCredit, 1000n);
  assert.deepEqual(watchedChains(config.deposits, chainList), [], 'no treasury: not watched');
});

test('DEPOSIT_TREASURY_<CHAIN> and DEPOSIT_CONFIRMATIONS_<CHAIN> set or replace the file (a block count or a tag)', () => {
  const file = fileJson({ chains: { base: { treasury: '0x' + '11'.repeat(20), confirmations: 'finalized', tokens: [usdc] } } });
  const config = parseConfig(file, { DEPOSIT_TREASURY_BASE: TREASURY, DEPOSIT_CONFIRMATIONS_BASE: '12' });
  assert.equal(config.deposits.chains.base.treasury, TREASURY);
  assert.equal(config.deposits.chains.base.confirmations, 12);
  assert.equal(parseConfig(file, { DEPOSIT_CONFIRMATIONS_BASE: 'safe' }).deposits.chains.base.confirmations, 'safe');
  // A chain key with a dash is spelt with an underscore in the variable.
  const dashed = parseConfig(fileJson({ chains: { 'zksync-era': { tokens: [usdc] } } }), { DEPOSIT_TREASURY_ZKSYNC_ERA: TREASURY });
  const [watched] = watchedChains(dashed.deposits, chainList);
  assert.deepEqual(watched.watched, {
    key: 'zksync-era',
    name: 'zkSync Era',
    chainId: 324,
    treasury: TREASURY.toLowerCase(),
    confirmations: 'finalized',
    startBlock: undefined,
    tokens: [{ symbol: 'USDC', address: USDC_BASE.toLowerCase(), decimals: 6, unitsPerCredit: 1000n }],
  });
  // A rate past 2^53 is written as a string and kept exact.
  const wide = parseConfig(
    fileJson({ chains: { base: { tokens: [{ ...usdc, decimals: 18, unitsPerCredit: '10000000000000000000' }] } } }),
    {},
  );
  assert.equal(wide.deposits.chains.base.tokens[0].unitsPerCredit, 10n ** 19n);
});

test('bad deposit settings are a ConfigError naming the field', () => {
  const cases: Array<[unknown, Record<string, string>, RegExp]> = [
    [fileJson(), { DEPOSIT_TREASURY_BASE: '0x12' }, /^config: deposits\.chains\.base\.treasury: an address/],
    [fileJson(), { DEPOSIT_TREASURY_BASE: TREASURY }, /^config: deposits\.chains\.base: a treasury needs at least one token/],
    [
      fileJson({ chains: { base: { tokens: [usdc] } } }),
      { DEPOSIT_CONFIRMATIONS_BASE: 'latest' },
      /^config: deposits\.chains\.base\.confirmations/,
    ],
    [fileJson({ chains: { base: { confirmations: 0, tokens: [usdc] } } }), {}, /^config: deposits\.chains\.base\.confirmations/],
    [
      fileJson({ chains: { base: { tokens: [{ ...usdc, unitsPerCredit: 0 }] } } }),
      {},
      /^config: deposits\.chains\.base\.tokens\.0\.unitsPerCredit/,
    ],
    [
      fileJson({ chains: { base: { tokens: [{ ...usdc, unitsPerCredit: '1.5' }] } } }),
      {},
      /^config: deposits\.chains\.base\.tokens\.0\.unitsPerCredit/,
    ],
    [
      fileJson({ chains: { base: { tokens: [usdc], treasure: TREASURY } } }),
      {},
      /^config: deposits\.chains\.base: Unrecognized key: "treasure"/,
    ],
  ];
  for (const [file, env, message] of cases) {
    assert.throws(
      () => parseConfig(file, env),
      (err: unknown) => err instanceof ConfigError && message.test(err.message),
      `${JSON.stringify(env)} ${message}`,
    );
  }
  const unknownChain = parseConfig(fileJson({ chains: { atlantis: { treasury: TREASURY, tokens: [usdc] } } }), {});
  assert.throws(
    () => watchedChains(unknownChain.deposits, chainList),
    /^ConfigError: config: deposits\.chains\.atlantis: no chain "atlantis" in the chain list \(base, zksync-era\)$/,
  );
});

test('a gateway without a treasury: deposit-info says disabled, /credits/deposits is empty, /health has no deposits part; both in /openapi.json', async () => {
  const gateway = await startTestGateway();
  try {
    const headers = { 'x-wallet-address': '0x52908400098527886e0f7030069857d2e4169ee7' };
    assert.deepEqual(await (await fetch(`${gateway.url}/credits/deposit-info`, { headers })).json(), { enabled: false, chains: [] });
    const list = await (await fetch(`${gateway.url}/credits/deposits`, { headers })).json();
    assert.deepEqual(list, { object: 'list', data: [], has_more: false, next_cursor: null });
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as Record<string, unknown>;
    assert.equal(health.deposits, undefined);
    // /openapi.json documents both routes, the page's query parameters included.
    const doc = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { parameters: Array<{ name: string; in: string; required: boolean }> } }>;
    };
    assert.ok(doc.paths['/credits/deposit-info']);
    const query = doc.paths['/credits/deposits'].get.parameters.filter((p) => p.in === 'query');
    assert.deepEqual(
      query.map((p) => [p.name, p.required]),
      [
        ['limit', false],
        ['cursor', false],
      ],
    );
  } finally {
    await gateway.stop();
  }
});

test('a gateway whose deposits name a chain not in the chain list does not start', async () => {
  await assert.rejects(
    startTestGateway({ config: (json) => (json.deposits = { chains: { atlantis: { treasury: TREASURY, tokens: [usdc] } } }) }),
    /deposits\.chains\.atlantis: no chain "atlantis" in the chain list/,
  );
});

/** Deposits on Base alone, polling once a minute, with `reader` for every chain; nothing to store or credit. */
function baseDeposits(options: Pick<DepositsOptions, 'now' | 'lease'> & { reader: ChainReader }) {
  const config = parseConfig(
    fileJson({ stallAfterMs: 60_000, pollIntervalMs: 60_000, chains: { base: { treasury: TREASURY, tokens: [usdc] } } }),
    {},
  );
  return createDeposits({
    settings: config.deposits,
    env: {},
    store: {} as DepositStore,
    ledger: { creditExternal: async () => assert.fail('nothing to credit') },
    metrics: createMetrics(),
    logger: createLogger('silent'),
    chainList,
    readerFor: () => options.reader,
    now: options.now,
    lease: options.lease,
  })!;
}

test('/health: a chain whose watcher has made no progress for stallAfterMs is stalled and degrades the gateway', async () => {
  let clock = 1_800_000_000_000;
  const down = () => Promise.reject(new Error('the RPC is down'));
  const deposits = baseDeposits({
    reader: { chainId: async () => 8453, head: down, taggedHeight: down, blockHash: down, transfersTo: down },
    now: () => clock,
  });
  const fresh = await deposits.health.health();
  assert.equal(fresh.degraded, false);
  assert.deepEqual(fresh.fields.deposits, [
    { chain: 'base', chain_id: 8453, head: null, scanned_to: null, blocks_behind: null, seconds_since_progress: 0, status: 'starting' },
  ]);
  clock += 60_001;
  const stalled = await deposits.health.health();
  assert.equal(stalled.degraded, true);
  assert.equal((stalled.fields.deposits as Array<{ status: string }>)[0].status, 'stalled');
});

test('/health: a chain another instance holds the lease of is on standby and reads only the head; the lease goes when the watchers stop', async () => {
  let released = false;
  let reads = 0;
  let headReads = 0;
  // A failed read would only fail the pass (the watcher retries), so reads are counted, not thrown on.
  const unread = () => {
    reads++;
    return Promise.reject(new Error('a standby instance scans no chain'));
  };
  // The head only: the deposits this instance lists show their confirmations from it.
  const head = async () => {
    headReads++;
    return 1_234;
  };
  const deposits = baseDeposits({
    reader: { chainId: unread, head, taggedHeight: unread, blockHash: unread, transfersTo: unread },
    lease: {
      holds: async () => false,
      release: async () => {
        released = true;
      },
    },
  });
  deposits.start();
  await waitFor('the first pass', async () => {
    const [chain] = (await deposits.health.health()).fields.deposits as Array<{ head: number | null }>;
    return chain.head === 1_234;
  });
  const health = await deposits.health.health();
  assert.equal(health.degraded, false);
  const [standby] = health.fields.deposits as Array<{ status: string; head: number | null; blocks_behind: number | null }>;
  assert.equal(standby.status, 'standby');
  assert.equal(standby.head, 1_234);
  assert.equal(standby.blocks_behind, null, 'the holder reports the lag');
  assert.equal(reads, 0);
  assert.ok(headReads >= 1);
  await deposits.stop();
  assert.equal(released, true);
});
