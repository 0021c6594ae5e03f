/**
 * The viem transport for one chain: JSON-RPC batching over HTTP with a timeout per call, and
 * `fallback` across the chain's URLs (ranked by latency and stability when there are several).
 */
import { fallback, http, type Transport } from 'viem';

export interface RpcTransportOptions {
  /** Per-request timeout; a slower RPC counts as failed and the next one is tried. */
  timeoutMs?: number;
  /** Re-rank the URLs in the background (a ping every few seconds). Off in short-lived tests. */
  rank?: boolean;
  /** Retries of the whole fallback chain after every URL failed once. */
  retryCount?: number;
}

export const DEFAULT_RPC_TIMEOUT_MS = 8_000;

/**
 * @example
 *   const transport = createRpcTransport(['https://a.example', 'https://b.example'], { timeoutMs: 5000 })
 *   const client = createPublicClient({ transport })
 */
export function createRpcTransport(urls: readonly string[], options: RpcTransportOptions = {}): Transport {
  const timeout = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  const retryCount = options.retryCount ?? 1;
  const one = (url: string) => http(url, { batch: { wait: 0 }, timeout, retryCount: 0 });
  if (urls.length === 1) return http(urls[0], { batch: { wait: 0 }, timeout, retryCount, retryDelay: 100 });
  return fallback(urls.map(one), {
    rank: options.rank === false ? false : { interval: 30_000, timeout: Math.min(timeout, 2_000) },
    retryCount,
    retryDelay: 100,
  });
}
