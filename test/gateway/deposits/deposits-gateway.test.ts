/**
 * Deposits through the built gateway, started as `npm start` starts it (treasury and confirmations
 * from DEPOSIT_TREASURY_LOCAL / DEPOSIT_CONFIRMATIONS_LOCAL, the node from RPC_URL_LOCAL), against
 * a Hardhat node behind a recording JSON-RPC proxy: /credits/deposit-info with the wallet header
 * alone; a transfer shown pending in /credits/deposits; the gateway killed (SIGKILL) before the
 * deposit has its confirmations and restarted on the same DATA_DIR credits it exactly once;
 * pagination; /health and /metrics; and nothing but reads reached the node.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBuiltGateway, type BuiltGateway } from '../spawn-built-gateway.js';
import type { PrivateKeyAccount } from 'viem/accounts';
import { ADMIN_TOKEN, PUBLIC_URL, mintVerifiedKey } from '../../helpers/accounts.js';
import { startRpcProxy, type RpcProxy } from '../../helpers/rpc-proxy.js';
import { DECIMALS, UNITS_PER_CREDIT, startDepositChain, type DepositChain } from './deposit-chain.js';

const dir = mkdtempSync(join(tmpdir(), 'sy-deposits-gateway-'));
const running: BuiltGateway[] = [];
let chain: DepositChain;
let proxy: RpcProxy;

before(async () => {
  chain = await startDepositChain();
  proxy = await startRpcProxy(chain.node.url);
});
after(async () => {
  for (const gateway of running) await gateway.cleanup();
  await proxy?.close();
  await chain?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface DepositItem {
  id: string;
  chain: string;
  symbol: string;
  amount: string;
  amount_formatted: string;
  credits: number | null;
  tx_hash: string;
  block_number: number;
  status: string;
  confirmations: number;
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a deposit through the built gateway: info, pending, kill -9, restart, credited once, pages, health, metrics, reads only', async () => {
  const configPath = join(dir, 'gateway.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      freeMode: false,
      adminToken: ADMIN_TOKEN,
      server: { publicUrl: PUBLIC_URL },
      models: [{ id: 'svc-32b-conductor', alias: 'conductor', upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'unused' } }],
      mcpServers: {},
      deposits: {
        pollIntervalMs: 100,
        chains: {
          local: {
            startBlock: (await chain.head()) + 1,
            tokens: [{ symbol: 'USDC', address: chain.usdc, decimals: DECIMALS, unitsPerCredit: Number(UNITS_PER_CREDIT) }],
          },
        },
      },
    }),
  );
  const env = {
    SWITCHYARD_CONFIG: configPath,
    DATA_DIR: join(dir, 'data'),
    DEPOSIT_TREASURY_LOCAL: chain.treasury,
    DEPOSIT_CONFIRMATIONS_LOCAL: '3',
    RPC_URL_LOCAL: proxy.url,
  };
  // Dev account 1, the chain's first depositor, signs its own SIWE proof (an HD account signs like a key account).
  const depositor = chain.node.accounts[1] as unknown as PrivateKeyAccount;
  const wallet = depositor.address.toLowerCase();
  const first = await startBuiltGateway(env);
  running.push(first);

  const info = await fetch(`${first.url}/credits/deposit-info`, { headers: { 'x-wallet-address': wallet } });
  assert.equal(info.status, 200);
  assert.deepEqual(await info.json(), {
    enabled: true,
    chains: [
      {
        chain: 'local',
        chain_id: 31337,
        name: 'Local',
        treasury: chain.treasury.toLowerCase(),
        confirmations: 3,
        tokens: [{ symbol: 'USDC', address: chain.usdc.toLowerCase(), decimals: 6, units_per_credit: '10000', price_per_credit: '0.01' }],
      },
    ],
  });

  const key = await mintVerifiedKey(first, depositor);
  const headers = { 'x-wallet-address': wallet, authorization: `Bearer ${key}` };
  const noKey = await fetch(`${first.url}/credits/deposits`, { headers: { 'x-wallet-address': wallet } });
  assert.equal(noKey.status, 401);
  const list = async (gateway: { url: string }, query = '') => {
    const res = await fetch(`${gateway.url}/credits/deposits${query}`, { headers });
    assert.equal(res.status, 200);
    return (await res.json()) as { object: string; data: DepositItem[]; has_more: boolean; next_cursor: string | null };
  };

  const sent = await chain.transfer({ from: 1, amount: 1_500_000n }); // 1.5 USDC = 150 credits
  const pending = await until(async () => (await list(first)).data[0]);
  assert.equal(pending.status, 'pending');
  assert.equal(pending.tx_hash, sent.hash);
  assert.equal(pending.id, `31337:${sent.hash}:0`);
  assert.equal(pending.amount, '1500000');
  assert.equal(pending.amount_formatted, '1.5');
  assert.equal(pending.symbol, 'USDC');
  assert.equal(pending.credits, null);
  assert.equal(pending.confirmations, 1);

  // Killed between seeing and crediting: the deposit has 1 of 3 confirmations.
  first.child.kill('SIGKILL');
  await first.exited;
  await chain.mine(3);
  const second = await startBuiltGateway(env);
  running.push(second);
  const credited = await until(async () => {
    const [item] = (await list(second)).data;
    return item?.status === 'credited' ? item : undefined;
  });
  assert.equal(credited.credits, 150);
  assert.equal(credited.confirmations, 4);
  const balance = await (await fetch(`${second.url}/credits/balance`, { headers })).json();
  assert.deepEqual(balance, { address: wallet, credits: 150, total_deposited: 150, total_spent: 0 });

  // Two more, then pages of two, newest first.
  await chain.transfer({ from: 1, amount: 20_000n });
  await chain.transfer({ from: 1, amount: 30_000n });
  await chain.mine(3);
  await until(async () => ((await list(second)).data.filter((d) => d.status === 'credited').length === 3 ? true : undefined));
  const page1 = await list(second, '?limit=2');
  assert.equal(page1.object, 'list');
  assert.deepEqual(
    page1.data.map((d) => d.amount),
    ['30000', '20000'],
  );
  assert.equal(page1.has_more, true);
  const page2 = await list(second, `?limit=2&cursor=${page1.next_cursor}`);
  assert.deepEqual(
    page2.data.map((d) => d.amount),
    ['1500000'],
  );
  assert.equal(page2.has_more, false);
  assert.equal(page2.next_cursor, null);
  const bad = await fetch(`${second.url}/credits/deposits?limit=0`, { headers });
  assert.equal(bad.status, 400);
  const badBody = (await bad.json()) as { error: { type: string; param: string | null } };
  assert.equal(badBody.error.type, 'invalid_request_error');
  assert.equal(badBody.error.param, 'limit');
  assert.equal(((await (await fetch(`${second.url}/credits/balance`, { headers })).json()) as { credits: number }).credits, 155);
  // Each credited deposit wrote its usage record, with the deposit's id as its source.
  const usage = (await (await fetch(`${second.url}/credits/usage`, { headers })).json()) as {
    data: Array<{ kind: string; credits: number; source_id: string }>;
  };
  assert.deepEqual(
    usage.data.map((r) => [r.kind, r.credits, r.source_id]),
    [...page1.data, ...page2.data].map((d) => ['deposit', d.credits, d.id]),
  );

  const health = (await (await fetch(`${second.url}/health`)).json()) as { deposits: Array<Record<string, unknown>> };
  assert.equal(health.deposits.length, 1);
  assert.equal(health.deposits[0].chain, 'local');
  assert.equal(health.deposits[0].status, 'ok');
  assert.equal(typeof health.deposits[0].blocks_behind, 'number');

  const metrics = await (await fetch(`${second.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  assert.match(metrics, /^switchyard_deposits_credited_total\{chain="local"\} 3$/m);
  assert.match(metrics, /^switchyard_deposits_seen_total\{chain="local"\} 2$/m, 'the first deposit was seen by the killed process');
  assert.match(metrics, /^switchyard_deposit_credits_total\{chain="local"\} 155$/m);
  assert.match(metrics, /^switchyard_deposit_watcher_blocks_behind\{chain="local"\} \d+$/m);
  assert.match(metrics, /^switchyard_deposit_watcher_last_progress_timestamp_seconds\{chain="local"\} \d+$/m);

  const readOnly = new Set(['eth_chainId', 'eth_blockNumber', 'eth_getBlockByNumber', 'eth_getLogs']);
  assert.deepEqual(
    Object.keys(proxy.calls).filter((m) => !readOnly.has(m)),
    [],
  );
});
