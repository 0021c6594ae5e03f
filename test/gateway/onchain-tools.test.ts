import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { erc20Abi, formatEther, formatUnits, getAddress } from 'viem';
import { freePort } from '../helpers/evm-node.js';
import { startTestGateway, walletHeaders, type TestGateway, executeTool } from '../helpers/gateway.js';
import { runnableEnv } from './tools/fixture-servers.js';
import { startLocalChainScenario, type LocalChainScenario } from '../tool-servers/onchain/local-chain-scenario.js';

interface ExecuteBody {
  ok: boolean;
  tool: string;
  result: Record<string, unknown>;
  error: { message: string; type: string; code: string; param: string | null };
}

// The built onchain server (dist/, so run `npm run build` first) behind the real gateway, against
// the local Hardhat chain. A second copy, prefixed `down_`, has only dead RPCs.
describe('onchain tools through the gateway', () => {
  let chain: LocalChainScenario;
  let gateway: TestGateway;
  const secret = 'SECRETKEY42';

  const execute = (tool: string, args: Record<string, unknown>) => executeTool<ExecuteBody>(gateway, tool, args);

  before(async () => {
    chain = await startLocalChainScenario();
    const passThrough = runnableEnv();
    const deadRpcs = `http://127.0.0.1:${await freePort()}/v2/${secret},http://127.0.0.1:${await freePort()}`;
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.mcpServers = {
          onchain: {
            command: process.execPath,
            args: ['dist/tool-servers/onchain/main.js'],
            // Through the host's ${VAR} expansion, as the shipped config does it.
            env: { ...chain.env(), RPC_URL_LOCAL: '${TEST_RPC_URL_LOCAL}', RPC_URL_BASE: '${RPC_URL_BASE}', LOG_LEVEL: 'warn' },
          },
          onchain_down: {
            command: process.execPath,
            args: ['dist/tool-servers/onchain/main.js'],
            env: { RPC_URL_LOCAL: deadRpcs, RPC_TIMEOUT_MS: '2000', LOG_LEVEL: 'warn' },
            prefix: 'down_',
          },
        };
      },
      env: { ...passThrough, FREE_MODE: 'true', TEST_RPC_URL_LOCAL: chain.node.url },
    });
  });

  after(async () => {
    await gateway?.stop();
    await chain?.stop();
  });

  test('GET /v1/tools lists the nine on-chain tools', async () => {
    const response = await fetch(`${gateway.url}/v1/tools`, { headers: walletHeaders() });
    assert.equal(response.status, 200);
    const { tools } = (await response.json()) as { tools: Array<{ name: string; server?: string }> };
    assert.deepEqual(
      tools.filter((t) => t.server === 'onchain').map((t) => t.name),
      [
        'get_eth_balance',
        'get_token_balance',
        'get_token_info',
        'get_gas_price',
        'get_block',
        'get_tx_count',
        'get_transaction',
        'is_contract',
        'resolve_ens',
      ],
    );
  });

  test('all nine tools run through POST /v1/tools/execute with values matching the node', async () => {
    const pc = chain.node.publicClient;
    const [alice, bob] = [chain.holders[1], chain.holders[2]];

    let r = await execute('get_eth_balance', { address: 'bob.eth', chain: 'local' });
    assert.equal(r.status, 200);
    const wei = await pc.getBalance({ address: bob });
    assert.deepEqual(r.body, {
      ok: true,
      tool: 'get_eth_balance',
      result: { address: bob, balance_wei: wei.toString(), balance_eth: formatEther(wei), chain: 'Local' },
    });

    r = await execute('get_token_balance', { address: alice, token: 'TST', chain: 'local' });
    const raw = await pc.readContract({ address: chain.token, abi: erc20Abi, functionName: 'balanceOf', args: [alice] });
    assert.equal(r.body.result.balance_raw, raw.toString());
    assert.equal(r.body.result.balance, formatUnits(raw, 6));

    r = await execute('get_token_info', { token: chain.token, chain: 'local' });
    const supply = await pc.readContract({ address: chain.token, abi: erc20Abi, functionName: 'totalSupply' });
    assert.equal(r.body.result.total_supply_raw, supply.toString());
    assert.equal(r.body.result.name, 'Test Token');

    r = await execute('get_gas_price', { chain: 'local' });
    assert.equal(r.status, 200);
    assert.equal(r.body.result.eip1559, true);

    const receipt = await pc.getTransactionReceipt({ hash: chain.tx.transfer });
    r = await execute('get_block', { block: Number(receipt.blockNumber), chain: 'local' });
    assert.equal(r.body.result.hash, receipt.blockHash);

    r = await execute('get_tx_count', { address: chain.holders[0], chain: 'local' });
    assert.equal(r.body.result.nonce_latest, await pc.getTransactionCount({ address: chain.holders[0] }));

    r = await execute('get_transaction', { hash: chain.tx.reverted, chain: 'local' });
    assert.equal(r.body.result.status, 'reverted');
    assert.equal(r.body.result.gas_used, (await pc.getTransactionReceipt({ hash: chain.tx.reverted })).gasUsed.toString());

    r = await execute('is_contract', { address: chain.holders[5], chain: 'local' });
    assert.deepEqual([r.body.result.kind, r.body.result.delegate], ['delegated_eoa', getAddress(chain.multicall3)]);

    r = await execute('resolve_ens', { address: alice, chain: 'local' });
    assert.equal(r.body.result.name, 'alice.eth');
  });

  test('an unknown block is 404, a bad address 400, an unknown chain 400', async () => {
    let r = await execute('get_block', { block: 987_654_321, chain: 'local' });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, {
      ok: false,
      tool: 'get_block',
      error: { message: 'Block 987654321 was not found on Local.', type: 'not_found_error', code: 'not_found', param: 'block' },
    });
    r = await execute('get_eth_balance', { address: '0xnope', chain: 'local' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'invalid_tool_arguments');
    assert.equal(r.body.error.param, 'address');
    r = await execute('get_gas_price', { chain: 'narnia' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.param, 'chain');
  });

  test('every RPC down is 502 without the URL secret, and the gateway stays up', async () => {
    const r = await execute('down_get_eth_balance', { address: chain.holders[0], chain: 'local' });
    assert.equal(r.status, 502);
    assert.equal(r.body.ok, false);
    assert.equal(r.body.error.code, 'upstream_unavailable');
    assert.match(r.body.error.message, /^RPC unavailable for Local: connection failed/);
    assert.ok(!JSON.stringify(r.body).includes(secret));
    assert.ok(!gateway.rawLogs().includes(secret));
    const health = await fetch(`${gateway.url}/health`);
    assert.equal(health.status, 200);
    const again = await execute('get_eth_balance', { address: chain.holders[0], chain: 'local' });
    assert.equal(again.status, 200);
  });
});
