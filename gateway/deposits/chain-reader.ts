/**
 * The deposit watcher's reads of one chain, over viem and the shared RPC transport (the chain's
 * URLs in order, the next one when a call fails: chains/rpc-transport.ts). Only read methods are
 * ever sent: eth_blockNumber, eth_getBlockByNumber, eth_getLogs (and eth_chainId once, to check
 * the RPC serves the chain the config names). Nothing here signs or sends a transaction.
 *
 * @example
 *   const reader = createChainReader({ chainId: 8453, rpcUrls: ['https://mainnet.base.org'], timeoutMs: 10_000 })
 *   const logs = await reader.transfersTo({ treasury, tokens, fromBlock: 100, toBlock: 199 })
 */
import { createPublicClient, parseAbiItem, type Address, type PublicClient } from 'viem';
import { createRpcTransport } from '../../chains/rpc-transport.js';
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
  const client: PublicClient = createPublicClient({ transport: createRpcTransport(options.rpcUrls, { timeoutMs: options.timeoutMs }) });
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

/** How providers word a cap on one eth_getLogs call (its block range, or the logs it may return). */
const RANGE_CAP =
  /block range|range (is )?too (large|wide|big)|max(imum)? (block )?range|range \d+ (exceeds|is bigger than) (the )?(range )?limit|limited to an? [\d,]+ (block )?range|more than \d+ (results|logs)|too many (results|logs|blocks)|query exceeds|response size/i;

/**
 * Not a range cap, whatever the code: a rate limit (Infura answers one with -32005 too: "project ID
 * request rate exceeded", "daily request count exceeded, request rate limited"), or a backend behind
 * the head ("block range extends beyond current head block": fewer blocks do not help, a later pass does).
 */
const NOT_A_RANGE_CAP = /rate limit|request rate|rate exceeded|request count exceeded|too many requests|beyond (the )?current head/i;

/**
 * Whether an eth_getLogs failure means "ask for fewer blocks": providers cap the range or the
 * result size, each in its own words and code (Infura -32602 "range 1000000 exceeds limit of
 * 10000" or -32005 "query returned more than 10000 results", QuickNode -32614 "eth_getLogs is
 * limited to a 10,000 range", Tenderly's in `data`, public BSC nodes a bare -32005 "limit
 * exceeded": EIP-1474's code for it). A rate limit is not a range cap, even under -32005.
 */
export function isRangeTooLarge(err: unknown): boolean {
  type Layer = { code?: unknown; message?: unknown; details?: unknown; data?: unknown; cause?: unknown };
  const layers: Layer[] = [];
  for (let e = err as Layer | undefined; e && layers.length < 10; e = e.cause as Layer | undefined) layers.push(e);
  const texts = layers.map((e) => `${String(e.message ?? '')} ${String(e.details ?? '')} ${dataText(e.data)}`);
  if (texts.some((text) => NOT_A_RANGE_CAP.test(text))) return false;
  return layers.some((e) => e.code === -32005) || texts.some((text) => RANGE_CAP.test(text));
}

/** An error's `data` as text (Tenderly puts its words there); never throws. */
function dataText(data: unknown): string {
  if (data === undefined) return '';
  try {
    return JSON.stringify(data) ?? '';
  } catch {
    return String(data);
  }
}
