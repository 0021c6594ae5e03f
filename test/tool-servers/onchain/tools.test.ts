import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { erc20Abi, formatEther, formatGwei, formatUnits, getAddress, size, type Address, type Hash } from 'viem';
import {
  ETH_SENT,
  TOKEN_DECIMALS,
  TOKEN_SENT,
  TOKEN_SUPPLY,
  startLocalChainScenario,
  type LocalChainScenario,
} from './local-chain-scenario.js';
import { connectOnchain, type OnchainTestClient } from './mcp-client.js';

// Every expected value below is read from the node with the test's own viem client.
let chain: LocalChainScenario;
let tools: OnchainTestClient;

before(async () => {
  chain = await startLocalChainScenario();
  // No caching of moving data here: these tests change state between calls.
  tools = await connectOnchain({ env: chain.env({ ONCHAIN_CACHE_MAX_TTL_MS: '0' }) });
});

after(async () => {
  await tools?.close();
  await chain?.stop();
});

describe('listing', () => {
  test('the server offers the nine on-chain tools', async () => {
    const { tools: listed } = await tools.client.listTools();
    assert.deepEqual(listed.map((t) => t.name).sort(), [
      'get_block',
      'get_eth_balance',
      'get_gas_price',
      'get_token_balance',
      'get_token_info',
      'get_transaction',
      'get_tx_count',
      'is_contract',
      'resolve_ens',
    ]);
    for (const tool of listed) assert.equal(tool.outputSchema?.type, 'object', tool.name);
  });
});

