import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadChains, buildChainRegistry } from '../../../tool-servers/onchain/chains.js';
import { chainsConfigPath } from '../../../chains/chain-list.js';
import { redactUrl, redactUrlsIn } from '../../../tool-servers/onchain/url-redaction.js';
import { ReadCache } from '../../../tool-servers/onchain/read-cache.js';
import { classifyCode } from '../../../tool-servers/onchain/tools/is-contract.js';
import { parseBlockSelector } from '../../../tool-servers/onchain/tools/get-block.js';
import { tokenAddress } from '../../../tool-servers/onchain/tools/get-token-balance.js';
import { createOnchainServer } from '../../../tool-servers/onchain/server.js';
import { describeRpcFailure, toToolError } from '../../../tool-servers/onchain/rpc-errors.js';
import { ToolError } from '../../../tool-servers/kit/index.js';
import { RpcRequestError } from 'viem';

describe('chain list', () => {
  test('the shipped list has every required chain with ids, aliases and tokens', () => {
    const chains = loadChains({});
    assert.deepEqual(
      chains.list.map((c) => [c.key, c.id]),
      [
        ['ethereum', 1],
        ['base', 8453],
        ['arbitrum', 42161],
        ['optimism', 10],
        ['polygon', 137],
        ['bsc', 56],
        ['avalanche', 43114],
        ['sepolia', 11155111],
        ['local', 31337],
      ],
    );
    assert.equal(chains.resolve(undefined).key, 'ethereum');
    assert.equal(chains.resolve('ARB').id, 42161);
    assert.equal(chains.resolve('8453').key, 'base');
    assert.equal(chains.resolve(137).key, 'polygon');
    assert.deepEqual(chains.resolve('local').rpcUrls, ['http://127.0.0.1:8545']);
    assert.equal(chains.resolve('ethereum').tokens.USDC, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48');
    assert.equal(chains.resolve('ethereum').ens?.universalResolver.toLowerCase(), '0xeeeeeeee14d718c2b47d9923deab1335e144eeee');
    assert.equal(chains.resolve('local').ens, undefined);
    assert.throws(
      () => chains.resolve('solana'),
      (err: unknown) => err instanceof ToolError && err.code === 'invalid_arguments' && err.param === 'chain',
    );
  });

  test('the shipped gateway config forwards the per-chain variables of every chain, and of one added later, to the onchain server', () => {
    type OnchainEntry = { env: Record<string, string>; envPassthrough?: string[] };
    const gatewayJson = JSON.parse(readFileSync('config/gateway.json', 'utf8')) as { mcpServers: { onchain: OnchainEntry } };
    const { env, envPassthrough = [] } = gatewayJson.mcpServers.onchain;
    const forwarded = (name: string) => env[name] === `\${${name}}` || envPassthrough.some((prefix) => name.startsWith(prefix));
    for (const chain of [...loadChains({}).list.map((c) => c.key), 'zksync-era']) {
      for (const prefix of ['RPC_URL', 'ENS_UNIVERSAL_RESOLVER', 'MULTICALL3', 'TOKENS']) {
        const name = `${prefix}_${chain.toUpperCase().replace(/-/g, '_')}`;
        assert.ok(forwarded(name), name);
      }
    }
    for (const name of ['CHAINS_CONFIG', 'RPC_TIMEOUT_MS', 'RPC_DEADLINE_MS', 'RPC_RANK', 'ONCHAIN_CACHE_MAX_TTL_MS', 'LOG_LEVEL']) {
      assert.equal(env[name], `\${${name}}`, name);
    }
  });

  test('env overrides RPC lists, Multicall3, ENS and tokens per chain', () => {
    const chains = loadChains({
      RPC_URL_BASE: ' http://127.0.0.1:1/v2/k1 , http://127.0.0.1:2 ',
      MULTICALL3_LOCAL: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      ENS_UNIVERSAL_RESOLVER_LOCAL: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
      TOKENS_LOCAL: 'tst=0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
    });
    assert.deepEqual(chains.resolve('base').rpcUrls, ['http://127.0.0.1:1/v2/k1', 'http://127.0.0.1:2']);
    const local = chains.resolve('local');
    assert.equal(local.multicall3, '0x5FbDB2315678afecb367f032d93F642f64180aa3');
    assert.equal(local.ens?.universalResolver, '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512');
    assert.equal(local.tokens.TST, '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0');
    assert.equal(tokenAddress(local, 'Tst'), '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0');
  });

  test('bad env values and bad files stop the server with the field named', () => {
    assert.throws(() => loadChains({ RPC_URL_LOCAL: 'not a url' }), /RPC_URL_LOCAL holds something that is not a URL/);
    assert.throws(() => loadChains({ MULTICALL3_LOCAL: '0x12' }), /MULTICALL3_LOCAL is not an address/);
    assert.throws(() => loadChains({ TOKENS_LOCAL: 'USDC' }), /TOKENS_LOCAL must be SYMBOL=0xaddress pairs/);
    assert.throws(() => buildChainRegistry({ chains: { x: { id: 1 } } }, {}), /^Error: invalid chain list at chains\.x\.name/);
    const dir = mkdtempSync(join(tmpdir(), 'chains-'));
    try {
      writeFileSync(join(dir, 'broken.json'), '{');
      assert.throws(() => loadChains({ CHAINS_CONFIG: join(dir, 'broken.json') }), /^Error: cannot read chain list/);
      assert.equal(chainsConfigPath({ CHAINS_CONFIG: 'x/chains.json' }, '/srv'), '/srv/x/chains.json');
      // Started from another directory: the repository's copy is used.
      assert.match(chainsConfigPath({}, dir), /config\/chains\.json$/);
      assert.ok(loadChains({}, chainsConfigPath({}, dir)).list.length >= 9);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.throws(() => createOnchainServer({ env: { RPC_TIMEOUT_MS: 'soon' } }), /RPC_TIMEOUT_MS must be a positive integer/);
    assert.throws(
      () => createOnchainServer({ env: { ONCHAIN_CACHE_MAX_TTL_MS: '-1' } }),
      /ONCHAIN_CACHE_MAX_TTL_MS must be a non-negative integer/,
    );
    assert.throws(() => createOnchainServer({ env: { RPC_DEADLINE_MS: '0' } }), /RPC_DEADLINE_MS must be a positive integer/);
    assert.throws(() => createOnchainServer({ env: { RPC_RANK: 'yes' } }), /RPC_RANK must be true or false/);
  });

  test('a misspelt or retired key in the chain list is refused, naming where', () => {
    const chain = { id: 5, name: 'X', native_symbol: 'X', block_time_ms: 1000, rpc_urls: ['http://127.0.0.1:1'] };
    assert.doesNotThrow(() => buildChainRegistry({ chains: { x: chain } }, {}));
    assert.throws(
      () => buildChainRegistry({ chains: { x: { ...chain, rpc_url: 'http://127.0.0.1:1' } } }, {}),
      /^Error: invalid chain list at chains\.x: Unrecognized key: "rpc_url"/,
    );
    const withRegistry = {
      ...chain,
      ens: { universal_resolver: '0xeeeeeeee14d718c2b47d9923deab1335e144eeee', registry: '0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e' },
    };
    assert.throws(
      () => buildChainRegistry({ chains: { x: withRegistry } }, {}),
      /^Error: invalid chain list at chains\.x\.ens: Unrecognized key: "registry"/,
    );
  });
});

describe('url redaction', () => {
  const cases: Array<[string, string]> = [
    ['https://eth-mainnet.g.alchemy.com/v2/abc123', 'https://eth-mainnet.g.alchemy.com/…'],
    ['https://user:pass@rpc.example:8545/', 'https://rpc.example:8545'],
    ['https://rpc.example/?apikey=zzz', 'https://rpc.example/…'],
    ['http://127.0.0.1:8545', 'http://127.0.0.1:8545'],
    ['not a url', '[url]'],
  ];
  for (const [input, expected] of cases) test(`${input} → ${expected}`, () => assert.equal(redactUrl(input), expected));

  test('URLs inside text are redacted, known ones first', () => {
    const text = 'fetch https://u:p@h.example/v3/KEY failed; also https://other.example/path?key=2';
    assert.equal(redactUrlsIn(text, ['https://u:p@h.example/v3/KEY']), 'fetch https://h.example/… failed; also https://other.example/…');
  });
});

describe('rpc failure messages', () => {
  const chain = loadChains({}).resolve('local');
  const nodeError = (message: string) =>
    new RpcRequestError({ body: { method: 'eth_call' }, error: { code: -32005, message }, url: 'https://rpc.example/v2/SECRETKEY' });

  test("a node error carries the node's own short message, ending in one full stop", () => {
    assert.equal(describeRpcFailure(nodeError('rate limited.')), 'node error -32005: rate limited');
    assert.equal(toToolError(nodeError('rate limited.'), chain).message, 'RPC unavailable for Local: node error -32005: rate limited.');
    assert.equal(describeRpcFailure(nodeError('')), 'node error -32005');
  });

  test('a long node message is cut to its first line and 160 characters, URLs redacted', () => {
    const long = describeRpcFailure(nodeError(`${'x'.repeat(300)}\nsecond line`));
    assert.equal(long, `node error -32005: ${'x'.repeat(159)}…`);
    const message = toToolError(nodeError('limit for https://rpc.example/v2/SECRETKEY reached'), chain).message;
    assert.equal(message, 'RPC unavailable for Local: node error -32005: limit for https://rpc.example/… reached.');
  });
});

describe('read cache', () => {
  test('shares in-flight loads, keeps values for their TTL, never caches failures', async () => {
    let now = 1000;
    const cache = new ReadCache({ now: () => now, maxEntries: 2 });
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 5));
      return loads;
    };
    const values = await Promise.all([cache.get('a', 100, load), cache.get('a', 100, load), cache.get('a', 100, load)]);
    assert.deepEqual(values, [1, 1, 1]);
    assert.deepEqual(cache.stats, { hits: 0, misses: 1, shared: 2 });
    assert.equal(await cache.get('a', 100, load), 1);
    now += 101;
    assert.equal(cache.peek('a'), undefined);
    assert.equal(await cache.get('a', 100, load), 2);

    await assert.rejects(
      cache.get('b', 100, async () => Promise.reject(new Error('down'))),
      /down/,
    );
    assert.equal(await cache.get('b', 100, async () => 'up'), 'up');

    // TTL 0 shares the flight but stores nothing; the oldest entry goes past maxEntries.
    assert.equal(await cache.get('c', 0, async () => 'once'), 'once');
    assert.equal(cache.peek('c'), undefined);
    cache.set('d', 'D', 100);
    cache.set('e', 'E', 0);
    assert.equal(cache.size, 2);
    assert.equal(cache.peek('a'), undefined);
    assert.equal(cache.peek('d'), 'D');
  });
});

