/**
 * The on-chain tests' world: a local Hardhat node with contracts compiled from source and a known
 * history — an ERC-20 and transfers, Multicall3, a minimal ENS set with forward and reverse
 * records, a reverted call, a contract creation, a plain transfer and an EIP-7702 delegation.
 * Expected values are always read back from the node by the tests, never from the tool.
 */
import { getAddress, labelhash, namehash, parseEther, type Address, type Hash } from 'viem';
import { startEvmNode, type EvmNode } from '../../helpers/evm-node.js';
import { compileContracts, type CompiledContract } from '../../helpers/solidity.js';

export interface LocalChainScenario {
  node: EvmNode;
  contracts: Record<string, CompiledContract>;
  token: Address;
  multicall3: Address;
  ens: { registry: Address; resolver: Address; universalResolver: Address };
  /** holder[1] got tokens and is alice.eth (forward + reverse); holder[3] claims alice.eth in reverse only. */
  holders: Address[];
  tx: { creation: Hash; transfer: Hash; reverted: Hash; delegation: Hash; tokenTransfer: Hash };
  reverter: Address;
  /** Set alice.eth's address record (account 0 owns every ENS node). */
  setAliceAddress(address: Address): Promise<void>;
  /** Env for the onchain server pointing `local` at this node. */
  env(extra?: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

export const TOKEN_DECIMALS = 6;
export const TOKEN_SUPPLY = 1_000_000_000_000n; // 1 000 000 TST
export const TOKEN_SENT = 12_345_678n; // 12.345678 TST
export const ETH_SENT = parseEther('1.5');

export async function startLocalChainScenario(): Promise<LocalChainScenario> {
  const contracts = compileContracts();
  const node = await startEvmNode();
  try {
    return await buildScenario(node, contracts);
  } catch (err) {
    await node.stop();
    throw err;
  }
}

async function buildScenario(node: EvmNode, contracts: Record<string, CompiledContract>): Promise<LocalChainScenario> {
  const { publicClient } = node;
  const owner = node.wallet(0);
  const holders = node.accounts.map((a) => a.address);
  const mined = async (hash: Hash) => {
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    return hash;
  };

  const creation = await owner.deployContract({
    abi: contracts.TestToken.abi,
    bytecode: contracts.TestToken.bytecode,
    args: ['Test Token', 'TST', TOKEN_DECIMALS, TOKEN_SUPPLY],
  });
  const token = getAddress((await publicClient.waitForTransactionReceipt({ hash: creation, pollingInterval: 50 })).contractAddress!);
  const tokenTransfer = await mined(
    await owner.writeContract({ address: token, abi: contracts.TestToken.abi, functionName: 'transfer', args: [holders[1], TOKEN_SENT] }),
  );
  const multicall3 = await node.deploy(contracts.Multicall3);
  const reverter = await node.deploy(contracts.Reverter);
  // Explicit gas: no estimate (which would fail), so the reverting call is mined with status 0.
  const reverted = await mined(
    await owner.writeContract({ address: reverter, abi: contracts.Reverter.abi, functionName: 'poke', gas: 100_000n }),
  );
  const transfer = await mined(await owner.sendTransaction({ to: holders[4], value: ETH_SENT }));

  // EIP-7702: account 5 delegates its code to Multicall3 and calls getBlockNumber() on itself.
  const delegator = node.wallet(5);
  const authorization = await delegator.signAuthorization({ contractAddress: multicall3, executor: 'self' });
  const delegation = await mined(
    await delegator.sendTransaction({ authorizationList: [authorization], to: holders[5], data: '0x42cbb15c', gas: 100_000n }),
  );

  // Minimal ENS: registry, one resolver, a Universal Resolver.
  const registry = await node.deploy(contracts.EnsRegistry);
  const resolver = await node.deploy(contracts.EnsResolver, [registry]);
  const universalResolver = await node.deploy(contracts.UniversalResolver, [registry]);
  const reg = (functionName: string, args: readonly unknown[]) =>
    owner.writeContract({ address: registry, abi: contracts.EnsRegistry.abi, functionName, args }).then(mined);
  const res = (functionName: string, args: readonly unknown[]) =>
    owner.writeContract({ address: resolver, abi: contracts.EnsResolver.abi, functionName, args }).then(mined);
  const zero = `0x${'00'.repeat(32)}` as Hash;
  await reg('setSubnodeOwner', [zero, labelhash('eth'), holders[0]]);
  await reg('setSubnodeOwner', [namehash('eth'), labelhash('alice'), holders[0]]);
  await reg('setSubnodeOwner', [namehash('eth'), labelhash('bob'), holders[0]]);
  await reg('setSubnodeOwner', [zero, labelhash('reverse'), holders[0]]);
  await reg('setSubnodeOwner', [namehash('reverse'), labelhash('addr'), holders[0]]);
  await reg('setResolver', [namehash('alice.eth'), resolver]);
  await reg('setResolver', [namehash('bob.eth'), resolver]);
  await res('setAddr', [namehash('alice.eth'), holders[1]]);
  await res('setAddr', [namehash('bob.eth'), holders[2]]);
  for (const [holder, name] of [
    [holders[1], 'alice.eth'],
    [holders[3], 'alice.eth'], // a claim the forward record does not back
  ] as const) {
    const label = holder.slice(2).toLowerCase();
    await reg('setSubnodeOwner', [namehash('addr.reverse'), labelhash(label), holders[0]]);
    await reg('setResolver', [namehash(`${label}.addr.reverse`), resolver]);
    await res('setName', [namehash(`${label}.addr.reverse`), name]);
  }

  return {
    node,
    contracts,
    token,
    multicall3,
    reverter,
    ens: { registry, resolver, universalResolver },
    holders,
    tx: { creation, transfer, reverted, delegation, tokenTransfer },
    async setAliceAddress(address) {
      await res('setAddr', [namehash('alice.eth'), address]);
    },
    env(extra = {}) {
      return {
        RPC_URL_LOCAL: node.url,
        ENS_UNIVERSAL_RESOLVER_LOCAL: universalResolver,
        MULTICALL3_LOCAL: multicall3,
        TOKENS_LOCAL: `TST=${token}`,
        ...extra,
      };
    },
    stop: () => node.stop(),
  };
}
