/**
 * What every on-chain tool shares: the chain list, one lazily built viem client per chain, the
 * read cache and its TTL rule. Tools receive it; nothing here runs at import time.
 */
import { createPublicClient, defineChain, type PublicClient } from 'viem';
import type { Logger } from '../kit/index.js';
import type { ChainConfig, ChainRegistry } from './chains.js';
import { ReadCache, IMMUTABLE_TTL_MS } from './read-cache.js';
import { createRpcTransport, type RpcTransportOptions } from './rpc-transport.js';
import { toToolError } from './rpc-errors.js';

export interface OnchainContext {
  chains: ChainRegistry;
  cache: ReadCache;
  logger?: Logger;
  /** The viem client of a chain, built on first use. */
  client(chain: ChainConfig): PublicClient;
  /** TTL for data that moves with each block: one block time, or less when configured. */
  movingTtlMs(chain: ChainConfig): number;
  immutableTtlMs: number;
  /**
   * Run an RPC read through the cache; failures become ToolErrors naming the chain.
   * `key` is prefixed with the chain id.
   */
  read<T>(chain: ChainConfig, key: string, ttlMs: number, load: (client: PublicClient) => Promise<T>): Promise<T>;
}

export interface OnchainContextOptions {
  chains: ChainRegistry;
  logger?: Logger;
  transport?: RpcTransportOptions;
  /** Upper bound for moving data's TTL (ms); `0` disables caching of moving data. */
  maxMovingTtlMs?: number;
}

/**
 * @example
 *   const ctx = createOnchainContext({ chains: loadChains(env) })
 *   const balance = await ctx.read(chain, `balance:${address}`, ctx.movingTtlMs(chain), (c) => c.getBalance({ address }))
 */
export function createOnchainContext(options: OnchainContextOptions): OnchainContext {
  const clients = new Map<string, PublicClient>();
  const cache = new ReadCache();
  const context: OnchainContext = {
    chains: options.chains,
    cache,
    logger: options.logger,
    immutableTtlMs: IMMUTABLE_TTL_MS,
    client(chain) {
      let client = clients.get(chain.key);
      if (!client) {
        client = createPublicClient({ chain: toViemChain(chain), transport: createRpcTransport(chain.rpcUrls, options.transport) });
        clients.set(chain.key, client);
      }
      return client;
    },
    movingTtlMs(chain) {
      return Math.min(chain.blockTimeMs, options.maxMovingTtlMs ?? Number.POSITIVE_INFINITY);
    },
    async read(chain, key, ttlMs, load) {
      try {
        return await cache.get(`${chain.id}:${key}`, ttlMs, () => load(context.client(chain)));
      } catch (err) {
        throw toToolError(err, chain);
      }
    },
  };
  return context;
}

function toViemChain(chain: ChainConfig) {
  return defineChain({
    id: chain.id,
    name: chain.name,
    nativeCurrency: { name: chain.nativeSymbol, symbol: chain.nativeSymbol, decimals: 18 },
    rpcUrls: { default: { http: chain.rpcUrls } },
    contracts: {
      ...(chain.multicall3 ? { multicall3: { address: chain.multicall3 } } : {}),
      ...(chain.ens ? { ensUniversalResolver: { address: chain.ens.universalResolver } } : {}),
    },
  });
}
