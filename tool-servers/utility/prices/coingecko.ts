import { z } from 'zod';
import { httpJson, HttpStatusError } from '../../kit/index.js';
import { finiteOrUndefined, PRICE_MAX_BYTES, type PriceQuote, type PriceSource, type PriceTarget } from './types.js';

export interface CoinGeckoOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
}

// `{ "<id or address>": { "usd": 1.2, "usd_24h_change": 3.4, "usd_market_cap": 5, "last_updated_at": 1711356300 } }`.
// Inner values stay unknown so a field CoinGecko adds later cannot break parsing; we read numbers only.
const simplePriceSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * CoinGecko `/api/v3/simple/price` (by id) and `/simple/token_price/{platform}` (by contract),
 * in any vs-currency CoinGecko knows. A key from `COINGECKO_API_KEY` goes in the demo header, or
 * in the pro header when the base URL is the pro host (`https://pro-api.coingecko.com`).
 *
 * @example
 *   const source = createCoinGeckoSource({ baseUrl: 'https://api.coingecko.com', timeoutMs: 5000 })
 *   await source.run(signal, { target: { kind: 'asset', id: 'bitcoin', coincapId: 'bitcoin' }, currency: 'usd' })
 */
export function createCoinGeckoSource(options: CoinGeckoOptions): PriceSource {
  const headers: Record<string, string> = {};
  if (options.apiKey) {
    const isPro = new URL(options.baseUrl).hostname.startsWith('pro-api.');
    headers[isPro ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'] = options.apiKey;
  }
  return {
    name: 'CoinGecko',
    unsupported({ target }) {
      return target.kind === 'symbol' ? 'needs a CoinGecko id for an unlisted symbol' : undefined;
    },
    async run(signal, { target, currency }) {
      if (target.kind === 'symbol') return null;
      const { url, key } = requestFor(options.baseUrl, target, currency);
      let body: unknown;
      try {
        body = await httpJson(url, { headers, timeoutMs: options.timeoutMs, maxBytes: PRICE_MAX_BYTES, signal });
      } catch (err) {
        // An unknown platform answers 404: the asset is unknown, not the provider broken.
        if (err instanceof HttpStatusError && err.status === 404) return null;
        throw err;
      }
      const entries = simplePriceSchema.parse(body);
      const entry = Object.entries(entries).find(([k]) => k.toLowerCase() === key)?.[1];
      const price = finiteOrUndefined(entry?.[currency]);
      if (!entry || price === undefined) return null;
      const updatedAt = finiteOrUndefined(entry.last_updated_at);
      const quote: PriceQuote = {
        price,
        change24hPct: finiteOrUndefined(entry[`${currency}_24h_change`]),
        marketCap: finiteOrUndefined(entry[`${currency}_market_cap`]),
        asOfMs: updatedAt !== undefined ? updatedAt * 1000 : Date.now(),
      };
      return quote;
    },
  };
}

function requestFor(baseUrl: string, target: Exclude<PriceTarget, { kind: 'symbol' }>, currency: string): { url: URL; key: string } {
  const extras = { vs_currencies: currency, include_24hr_change: 'true', include_market_cap: 'true', include_last_updated_at: 'true' };
  if (target.kind === 'asset') {
    const url = new URL(`${baseUrl}/api/v3/simple/price`);
    url.search = new URLSearchParams({ ids: target.id, ...extras }).toString();
    return { url, key: target.id };
  }
  const url = new URL(`${baseUrl}/api/v3/simple/token_price/${encodeURIComponent(target.chain.coingeckoPlatform)}`);
  url.search = new URLSearchParams({ contract_addresses: target.address, ...extras }).toString();
  return { url, key: target.address };
}
