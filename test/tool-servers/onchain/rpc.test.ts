import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { freePort } from '../../helpers/evm-node.js';
import { loadChains } from '../../../tool-servers/onchain/chains.js';
import { createOnchainContext } from '../../../tool-servers/onchain/onchain-context.js';
import { getBlockTool } from '../../../tool-servers/onchain/tools/get-block.js';
import { startLocalChainScenario, type LocalChainScenario } from './local-chain-scenario.js';
import { connectOnchain } from './mcp-client.js';
import { startRpcProxy, type JsonRpcAnswer, type JsonRpcCall, type RpcProxy } from '../../helpers/rpc-proxy.js';

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
      // A contract that reverts every ERC-20 read (Hardhat: -32603 "… reverted …") is no token either.
      assert.deepEqual(await tools.fail('get_token_balance', { address: chain.holders[0], token: chain.reverter, chain: 'local' }), {
        code: 'not_found',
        param: 'token',
        message: `No ERC-20 token at ${chain.reverter} on Local.`,
      });
    } finally {
      await tools.close();
    }
  });
});

describe('immutable reads', () => {
  test('a mined transaction is read once, then served from the cache', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url, ONCHAIN_CACHE_MAX_TTL_MS: '0' }) });
    try {
      proxy.reset();
      const first = await tools.ok('get_transaction', { hash: chain.tx.transfer, chain: 'local' });
      assert.equal(first.status, 'success');
      assert.deepEqual(await tools.ok('get_transaction', { hash: chain.tx.transfer, chain: 'local' }), first);
      assert.equal(proxy.callCount('eth_getTransactionByHash'), 1);
      assert.equal(proxy.callCount('eth_getTransactionReceipt'), 1);
    } finally {
      await tools.close();
    }
  });

  test('a pending transaction is asked again on every call', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url }) });
    await chain.node.rpc('evm_setAutomine', [false]);
    try {
      const hash = await chain.node.wallet(0).sendTransaction({ to: chain.holders[2], value: 1n });
      proxy.reset();
      assert.equal((await tools.ok('get_transaction', { hash, chain: 'local' })).status, 'pending');
      assert.equal((await tools.ok('get_transaction', { hash, chain: 'local' })).status, 'pending');
      assert.equal(proxy.callCount('eth_getTransactionByHash'), 2);
      await chain.node.rpc('evm_mine');
      assert.equal((await tools.ok('get_transaction', { hash, chain: 'local' })).status, 'success');
      assert.equal((await tools.ok('get_transaction', { hash, chain: 'local' })).status, 'success');
      assert.equal(proxy.callCount('eth_getTransactionByHash'), 3, 'mined: cached from the first mined answer on');
    } finally {
      await chain.node.rpc('evm_setAutomine', [true]);
      await tools.close();
    }
  });

  test('a block by hash is read once, and a block read by number is then known by its hash', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: proxy.url, ONCHAIN_CACHE_MAX_TTL_MS: '0' }) });
    try {
      const transferBlock = (await chain.node.publicClient.getTransactionReceipt({ hash: chain.tx.transfer })).blockHash;
      proxy.reset();
      const first = await tools.ok('get_block', { block: transferBlock, chain: 'local' });
      assert.deepEqual(await tools.ok('get_block', { block: transferBlock, chain: 'local' }), first);
      assert.equal(proxy.callCount('eth_getBlockByHash'), 1);

      const byNumber = await tools.ok<{ hash: string }>('get_block', { block: 1, chain: 'local' });
      assert.equal(proxy.callCount('eth_getBlockByNumber'), 1);
      assert.deepEqual(await tools.ok('get_block', { block: byNumber.hash, chain: 'local' }), byNumber);
      assert.equal(proxy.callCount('eth_getBlockByHash'), 1);
    } finally {
      await tools.close();
    }
  });

  test("get_block keeps its described output in the cache, not viem's block with the transaction list", async () => {
    const context = createOnchainContext({ chains: loadChains(chain.env()) });
    const tool = getBlockTool(context);
    const receipt = await chain.node.publicClient.getTransactionReceipt({ hash: chain.tx.transfer });
    const output = await tool.run({ block: Number(receipt.blockNumber), chain: 'local' }, { signal: new AbortController().signal });
    assert.equal(output.transaction_count, 1);
    assert.deepEqual(context.cache.peek(`31337:block:${receipt.blockHash}`), output);
    assert.deepEqual(context.cache.peek(`31337:block:${receipt.blockNumber}`), output);
  });
});

