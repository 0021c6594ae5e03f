/**
 * The deposit tests' chain: a Hardhat node with two ERC-20s compiled from source, a 6-decimals
 * "USDC" the gateway accepts and a 6-decimals "OTHER" it does not, both funded at two depositors;
 * the treasury is dev account 5. Transfers are sent as signed raw transactions, so a test can
 * replay the very same transaction after a reorg (evm_snapshot / evm_revert).
 */
import { encodeFunctionData, type Address, type Hash, type Hex } from 'viem';
import { startEvmNode, type EvmNode } from '../../helpers/evm-node.js';
import { compileContracts, type CompiledContract } from '../../helpers/solidity.js';

export const DECIMALS = 6;
/** 0.01 USDC a credit. */
export const UNITS_PER_CREDIT = 10_000n;

export interface DepositChain {
  node: EvmNode;
  usdc: Address;
  other: Address;
  treasury: Address;
  /** Dev accounts 1 and 2, each holding 1000 of both tokens. */
  depositors: Address[];
  /** A transfer of `amount` atomic units from depositor `from` (index into node.accounts), signed, not sent. */
  signTransfer(options: { token?: Address; from: number; to?: Address; amount: bigint }): Promise<Hex>;
  /** Send a signed transaction and wait for its block (automine). */
  send(raw: Hex): Promise<{ hash: Hash; blockNumber: number; blockHash: string }>;
  transfer(options: { token?: Address; from: number; to?: Address; amount: bigint }): Promise<{ hash: Hash; blockNumber: number }>;
  mine(blocks: number): Promise<void>;
  head(): Promise<number>;
  snapshot(): Promise<string>;
  revert(id: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startDepositChain(): Promise<DepositChain> {
  const contracts = compileContracts();
  const node = await startEvmNode();
  try {
    return await build(node, contracts.TestToken);
  } catch (err) {
    await node.stop();
    throw err;
  }
}

async function build(node: EvmNode, token: CompiledContract): Promise<DepositChain> {
  const { publicClient } = node;
  const usdc = await node.deploy(token, ['USD Coin', 'USDC', DECIMALS, 10n ** 15n]);
  const other = await node.deploy(token, ['Other', 'OTHER', DECIMALS, 10n ** 15n]);
  const depositors = [node.accounts[1].address, node.accounts[2].address];
  const treasury = node.accounts[5].address;
  const chain: DepositChain = {
    node,
    usdc,
    other,
    treasury,
    depositors,
    async signTransfer({ token: contract = usdc, from, to = treasury, amount }) {
      const wallet = node.wallet(from);
      const request = await wallet.prepareTransactionRequest({
        to: contract,
        data: encodeFunctionData({ abi: token.abi, functionName: 'transfer', args: [to, amount] }),
        gas: 100_000n,
        // Generous fees: the same signed transaction must still be valid after a revert.
        maxFeePerGas: 100_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      });
      return wallet.signTransaction(request);
    },
    async send(raw) {
      const hash = await node.rpc<Hash>('eth_sendRawTransaction', [raw]);
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error(`transfer ${hash} reverted`);
      return { hash, blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash.toLowerCase() };
    },
    async transfer(options) {
      return chain.send(await chain.signTransfer(options));
    },
    mine: async (blocks) => {
      await node.rpc('hardhat_mine', [`0x${blocks.toString(16)}`]);
    },
    head: async () => Number(await publicClient.getBlockNumber({ cacheTime: 0 })),
    snapshot: () => node.rpc<string>('evm_snapshot'),
    async revert(id) {
      if (!(await node.rpc<boolean>('evm_revert', [id]))) throw new Error(`evm_revert ${id} failed`);
    },
    stop: () => node.stop(),
  };
  for (const depositor of depositors) {
    for (const contract of [usdc, other]) await chain.transfer({ token: contract, from: 0, to: depositor, amount: 1_000_000_000n });
  }
  return chain;
}
