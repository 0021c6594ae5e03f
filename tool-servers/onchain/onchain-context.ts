/**
 * What every on-chain tool shares: the chain list, one lazily built viem client per chain, the
 * read cache and its TTL rule, and the RPC deadline of a tool call. Tools receive it; nothing here
 * runs at import time.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createPublicClient, defineChain, type PublicClient } from 'viem';
import { ToolError, type Logger } from '../kit/index.js';
import type { ChainConfig, ChainRegistry } from './chains.js';
import { ReadCache, IMMUTABLE_TTL_MS } from './read-cache.js';
import { createRpcTransport, type RpcTransportOptions } from '../../chains/rpc-transport.js';
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
   * `key` is prefixed with the chain id. Gives up with `upstream_unavailable` when the deadline of
   * the surrounding `withinDeadline` call (or, outside one, of this read alone) passes.
   */
  read<T>(chain: ChainConfig, key: string, ttlMs: number, load: (client: PublicClient) => Promise<T>): Promise<T>;
  /** Run one tool call: all its reads together get `deadlineMs`. */
  withinDeadline<T>(work: () => Promise<T>): Promise<T>;
}

export interface OnchainContextOptions {
  chains: ChainRegistry;
  logger?: Logger;
  transport?: RpcTransportOptions;
  /** Upper bound for moving data's TTL (ms); `0` disables caching of moving data. */
  maxMovingTtlMs?: number;
  /** Total RPC time of one tool call (default DEFAULT_RPC_DEADLINE_MS). */
  deadlineMs?: number;
}

/**
 * Below the gateway's 30 s tool timeout, so a hanging RPC is a 502 naming the chain rather than a
 * 504 that names nothing.
 */
export const DEFAULT_RPC_DEADLINE_MS = 20_000;

/**
 * @example
 *   const ctx = createOnchainContext({ chains: loadChains(env) })
 *   const balance = await ctx.read(chain, `balance:${address}`, ctx.movingTtlMs(chain), (c) => c.getBalance({ address }))
 */
export function createOnchainContext(options: OnchainContextOptions): OnchainContext {
  const clients = new Map<string, PublicClient>();
  const cache = new ReadCache();
  const deadlineMs = options.deadlineMs ?? DEFAULT_RPC_DEADLINE_MS;
  // A tool may chain reads (ENS name, then balance; transaction, then receipt), each of which can
  // walk every URL of a chain: the budget belongs to the call, so the reads find it here.
  const callDeadline = new AsyncLocalStorage<number>();
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
      const deadline = callDeadline.getStore() ?? Date.now() + deadlineMs;
      const expired = () => new ToolError('upstream_unavailable', `RPC unavailable for ${chain.name}: no answer within ${deadlineMs} ms.`);
      try {
        return await beforeDeadline(
          cache.get(`${chain.id}:${key}`, ttlMs, () => load(context.client(chain))),
          deadline,
          expired,
        );
      } catch (err) {
        throw toToolError(err, chain);
      }
    },
    withinDeadline(work) {
      return callDeadline.run(Date.now() + deadlineMs, work);
    },
  };
  return context;
}

/**
 * `work`, or `expired()` once `deadline` passes. The RPC request itself runs on to its own timeout
 * (viem takes no signal per request); a later caller may still share its answer.
 */
async function beforeDeadline<T>(work: Promise<T>, deadline: number, expired: () => ToolError): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(expired()), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
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
