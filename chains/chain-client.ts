/**
 * The one way the gateway reads a chain: a viem public client over the chain's RPC URLs with its
 * caller's policy, built by the composition root (gateway/server.ts) and handed to whoever reads.
 * The policy is the caller's and stays with it: how long one request may take, and what a failed
 * one gets — the chain's next URL (the fallback transport, rpc-transport.ts: the deposit watcher
 * reads a chain list) or a number of retries of its one URL (x402: one; SIWE: none). No client is
 * kept in module state: each belongs to the part it was handed to. Reads only: nothing here signs.
 * Paging eth_getLogs is page-range.ts, owned by whoever pages.
 *
 * @example
 *   const chain = new ChainClient(['https://mainnet.base.org'], { timeoutMs: 10_000, retries: 1 })
 *   const head = await chain.viem.getBlockNumber()
 *   let asked = 0
 *   const valid = await chain.observed({ onFetchRequest: () => void asked++ }).verifyMessage({ address, message, signature })
 */
import { createPublicClient, http, type PublicClient, type Transport } from 'viem';
import { createRpcTransport, type FetchHooks } from './rpc-transport.js';

export interface ReadPolicy {
  /** Per request: a slower answer counts as failed. */
  timeoutMs: number;
  /**
   * What a failed request gets: that many more tries of the one URL, or `'fallback'`: the chain's
   * next URL (rpc-transport.ts, with JSON-RPC batching; a lone URL gets one retry).
   */
  retries: number | 'fallback';
}

export class ChainClient {
  /** The client every read goes through. */
  readonly viem: PublicClient;

  constructor(
    readonly rpcUrls: readonly string[],
    private readonly policy: ReadPolicy,
  ) {
    if (rpcUrls.length === 0) throw new Error('A chain client needs an RPC URL.');
    if (policy.retries !== 'fallback' && rpcUrls.length > 1) {
      throw new Error('Retries of one URL are a policy for one URL: several URLs read through the fallback.');
    }
    this.viem = createPublicClient({ transport: this.transport() });
  }

  /**
   * A client of its own, on the same policy, whose HTTP requests and answers `hooks` see. viem
   * turns some failures into an answer (verifyMessage reads a failed eth_call as `false`):
   * counting tells a chain that said no from one that did not answer. One per check keeps the
   * counts of concurrent checks apart.
   */
  observed(hooks: FetchHooks): PublicClient {
    return createPublicClient({ transport: this.transport(hooks) });
  }

  private transport(hooks?: FetchHooks): Transport {
    const { timeoutMs, retries } = this.policy;
    if (retries === 'fallback') return createRpcTransport(this.rpcUrls, { timeoutMs, hooks });
    return http(this.rpcUrls[0], { timeout: timeoutMs, retryCount: retries, ...hooks });
  }
}