describe('a node answering JSON-RPC errors inside HTTP 200', () => {
  const rateLimited = (call: JsonRpcCall): JsonRpcAnswer => ({
    jsonrpc: '2.0',
    id: call.id,
    error: { code: -32005, message: 'daily request count exceeded, request rate limited' },
  });
  const limitedMessage = {
    code: 'upstream_unavailable',
    message: 'RPC unavailable for Local: node error -32005: daily request count exceeded, request rate limited.',
  };

  for (const multicall of [true, false]) {
    test(`a rate-limited eth_call is upstream_unavailable, never "no token" (${multicall ? 'Multicall3' : 'JSON-RPC batch'})`, async () => {
      const limited = await startRpcProxy(chain.node.url, {
        answer: (call) => (call.method === 'eth_call' ? rateLimited(call) : undefined),
      });
      const env = chain.env({ RPC_URL_LOCAL: limited.url });
      if (!multicall) delete env.MULTICALL3_LOCAL;
      const tools = await connectOnchain({ env });
      try {
        assert.deepEqual(await tools.fail('get_token_info', { token: 'TST', chain: 'local' }), limitedMessage);
        assert.deepEqual(
          await tools.fail('get_token_balance', { address: chain.holders[1], token: 'TST', chain: 'local' }),
          limitedMessage,
        );
      } finally {
        await tools.close();
        await limited.close();
      }
    });
  }

  test("an internal error without revert text or data is the node's, not the contract's", async () => {
    const failing = await startRpcProxy(chain.node.url, {
      answer: (call) =>
        call.method === 'eth_call' ? { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'internal error' } } : undefined,
    });
    const env = chain.env({ RPC_URL_LOCAL: failing.url });
    delete env.MULTICALL3_LOCAL;
    const tools = await connectOnchain({ env });
    try {
      assert.deepEqual(await tools.fail('get_token_info', { token: 'TST', chain: 'local' }), {
        code: 'upstream_unavailable',
        message: 'RPC unavailable for Local: node error -32603: internal error.',
      });
    } finally {
      await tools.close();
      await failing.close();
    }
  });

  test('get_gas_price derives the priority fee only when the node lacks the method', async () => {
    const withoutMethod = await startRpcProxy(chain.node.url, {
      answer: (call) =>
        call.method === 'eth_maxPriorityFeePerGas'
          ? {
              jsonrpc: '2.0',
              id: call.id,
              error: { code: -32601, message: 'the method eth_maxPriorityFeePerGas does not exist/is not available' },
            }
          : undefined,
    });
    const limited = await startRpcProxy(chain.node.url, {
      answer: (call) => (call.method === 'eth_maxPriorityFeePerGas' ? rateLimited(call) : undefined),
    });
    const derived = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: withoutMethod.url }) });
    const refused = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: limited.url }) });
    try {
      const gas = await derived.ok<{ gas_price_wei: string; base_fee_wei: string; priority_fee_wei: string }>('get_gas_price', {
        chain: 'local',
      });
      assert.equal(BigInt(gas.priority_fee_wei), BigInt(gas.gas_price_wei) - BigInt(gas.base_fee_wei));
      assert.deepEqual(await refused.fail('get_gas_price', { chain: 'local' }), limitedMessage);
    } finally {
      await derived.close();
      await refused.close();
      await withoutMethod.close();
      await limited.close();
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

  test('hanging RPCs: each URL is tried once, no retry of the whole list', async () => {
    const hanging = await startHangingServer();
    const tools = await connectOnchain({
      env: chain.env({ RPC_URL_LOCAL: `${hanging.url}/a,${hanging.url}/b,${hanging.url}/c`, RPC_TIMEOUT_MS: '300' }),
    });
    try {
      const started = Date.now();
      assert.deepEqual(await tools.fail('get_eth_balance', { address: chain.holders[0], chain: 'local' }), {
        code: 'upstream_unavailable',
        message: 'RPC unavailable for Local: request timed out.',
      });
      assert.equal(hanging.hits(), 3);
      assert.ok(Date.now() - started < 1_500, `took ${Date.now() - started} ms`);
    } finally {
      await tools.close();
      await hanging.close();
    }
  });

  test('one deadline bounds a whole tool call, naming the chain', async () => {
    const hanging = await startHangingServer();
    const tools = await connectOnchain({
      env: chain.env({
        RPC_URL_LOCAL: `${hanging.url}/a,${hanging.url}/b,${hanging.url}/c`,
        RPC_TIMEOUT_MS: '1000',
        RPC_DEADLINE_MS: '400',
      }),
    });
    try {
      for (const [name, args] of [
        ['get_eth_balance', { address: chain.holders[0] }],
        // ENS name, then token reads: both inside the one deadline.
        ['get_token_balance', { address: 'alice.eth', token: 'TST' }],
      ] as const) {
        const started = Date.now();
        assert.deepEqual(await tools.fail(name, { ...args, chain: 'local' }), {
          code: 'upstream_unavailable',
          message: 'RPC unavailable for Local: no answer within 400 ms.',
        });
        assert.ok(Date.now() - started < 900, `${name} took ${Date.now() - started} ms`);
      }
    } finally {
      await tools.close();
      await hanging.close();
    }
  });

  test('several URLs are not pinged in the background unless RPC_RANK=true', async () => {
    const tools = await connectOnchain({ env: chain.env({ RPC_URL_LOCAL: `${proxy.url}/a,${proxy.url}/b` }) });
    try {
      proxy.reset();
      await tools.ok('get_eth_balance', { address: chain.holders[0], chain: 'local' });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(proxy.callCount('net_listening'), 0);
    } finally {
      await tools.close();
    }
  });
});

/** An HTTP server that reads requests and never answers. */
async function startHangingServer(): Promise<{ url: string; hits(): number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((req) => {
    hits++;
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    hits: () => hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
