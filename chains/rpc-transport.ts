/**
 * The viem transport for one chain: JSON-RPC batching over HTTP with a timeout per request, and
 * `fallback` across the chain's URLs (optionally ranked by latency and stability).
 */
import { fallback, http, type HttpTransportConfig, type Transport } from 'viem';

export interface RpcTransportOptions {
  /** Per-request timeout; a slower RPC counts as failed and the next one is tried. */
  timeoutMs?: number;
  /**
   * Re-rank the URLs in the background: a `net_listening` ping to each one every minute, forever,
   * once the chain is used. Off by default because the shipped URLs are public, rate-limited RPCs.
   */
  rank?: boolean;
  /** Seen on every HTTP request and answer of every URL (chain-client.ts counts them for a caller). */
  hooks?: FetchHooks;
}

/** viem's hooks around each HTTP request of a transport. */
export type FetchHooks = Pick<HttpTransportConfig, 'onFetchRequest' | 'onFetchResponse'>;

export const DEFAULT_RPC_TIMEOUT_MS = 4_000;

/** How often ranking pings each URL when `rank` is on. */
export const RANK_INTERVAL_MS = 60_000;

/**
 * @example
 *   const transport = createRpcTransport(['https://a.example', 'https://b.example'], { timeoutMs: 4000 })
 *   const client = createPublicClient({ transport })
 */
export function createRpcTransport(urls: readonly string[], options: RpcTransportOptions = {}): Transport {
  const timeout = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  // A lone URL gets one retry (a blip); with several, trying the next URL is the retry, so the
  // worst case stays URLs × timeout instead of doubling.
  const hooks = options.hooks ?? {};
  if (urls.length === 1) return http(urls[0], { batch: { wait: 0 }, timeout, retryCount: 1, retryDelay: 100, ...hooks });
  return fallback(
    urls.map((url) => http(url, { batch: { wait: 0 }, timeout, retryCount: 0, ...hooks })),
    {
      rank: options.rank ? { interval: RANK_INTERVAL_MS, timeout: Math.min(timeout, 2_000) } : false,
      retryCount: 0,
    },
  );
}
