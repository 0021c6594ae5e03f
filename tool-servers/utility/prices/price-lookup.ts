import { firstAvailable, ToolError } from '../../kit/index.js';
import { createCoalescingCache } from './coalescing-cache.js';
import type { PriceQuote, PriceSource, PriceTarget } from './types.js';

export interface PricedQuote {
  provider: string;
  quote: PriceQuote;
}

export interface PriceLookup {
  /** The first provider's quote for `target` in `currency` (lower-case), cached and coalesced. */
  quote(target: PriceTarget, currency: string, signal: AbortSignal): Promise<PricedQuote>;
}

export interface PriceLookupOptions {
  /** Asked in this order. */
  sources: PriceSource[];
  cacheTtlMs: number;
  /**
   * Time for the whole chain of sources: each has its own timeout, but four in a row could
   * outlast the gateway's tool timeout, and the caller would then see a bare timeout instead of
   * what each source said.
   */
  deadlineMs?: number;
  now?: () => number;
}

/**
 * Ask price sources in order, skipping those that cannot price the target in the currency.
 * "Unknown asset" from every source that answered → `not_found`; any real failure among them →
 * `upstream_unavailable` listing what each source said.
 *
 * @example
 *   const prices = createPriceLookup({ sources: [coingecko, defillama, binance, coincap], cacheTtlMs: 30_000, deadlineMs: 20_000 })
 *   const { provider, quote } = await prices.quote({ kind: 'symbol', symbol: 'PEPE' }, 'usd', signal)
 */
export function createPriceLookup(options: PriceLookupOptions): PriceLookup {
  const cache = createCoalescingCache<PricedQuote>({ ttlMs: options.cacheTtlMs, now: options.now });

  const load = async (target: PriceTarget, currency: string): Promise<PricedQuote> => {
    const request = { target, currency };
    const what = describeTarget(target);
    const refusals = options.sources.map((source) => source.unsupported(request));
    if (refusals.every((reason) => reason !== undefined)) {
      const reasons = options.sources.map((source, i) => `${source.name}: ${refusals[i]}`).join('; ');
      throw new ToolError('not_found', `No configured price provider can price ${what} in ${currency.toUpperCase()} (${reasons}).`);
    }
    // Shared by every caller waiting on this key: bounded by each request's own timeout instead.
    const detached = new AbortController().signal;
    try {
      const isEmpty = (quote: PriceQuote | null) => quote === null;
      const deadlineMs = options.deadlineMs;
      const { provider, value } = await firstAvailable(options.sources, { signal: detached, request, isEmpty, deadlineMs });
      return { provider, quote: value as PriceQuote };
    } catch (err) {
      if (err instanceof ToolError && err.code === 'not_found') {
        throw new ToolError(
          'not_found',
          `Unknown asset: no price provider knows ${what}${hint(target)} (${err.message.replace(/^No results\. /, '')}).`,
        );
      }
      throw err;
    }
  };

  return {
    quote(target, currency, signal) {
      return cache.get(`${cacheKey(target)}|${currency}`, () => load(target, currency), signal);
    },
  };
}

function cacheKey(target: PriceTarget): string {
  if (target.kind === 'asset') return `id:${target.id}`;
  if (target.kind === 'symbol') return `symbol:${target.symbol}`;
  return `contract:${target.chain.name}:${target.address}`;
}

function describeTarget(target: PriceTarget): string {
  if (target.kind === 'asset') return `"${target.id}"`;
  if (target.kind === 'symbol') return `symbol "${target.symbol}"`;
  return `contract ${target.address} on ${target.chain.name}`;
}

function hint(target: PriceTarget): string {
  if (target.kind === 'symbol') return '; pass `id` (a CoinGecko id such as "bitcoin") or `contract` with `chain`';
  if (target.kind === 'asset') return '; `id` is a CoinGecko id such as "bitcoin"';
  return '';
}
