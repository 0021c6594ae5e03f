/**
 * The deposit watcher's reads of one chain, through a ChainClient (chains/chain-client.ts) on the
 * deposits' policy: the fallback transport over the chain list's URLs (the next one when a call
 * fails) with `deposits.rpcTimeoutMs` per request. Only read methods are ever sent:
 * eth_blockNumber, eth_getBlockByNumber, eth_getLogs (and eth_chainId once, to check the RPC
 * serves the chain the config names). Nothing here signs or sends a transaction.
 *
 * @example
 *   const reader = createChainReader({ chainId: 8453, rpcUrls: ['https://mainnet.base.org'], timeoutMs: 10_000 })
 *   const logs = await reader.transfersTo({ treasury, tokens, fromBlock: 100, toBlock: 199 })
 */
import { parseAbiItem, type Address } from 'viem';
import { ChainClient } from '../../chains/chain-client.js';
import type { SeenDeposit } from './deposit-store.js';

// ERC-20 (EIP-20): `event Transfer(address indexed _from, address indexed _to, uint256 _value)`.
// Reads per the Ethereum JSON-RPC spec (ethereum/execution-apis): eth_getLogs with an address list
// and topics [Transfer, null, treasury]; eth_getBlockByNumber with a number or the `safe` /
// `finalized` tags (post-merge clients; L2 nodes map them to their L1-derived safe/final heads).
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export interface ChainReader {
  chainId(): Promise<number>;
  /** The latest block number, never from a cache. */
  head(): Promise<number>;
  /** The number of the block the node calls `finalized` or `safe`. */
  taggedHeight(tag: 'finalized' | 'safe'): Promise<number>;
  /** The canonical block hash at a height, lower case; undefined past the head. */
  blockHash(blockNumber: number): Promise<string | undefined>;
  /** ERC-20 Transfer logs of `tokens` to `treasury` in [fromBlock, toBlock], one eth_getLogs call. */
  transfersTo(query: { treasury: string; tokens: string[]; fromBlock: number; toBlock: number }): Promise<SeenDeposit[]>;
}

export function createChainReader(options: { chainId: number; rpcUrls: readonly string[]; timeoutMs: number }): ChainReader {
  const client = new ChainClient(options.rpcUrls, { timeoutMs: options.timeoutMs, retries: 'fallback' }).viem;
  return {
    chainId: () => client.getChainId(),
    head: async () => Number(await client.getBlockNumber({ cacheTime: 0 })),
    taggedHeight: async (tag) => Number((await client.getBlock({ blockTag: tag })).number),
    async blockHash(blockNumber) {
      try {
        return (await client.getBlock({ blockNumber: BigInt(blockNumber) })).hash.toLowerCase();
      } catch (err) {
        if ((err as Error).name === 'BlockNotFoundError') return undefined;
        throw err;
      }
    },
    async transfersTo({ treasury, tokens, fromBlock, toBlock }) {
      const logs = await client.getLogs({
        address: tokens as Address[],
        event: TRANSFER,
        args: { to: treasury as Address },
        fromBlock: BigInt(fromBlock),
        toBlock: BigInt(toBlock),
      });
      const seen: SeenDeposit[] = [];
      for (const log of logs) {
        // A log without a block is pending (never returned for a block range); a zero transfer pays nothing.
        if (log.blockHash === null || log.blockNumber === null || log.transactionHash === null || log.logIndex === null) continue;
        if (!log.args.from || !log.args.value) continue;
        seen.push({
          chainId: options.chainId,
          txHash: log.transactionHash.toLowerCase(),
          logIndex: log.logIndex,
          blockNumber: Number(log.blockNumber),
          blockHash: log.blockHash.toLowerCase(),
          token: log.address.toLowerCase(),
          wallet: log.args.from.toLowerCase(),
          amount: log.args.value,
        });
      }
      return seen;
    },
  };
}