describe('small parsers', () => {
  test('classifyCode tells EOAs, contracts and EIP-7702 delegations apart', () => {
    assert.deepEqual(classifyCode(undefined), { kind: 'eoa', delegate: null, size: 0 });
    assert.deepEqual(classifyCode('0x'), { kind: 'eoa', delegate: null, size: 0 });
    assert.deepEqual(classifyCode(`0xef0100${'ab'.repeat(20)}`), {
      kind: 'delegated_eoa',
      delegate: '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB',
      size: 23,
    });
    assert.deepEqual(classifyCode('0x6080604052'), { kind: 'contract', delegate: null, size: 5 });
    // The prefix with the wrong length is ordinary code.
    assert.equal(classifyCode(`0xef0100${'ab'.repeat(21)}`).kind, 'contract');
  });

  test('parseBlockSelector reads numbers, hex numbers, hashes and tags', () => {
    assert.deepEqual(parseBlockSelector(undefined), { blockTag: 'latest' });
    assert.deepEqual(parseBlockSelector(7), { blockNumber: 7n });
    assert.deepEqual(parseBlockSelector(' 12 '), { blockNumber: 12n });
    assert.deepEqual(parseBlockSelector('0x10'), { blockNumber: 16n });
    assert.deepEqual(parseBlockSelector('SAFE'), { blockTag: 'safe' });
    const hash = `0x${'Ab'.repeat(32)}`;
    assert.deepEqual(parseBlockSelector(hash), { blockHash: hash.toLowerCase() });
    assert.throws(
      () => parseBlockSelector('-1'),
      (err: unknown) => err instanceof ToolError && err.param === 'block',
    );
  });
});
