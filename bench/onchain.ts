/**
 * On-chain tools through the gateway: calls/s and latency of `get_eth_balance` and
 * `get_token_info` via POST /v1/tools/execute against a local Hardhat node, cold (every call a
 * new address or a new token, so the server must ask the node) and warm (the same question again,
 * served from the server's cache). A direct `eth_getBalance` JSON-RPC call to the node, at the
 * same concurrency in the same run, is the baseline: absolute numbers depend on the machine
 * (2 cores, others busy), the ratios are the figures to compare.
 *
 *   npm run build && npx tsx bench/onchain.ts [calls per run, default 400]
 */
import { performance } from 'node:perf_hooks';
import { erc20Abi, getAddress, type Address } from 'viem';
import { startTestGateway, walletHeaders, type TestGateway } from '../test/helpers/gateway.js';
import { startLocalChainScenario, type LocalChainScenario } from '../test/tool-servers/onchain/local-chain-scenario.js';

const CALLS = Number(process.argv[2] ?? 400);
const CONCURRENCY = 8;
const COLD_TOKENS = Math.min(120, CALLS);

interface Figures {
  name: string;
  calls: number;
  perSecond: number;
  p50: number;
  p95: number;
}

/** Run `calls` requests, `CONCURRENCY` at a time; each must succeed. */
async function measure(name: string, calls: number, one: (i: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) {
        const i = next++;
        const t0 = performance.now();
        await one(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { name, calls, perSecond: calls / elapsed, p50: pick(0.5), p95: pick(0.95) };
}

function randomAddress(i: number): Address {
  return getAddress(`0x${(0xb000000 + i).toString(16).padStart(40, '0')}`);
}

async function main() {
  const setupStarted = performance.now();
  const chain: LocalChainScenario = await startLocalChainScenario();
  let gateway: TestGateway | undefined;
  try {
    // Fresh tokens for cold get_token_info: metadata of each is read once, then cached for a day.
    const tokens: Address[] = [];
    for (let i = 0; i < COLD_TOKENS; i++)
      tokens.push(await chain.node.deploy(chain.contracts.TestToken, [`Bench ${i}`, `B${i}`, 18, 10n ** 24n]));

    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.logLevel = 'warn';
        // The bench measures tools, not the per-wallet and per-IP limits.
        json.limits = { perIp: { points: 1_000_000, durationSec: 60 }, perWallet: { points: 1_000_000, durationSec: 60 } };
        json.mcpServers = {
          onchain: { command: process.execPath, args: ['dist/tool-servers/onchain/main.js'], env: { ...chain.env(), LOG_LEVEL: 'warn' } },
        };
      },
      env: { PATH: process.env.PATH ?? '', FREE_MODE: 'true', LOG_LEVEL: 'warn' },
    });
    const url = `${gateway.url}/v1/tools/execute`;
    const headers = walletHeaders();
    const execute = async (tool: string, args: Record<string, unknown>) => {
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ tool, args }) });
      const body = (await response.json()) as { ok: boolean };
      if (response.status !== 200 || !body.ok) throw new Error(`${tool} failed: ${response.status} ${JSON.stringify(body)}`);
    };
    let rpcId = 1;
    const directBalance = async (address: Address) => {
      const response = await fetch(chain.node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: rpcId++, method: 'eth_getBalance', params: [address, 'latest'] }),
      });
      await response.json();
    };
    console.log(`setup (node, ${COLD_TOKENS} tokens, gateway): ${((performance.now() - setupStarted) / 1000).toFixed(1)} s`);

    // Warm-up of both paths (JIT, connections), not measured.
    await measure('warm-up', 50, (i) => execute('get_eth_balance', { address: randomAddress(1_000_000 + i), chain: 'local' }));
    await measure('warm-up', 50, (i) => directBalance(randomAddress(2_000_000 + i)));

    const hot = chain.holders[1];
    const hotToken = chain.token;
    // Sanity: the token is readable the way the tool reads it.
    await chain.node.publicClient.readContract({ address: hotToken, abi: erc20Abi, functionName: 'decimals' });

    const results: Figures[] = [];
    results.push(await measure('eth_getBalance direct to node (baseline)', CALLS, (i) => directBalance(randomAddress(i))));
    results.push(
      await measure('get_eth_balance cold (new address each call)', CALLS, (i) =>
        execute('get_eth_balance', { address: randomAddress(10_000 + i), chain: 'local' }),
      ),
    );
    await execute('get_eth_balance', { address: hot, chain: 'local' });
    results.push(
      await measure('get_eth_balance warm (same address, cached)', CALLS, () =>
        execute('get_eth_balance', { address: hot, chain: 'local' }),
      ),
    );
    results.push(
      await measure('get_token_info cold (new token each call)', COLD_TOKENS, (i) =>
        execute('get_token_info', { token: tokens[i], chain: 'local' }),
      ),
    );
    await execute('get_token_info', { token: hotToken, chain: 'local' });
    results.push(
      await measure('get_token_info warm (same token, cached)', CALLS, () =>
        execute('get_token_info', { token: hotToken, chain: 'local' }),
      ),
    );

    const baseline = results[0].perSecond;
    console.log(`\nconcurrency ${CONCURRENCY}; local Hardhat node (local block time 1 s = warm cache lifetime)\n`);
    console.log(
      'run'.padEnd(48),
      'calls'.padStart(6),
      'calls/s'.padStart(9),
      'p50 ms'.padStart(8),
      'p95 ms'.padStart(8),
      '× baseline'.padStart(11),
    );
    for (const r of results) {
      console.log(
        r.name.padEnd(48),
        String(r.calls).padStart(6),
        r.perSecond.toFixed(0).padStart(9),
        r.p50.toFixed(2).padStart(8),
        r.p95.toFixed(2).padStart(8),
        (r.perSecond / baseline).toFixed(2).padStart(11),
      );
    }
    const [, ethCold, ethWarm, tokenCold, tokenWarm] = results;
    console.log(
      `\nwarm/cold throughput: get_eth_balance ${(ethWarm.perSecond / ethCold.perSecond).toFixed(2)}×, get_token_info ${(tokenWarm.perSecond / tokenCold.perSecond).toFixed(2)}×`,
    );
  } finally {
    await gateway?.stop();
    await chain.stop();
  }
}

await main();
