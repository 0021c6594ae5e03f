import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { freePort } from '../../helpers/evm-node.js';
import { startLocalChainScenario, type LocalChainScenario } from './local-chain-scenario.js';
import { connectOnchain } from './mcp-client.js';
import { startRpcProxy, type RpcProxy } from './rpc-proxy.js';

// Transport behaviour seen from outside: a counting JSON-RPC proxy in front of the node.
let chain: LocalChainScenario;
let proxy: RpcProxy;
let failing: Server;
let failingUrl: string;

/** The shipped chain list with `local` given a long block time, so cache hits are certain. */
function chainsWithLocalBlockTime(ms: number): unknown {
  const json = JSON.parse(readFileSync('config/chains.json', 'utf8')) as { chains: Record<string, { block_time_ms: number }> };
  json.chains.local.block_time_ms = ms;
  return json;
}

before(async () => {
  chain = await startLocalChainScenario();
  proxy = await startRpcProxy(chain.node.url);
  failing = createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('overloaded');
  });
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', () => r()));
  const address = failing.address();
  failingUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

after(async () => {
  await proxy?.close();
  await new Promise<void>((r) => (failing ? failing.close(() => r()) : r()));
  await chain?.stop();
});

describe('coalescing and caching', () => {
  test('N identical concurrent calls share one RPC request, and the answer is cached', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url }), chains: chainsWithLocalBlockTime(60_000) });
    try {
      proxy.reset();
      const holder = chain.holders[1];
      const results = await Promise.all(Array.from({ length: 12 }, () => tools.ok('get_eth_balance', { address: holder, chain: 'local' })));
      const expected = (await chain.node.publicClient.getBalance({ address: holder })).toString();
      for (const result of results) assert.equal(result.balance_wei, expected);
      assert.equal(proxy.callCount('eth_getBalance'), 1);

      await tools.ok('get_eth_balance', { address: holder, chain: 'local' });
      assert.equal(proxy.callCount('eth_getBalance'), 1, 'within one block time the cached value is served');

      // A different address is a different question.
      await tools.ok('get_eth_balance', { address: chain.holders[2], chain: 'local' });
      assert.equal(proxy.callCount('eth_getBalance'), 2);
    } finally {
      await tools.close();
    }
  });

  test('with the moving-data cache off, calls still coalesce but each new call asks again', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url, ONCHAIN_CACHE_MAX_TTL_MS: '0' }) });
    try {
      proxy.reset();
      await Promise.all(Array.from({ length: 5 }, () => tools.ok('get_tx_count', { address: chain.holders[0], chain: 'local' })));
      assert.equal(proxy.callCount('eth_getTransactionCount'), 2, 'latest + pending, once for five callers');
      await tools.ok('get_tx_count', { address: chain.holders[0], chain: 'local' });
      assert.equal(proxy.callCount('eth_getTransactionCount'), 4);
    } finally {
      await tools.close();
    }
  });

  test('get_token_info is one multicall; token metadata stays cached when supply is re-read', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url, ONCHAIN_CACHE_MAX_TTL_MS: '0' }) });
    try {
      proxy.reset();
      const first = await tools.ok('get_token_info', { token: 'TST', chain: 'local' });
      assert.equal(proxy.callCount('eth_call'), 1, 'name, symbol, decimals and totalSupply in one aggregate3');
      assert.equal(proxy.httpRequests, 1);
      const second = await tools.ok('get_token_info', { token: 'TST', chain: 'local' });
      assert.deepEqual(second, first);
      assert.equal(proxy.callCount('eth_call'), 2, 'only totalSupply is read again');
    } finally {
      await tools.close();
    }
  });

  test('without Multicall3 the four reads leave as one JSON-RPC batch', async () => {
    const env = chain.env({ RPC_URL_LOCAL: proxy.url });
    delete env.MULTICALL3_LOCAL;
    const tools = await connectOnchain({ env });
    try {
      proxy.reset();
      const result = await tools.ok('get_token_info', { token: chain.token, chain: 'local' });
      assert.equal(result.symbol, 'TST');
      assert.equal(proxy.callCount('eth_call'), 4);
      assert.equal(proxy.httpRequests, 1);
      const error = await tools.fail('get_token_info', { token: chain.holders[1], chain: 'local' });
      assert.equal(error.code, 'not_found');
    } finally {
      await tools.close();
    }
  });
});

describe('fallback and failures', () => {
  test('a refused first RPC falls back to the second', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: `${closed},${proxy.url}` }) });
    try {
      proxy.reset();
      const result = await tools.ok('get_eth_balance', { address: chain.holders[4], chain: 'local' });
      assert.equal(result.balance_wei, (await chain.node.publicClient.getBalance({ address: chain.holders[4] })).toString());
      assert.equal(proxy.callCount('eth_getBalance'), 1);
    } finally {
      await tools.close();
    }
  });

  test('an RPC answering 503 falls back to the next one', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: `${failingUrl}/v3/KEY123,${proxy.url}` }) });
    try {
      const result = await tools.ok('get_block', { chain: 'local' });
      assert.equal(typeof result.number, 'number');
    } finally {
      await tools.close();
    }
  });

  test('every RPC refusing is upstream_unavailable naming the chain, with no URL secret', async () => {
    const first = `http://alice:hunter2@127.0.0.1:${await freePort()}/v2/SECRETKEY`;
    const second = `http://127.0.0.1:${await freePort()}/?apikey=SECRET2`;
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: `${first},${second}`, RPC_TIMEOUT_MS: '2000' }) });
    try {
      const error = await tools.fail('get_eth_balance', { address: chain.holders[0], chain: 'local' });
      assert.equal(error.code, 'upstream_unavailable');
      assert.match(error.message, /^RPC unavailable for Local: connection failed/);
      for (const secret of ['hunter2', 'SECRETKEY', 'SECRET2', 'alice']) assert.ok(!error.message.includes(secret), error.message);
      // Nothing was cached: the same call fails the same way rather than answering zero.
      assert.equal((await tools.fail('get_eth_balance', { address: chain.holders[0], chain: 'local' })).code, 'upstream_unavailable');
      for (const [name, args] of [
        ['get_token_info', { token: 'TST' }],
        ['get_token_balance', { address: chain.holders[0], token: 'TST' }],
        ['get_gas_price', {}],
        ['get_block', {}],
        ['get_tx_count', { address: chain.holders[0] }],
        ['get_transaction', { hash: chain.tx.transfer }],
        ['is_contract', { address: chain.token }],
        ['resolve_ens', { name: 'alice.eth' }],
      ] as const) {
        const failure = await tools.fail(name, { ...args, chain: 'local' });
        assert.equal(failure.code, 'upstream_unavailable', name);
        assert.match(failure.message, /^RPC unavailable for Local: /, name);
      }
    } finally {
      await tools.close();
    }
  });

  test('an RPC answering HTTP 503 only is upstream_unavailable with the status', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: `${failingUrl}/v3/KEY123` }) });
    try {
      assert.deepEqual(await tools.fail('get_gas_price', { chain: 'local' }), {
        code: 'upstream_unavailable',
        message: 'RPC unavailable for Local: HTTP 503.',
      });
    } finally {
      await tools.close();
    }
  });
});