describe('get_eth_balance', () => {
  test('returns exactly address, wei, exact ETH and chain', async () => {
    const holder = chain.holders[4];
    const wei = await chain.node.publicClient.getBalance({ address: holder });
    const result = await tools.ok('get_eth_balance', { address: holder.toLowerCase(), chain: 'local' });
    assert.deepEqual(result, { address: holder, balance_wei: wei.toString(), balance_eth: formatEther(wei), chain: 'Local' });
    // Funded with 10 000 ETH and sent 1.5: the decimal string is exact, not a float.
    assert.equal(result.balance_eth, '10001.5');
    assert.equal(wei, 10_000n * 10n ** 18n + ETH_SENT);
  });

  test('the chain may be given by alias or numeric id', async () => {
    const holder = chain.holders[4];
    const byAlias = await tools.ok('get_eth_balance', { address: holder, chain: 'hardhat' });
    const byId = await tools.ok('get_eth_balance', { address: holder, chain: 31337 });
    assert.equal(byAlias.chain, 'Local');
    assert.equal(byId.balance_wei, byAlias.balance_wei);
  });

  test('an account that never received anything has a zero balance', async () => {
    const empty = '0x000000000000000000000000000000000000dEaD';
    const result = await tools.ok('get_eth_balance', { address: empty, chain: 'local' });
    assert.equal(result.balance_wei, (await chain.node.publicClient.getBalance({ address: empty })).toString());
    assert.equal(result.balance_eth, '0');
  });

  test('an unknown chain is invalid_arguments listing the supported chains', async () => {
    const error = await tools.fail('get_eth_balance', { address: chain.holders[0], chain: 'dogechain' });
    assert.deepEqual(error, {
      code: 'invalid_arguments',
      param: 'chain',
      message: 'Unknown chain "dogechain". Supported chains: ethereum, base, arbitrum, optimism, polygon, bsc, avalanche, sepolia, local.',
    });
  });

  test('a malformed address and a bad checksum are invalid_arguments', async () => {
    assert.deepEqual(await tools.fail('get_eth_balance', { address: '0x1234', chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'address',
      message: 'address: "0x1234" is not a 0x address of 40 hex digits.',
    });
    const badChecksum = '0x52908400098527886E0F7030069857D2E4169Ee7';
    assert.deepEqual(await tools.fail('get_eth_balance', { address: badChecksum, chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'address',
      message: `address: "${badChecksum}" fails its EIP-55 checksum.`,
    });
    const missing = await tools.fail('get_eth_balance', { chain: 'local' });
    assert.equal(missing.code, 'invalid_arguments');
    assert.equal(missing.param, 'address');
  });
});

describe('ERC-20 tools', () => {
  test('get_token_balance by contract address applies the decimals exactly', async () => {
    const holder = chain.holders[1];
    const raw = await chain.node.publicClient.readContract({
      address: chain.token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [holder],
    });
    const decimals = await chain.node.publicClient.readContract({ address: chain.token, abi: erc20Abi, functionName: 'decimals' });
    const result = await tools.ok('get_token_balance', { address: holder, token: chain.token.toLowerCase(), chain: 'local' });
    assert.deepEqual(result, {
      address: holder,
      token: { address: chain.token, symbol: 'TST', decimals },
      balance_raw: raw.toString(),
      balance: formatUnits(raw, decimals),
      chain: 'Local',
    });
    assert.equal(raw, TOKEN_SENT);
    assert.equal(result.balance, '12.345678');
  });

  test('get_token_balance accepts a known symbol of the chain, case-insensitively', async () => {
    const holder = chain.holders[0];
    const raw = await chain.node.publicClient.readContract({
      address: chain.token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [holder],
    });
    const result = await tools.ok<{ balance_raw: string; balance: string }>('get_token_balance', {
      address: holder,
      token: 'tst',
      chain: 'local',
    });
    assert.equal(result.balance_raw, raw.toString());
    assert.equal(result.balance, formatUnits(TOKEN_SUPPLY - TOKEN_SENT, TOKEN_DECIMALS));
  });

  test('an unknown symbol is invalid_arguments naming the known ones', async () => {
    assert.deepEqual(await tools.fail('get_token_balance', { address: chain.holders[0], token: 'PEPE', chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'token',
      message: 'token: "PEPE" is not a known token symbol on Local (known: TST); pass the contract address.',
    });
  });

  test('get_token_info returns metadata and total supply', async () => {
    const read = (functionName: 'name' | 'symbol' | 'decimals' | 'totalSupply') =>
      chain.node.publicClient.readContract({ address: chain.token, abi: erc20Abi, functionName });
    const [name, symbol, decimals, totalSupply] = await Promise.all([read('name'), read('symbol'), read('decimals'), read('totalSupply')]);
    const result = await tools.ok('get_token_info', { token: 'TST', chain: 'local' });
    assert.deepEqual(result, {
      address: chain.token,
      name,
      symbol,
      decimals,
      total_supply_raw: totalSupply.toString(),
      total_supply: formatUnits(totalSupply as bigint, decimals as number),
      chain: 'Local',
    });
    assert.equal(result.total_supply, '1000000');
  });

  test('an address without an ERC-20 is not_found', async () => {
    assert.deepEqual(await tools.fail('get_token_info', { token: chain.holders[2], chain: 'local' }), {
      code: 'not_found',
      param: 'token',
      message: `No ERC-20 token at ${chain.holders[2]} on Local.`,
    });
    assert.deepEqual(await tools.fail('get_token_balance', { address: chain.holders[0], token: chain.reverter, chain: 'local' }), {
      code: 'not_found',
      param: 'token',
      message: `No ERC-20 token at ${chain.reverter} on Local.`,
    });
  });
});

describe('get_gas_price and get_block', () => {
  test('get_gas_price matches the node (gas price, base fee, priority fee)', async () => {
    const result = await tools.ok<Record<string, unknown>>('get_gas_price', { chain: 'local' });
    const block = await chain.node.publicClient.getBlock({ blockNumber: BigInt(result.block_number as number) });
    const gasPrice = await chain.node.publicClient.getGasPrice();
    const priority = BigInt(await chain.node.rpc<string>('eth_maxPriorityFeePerGas'));
    assert.deepEqual(result, {
      gas_price_wei: gasPrice.toString(),
      gas_price_gwei: formatGwei(gasPrice),
      eip1559: true,
      base_fee_wei: block.baseFeePerGas!.toString(),
      base_fee_gwei: formatGwei(block.baseFeePerGas!),
      priority_fee_wei: priority.toString(),
      priority_fee_gwei: formatGwei(priority),
      block_number: Number(block.number),
      chain: 'Local',
    });
  });

  test('get_block by number, hash and tag matches the node', async () => {
    const receipt = await chain.node.publicClient.getTransactionReceipt({ hash: chain.tx.tokenTransfer });
    const block = await chain.node.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const expected = {
      number: Number(block.number),
      hash: block.hash,
      parent_hash: block.parentHash,
      timestamp: Number(block.timestamp),
      timestamp_iso: new Date(Number(block.timestamp) * 1000).toISOString(),
      transaction_count: block.transactions.length,
      gas_used: block.gasUsed.toString(),
      gas_limit: block.gasLimit.toString(),
      base_fee_wei: block.baseFeePerGas!.toString(),
      miner: getAddress(block.miner),
      chain: 'Local',
    };
    assert.equal(expected.transaction_count, 1);
    assert.deepEqual(await tools.ok('get_block', { block: Number(block.number), chain: 'local' }), expected);
    assert.deepEqual(await tools.ok('get_block', { block: String(block.number), chain: 'local' }), expected);
    assert.deepEqual(await tools.ok('get_block', { block: block.hash, chain: 'local' }), expected);

    const latest = await chain.node.publicClient.getBlock({ blockTag: 'latest' });
    const byTag = await tools.ok<{ number: number; hash: string }>('get_block', { chain: 'local' });
    assert.equal(byTag.number, Number(latest.number));
    assert.equal(byTag.hash, latest.hash);
    const finalized = await chain.node.publicClient.getBlock({ blockTag: 'finalized' });
    assert.equal((await tools.ok<{ hash: string }>('get_block', { block: 'finalized', chain: 'local' })).hash, finalized.hash);
    const earliest = await tools.ok<{ number: number }>('get_block', { block: 'earliest', chain: 'local' });
    assert.equal(earliest.number, 0);
  });

  test('an unknown block is not_found, a malformed one invalid_arguments', async () => {
    assert.deepEqual(await tools.fail('get_block', { block: 999_999_999, chain: 'local' }), {
      code: 'not_found',
      param: 'block',
      message: 'Block 999999999 was not found on Local.',
    });
    const unknownHash = `0x${'ab'.repeat(32)}`;
    assert.deepEqual(await tools.fail('get_block', { block: unknownHash, chain: 'local' }), {
      code: 'not_found',
      param: 'block',
      message: `Block ${unknownHash} was not found on Local.`,
    });
    assert.deepEqual(await tools.fail('get_block', { block: 'yesterday', chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'block',
      message: 'block: "yesterday" is not a block number, a 0x block hash or a tag (latest, finalized, safe, earliest, pending).',
    });
  });
});

describe('get_tx_count', () => {
  test('latest and pending nonces follow the mempool', async () => {
    const sender = chain.holders[0];
    const before = await tools.ok('get_tx_count', { address: sender, chain: 'local' });
    const latest = await chain.node.publicClient.getTransactionCount({ address: sender, blockTag: 'latest' });
    assert.deepEqual(before, { address: sender, nonce_latest: latest, nonce_pending: latest, chain: 'Local' });

    await chain.node.rpc('evm_setAutomine', [false]);
    try {
      const hash = await chain.node.wallet(0).sendTransaction({ to: chain.holders[2], value: 1n });
      const during = await tools.ok('get_tx_count', { address: sender, chain: 'local' });
      const pending = await chain.node.publicClient.getTransactionCount({ address: sender, blockTag: 'pending' });
      assert.equal(pending, latest + 1);
      assert.deepEqual(during, { address: sender, nonce_latest: latest, nonce_pending: pending, chain: 'Local' });

      // Not mined yet: get_transaction says pending (and must not cache that).
      const pendingTx = await tools.ok<Record<string, unknown>>('get_transaction', { hash, chain: 'local' });
      assert.equal(pendingTx.status, 'pending');
      assert.equal(pendingTx.block_number, null);
      assert.equal(pendingTx.fee_wei, null);
      await chain.node.rpc('evm_mine');
      const minedTx = await tools.ok<Record<string, unknown>>('get_transaction', { hash, chain: 'local' });
      assert.equal(minedTx.status, 'success');
      const receipt = await chain.node.publicClient.getTransactionReceipt({ hash });
      assert.equal(minedTx.block_number, Number(receipt.blockNumber));
    } finally {
      await chain.node.rpc('evm_setAutomine', [true]);
    }
  });
});

describe('get_transaction', () => {
  async function expectedFor(hash: Hash) {
    const tx = await chain.node.publicClient.getTransaction({ hash });
    const receipt = await chain.node.publicClient.getTransactionReceipt({ hash });
    const fee = receipt.gasUsed * receipt.effectiveGasPrice;
    return {
      hash,
      status: receipt.status,
      from: getAddress(tx.from),
      to: tx.to ? getAddress(tx.to) : null,
      value_wei: tx.value.toString(),
      value_eth: formatEther(tx.value),
      nonce: tx.nonce,
      block_number: Number(receipt.blockNumber),
      gas_used: receipt.gasUsed.toString(),
      effective_gas_price_wei: receipt.effectiveGasPrice.toString(),
      fee_wei: fee.toString(),
      fee_eth: formatEther(fee),
      input_size_bytes: size(tx.input),
      contract_address: receipt.contractAddress ? getAddress(receipt.contractAddress) : null,
      chain: 'Local',
    };
  }

  test('a plain transfer', async () => {
    const expected = await expectedFor(chain.tx.transfer);
    assert.deepEqual(await tools.ok('get_transaction', { hash: chain.tx.transfer, chain: 'local' }), expected);
    assert.equal(expected.status, 'success');
    assert.equal(expected.value_eth, '1.5');
    assert.equal(expected.input_size_bytes, 0);
    assert.equal(expected.gas_used, '21000');
  });

  test('a reverted call', async () => {
    const expected = await expectedFor(chain.tx.reverted);
    assert.equal(expected.status, 'reverted');
    assert.equal(expected.to, chain.reverter);
    assert.equal(expected.input_size_bytes, 4);
    assert.deepEqual(await tools.ok('get_transaction', { hash: chain.tx.reverted, chain: 'local' }), expected);
  });

  test('a contract creation names the created contract', async () => {
    const expected = await expectedFor(chain.tx.creation);
    assert.equal(expected.to, null);
    assert.equal(expected.contract_address, chain.token);
    assert.deepEqual(
      await tools.ok('get_transaction', { hash: chain.tx.creation.toUpperCase().replace('0X', '0x'), chain: 'local' }),
      expected,
    );
  });

  test('an EIP-7702 (type 4) transaction', async () => {
    const expected = await expectedFor(chain.tx.delegation);
    assert.equal((await chain.node.publicClient.getTransaction({ hash: chain.tx.delegation })).type, 'eip7702');
    assert.deepEqual(await tools.ok('get_transaction', { hash: chain.tx.delegation, chain: 'local' }), expected);
  });

  test('an unknown hash is not_found, a malformed one invalid_arguments', async () => {
    const unknown = `0x${'12'.repeat(32)}`;
    assert.deepEqual(await tools.fail('get_transaction', { hash: unknown, chain: 'local' }), {
      code: 'not_found',
      param: 'hash',
      message: `Transaction ${unknown} was not found on Local.`,
    });
    assert.deepEqual(await tools.fail('get_transaction', { hash: '0xnothex', chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'hash',
      message: 'hash: "0xnothex" is not a 0x hash of 64 hex digits.',
    });
  });
});

describe('is_contract', () => {
  test('a contract, an EOA and an EIP-7702 delegated account', async () => {
    const publicClient = chain.node.publicClient;
    const tokenCode = await publicClient.getCode({ address: chain.token });
    assert.deepEqual(await tools.ok('is_contract', { address: chain.token, chain: 'local' }), {
      address: chain.token,
      is_contract: true,
      kind: 'contract',
      delegate: null,
      bytecode_size: size(tokenCode!),
      chain: 'Local',
    });
    assert.deepEqual(await tools.ok('is_contract', { address: chain.holders[0], chain: 'local' }), {
      address: chain.holders[0],
      is_contract: false,
      kind: 'eoa',
      delegate: null,
      bytecode_size: 0,
      chain: 'Local',
    });
    const delegatedCode = await publicClient.getCode({ address: chain.holders[5] });
    assert.equal(delegatedCode, `0xef0100${chain.multicall3.slice(2).toLowerCase()}`);
    assert.deepEqual(await tools.ok('is_contract', { address: chain.holders[5], chain: 'local' }), {
      address: chain.holders[5],
      is_contract: false,
      kind: 'delegated_eoa',
      delegate: chain.multicall3,
      bytecode_size: 23,
      chain: 'Local',
    });
  });
});

describe('ENS', () => {
  test('forward resolution, with ENSIP-15 normalization', async () => {
    assert.deepEqual(await tools.ok('resolve_ens', { name: 'alice.eth', chain: 'local' }), {
      direction: 'forward',
      name: 'alice.eth',
      address: chain.holders[1],
      chain: 'Local',
    });
    const upper = await tools.ok<{ name: string; address: Address }>('resolve_ens', { name: 'ALICE.eth', chain: 'local' });
    assert.equal(upper.name, 'alice.eth');
    assert.equal(upper.address, chain.holders[1]);
    assert.deepEqual(await tools.ok('resolve_ens', { name: 'nobody.eth', chain: 'local' }), {
      direction: 'forward',
      name: 'nobody.eth',
      address: null,
      chain: 'Local',
    });
  });

  test('reverse resolution is accepted only when the name resolves back', async () => {
    assert.deepEqual(await tools.ok('resolve_ens', { address: chain.holders[1], chain: 'local' }), {
      direction: 'reverse',
      name: 'alice.eth',
      address: chain.holders[1],
      chain: 'Local',
    });
    // holders[3] has a reverse record claiming alice.eth, which resolves to holders[1].
    assert.deepEqual(await tools.ok('resolve_ens', { address: chain.holders[3], chain: 'local' }), {
      direction: 'reverse',
      name: null,
      address: chain.holders[3],
      chain: 'Local',
    });
    // holders[2] is bob.eth forward but has no reverse record.
    assert.equal((await tools.ok<{ name: string | null }>('resolve_ens', { address: chain.holders[2], chain: 'local' })).name, null);
  });

  test('balances accept ENS names; an unresolvable name is not_found', async () => {
    const wei = await chain.node.publicClient.getBalance({ address: chain.holders[2] });
    assert.deepEqual(await tools.ok('get_eth_balance', { address: 'bob.eth', chain: 'local' }), {
      address: chain.holders[2],
      balance_wei: wei.toString(),
      balance_eth: formatEther(wei),
      chain: 'Local',
    });
    const tokenResult = await tools.ok<{ address: string; balance_raw: string; resolved_from: unknown }>('get_token_balance', {
      address: 'alice.eth',
      token: 'TST',
      chain: 'local',
    });
    assert.equal(tokenResult.address, chain.holders[1]);
    assert.equal(tokenResult.balance_raw, TOKEN_SENT.toString());
    assert.deepEqual(tokenResult.resolved_from, { name: 'alice.eth', chain: 'Local' });
    assert.deepEqual(await tools.fail('get_eth_balance', { address: 'nobody.eth', chain: 'local' }), {
      code: 'not_found',
      param: 'address',
      message: 'ENS name "nobody.eth" does not resolve to an address.',
    });
  });

  test('on a chain without ENS a name resolves on Ethereum, and get_token_balance says so', async () => {
    // "ethereum" is the local node here, with the test ENS; "local" has no ENS of its own.
    const env = chain.env({ RPC_URL_ETHEREUM: chain.node.url, ENS_UNIVERSAL_RESOLVER_ETHEREUM: chain.ens.universalResolver });
    delete env.ENS_UNIVERSAL_RESOLVER_LOCAL;
    const crossChain = await connectOnchain({ env: { ...env, ONCHAIN_CACHE_MAX_TTL_MS: '0' } });
    try {
      const result = await crossChain.ok<Record<string, unknown>>('get_token_balance', {
        address: 'alice.eth',
        token: 'TST',
        chain: 'local',
      });
      assert.equal(result.address, chain.holders[1]);
      assert.deepEqual(result.resolved_from, { name: 'alice.eth', chain: 'Ethereum' });
      // get_eth_balance keeps exactly its four fields; its description tells where names resolve.
      const balance = await crossChain.ok('get_eth_balance', { address: 'alice.eth', chain: 'local' });
      assert.deepEqual(Object.keys(balance), ['address', 'balance_wei', 'balance_eth', 'chain']);
      const { tools: listed } = await crossChain.client.listTools();
      assert.match(listed.find((t) => t.name === 'get_eth_balance')!.description!, /on Ethereum mainnet when the chain has none/);
      // An address given as an address has no resolved_from.
      const plain = await crossChain.ok<Record<string, unknown>>('get_token_balance', {
        address: chain.holders[1],
        token: 'TST',
        chain: 'local',
      });
      assert.equal('resolved_from' in plain, false);
    } finally {
      await crossChain.close();
    }
  });

  test('invalid names and ambiguous arguments are refused', async () => {
    const invalid = await tools.fail('resolve_ens', { name: 'bad_name!.eth', chain: 'local' });
    assert.equal(invalid.code, 'invalid_arguments');
    assert.equal(invalid.param, 'name');
    assert.match(invalid.message, /^name: "bad_name!\.eth" is not a valid ENS name \(/);
    assert.deepEqual(await tools.fail('resolve_ens', { name: 'eth', chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'name',
      message: 'name: "eth" is not a valid ENS name.',
    });
    assert.deepEqual(await tools.fail('resolve_ens', { name: 'alice.eth', address: chain.holders[1], chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'address',
      message: 'Pass exactly one of "name" (forward) or "address" (reverse).',
    });
    assert.deepEqual(await tools.fail('resolve_ens', { chain: 'local' }), {
      code: 'invalid_arguments',
      param: 'name',
      message: 'Pass exactly one of "name" (forward) or "address" (reverse).',
    });
  });

  test('a changed record is seen, and the old reverse claim stops being accepted', async () => {
    await chain.setAliceAddress(chain.holders[3]);
    try {
      const forward = await tools.ok<{ address: Address }>('resolve_ens', { name: 'alice.eth', chain: 'local' });
      assert.equal(forward.address, chain.holders[3]);
      assert.equal((await tools.ok<{ name: string | null }>('resolve_ens', { address: chain.holders[1], chain: 'local' })).name, null);
      assert.equal(
        (await tools.ok<{ name: string | null }>('resolve_ens', { address: chain.holders[3], chain: 'local' })).name,
        'alice.eth',
      );
    } finally {
      await chain.setAliceAddress(chain.holders[1]);
    }
  });
});
