import { z } from 'zod';
import { httpJson, HttpStatusError } from '../../kit/index.js';
import { finiteOrUndefined, PRICE_MAX_BYTES, type PriceQuote, type PriceSource } from './types.js';

export interface CoinCapOptions {
  /** Host only, e.g. https://api.coincap.io (v2) or https://rest.coincap.io (v3). */
  baseUrl: string;
  /** A CoinCap key selects the v3 API (which requires one), sent as a Bearer token. */
  apiKey?: string;
  timeoutMs: number;
}

// v2 and v3 answer in the same shape, numbers as strings (or null for unknown values).
const assetSchema = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  priceUsd: z.string().nullable(),
  changePercent24Hr: z.string().nullable().optional(),
  marketCapUsd: z.string().nullable().optional(),
});
const oneAssetSchema = z.object({ data: assetSchema, timestamp: z.number().optional() });
const assetListSchema = z.object({ data: z.array(assetSchema), timestamp: z.number().optional() });

/**
 * CoinCap `/v2/assets/{id}` (by id) and `/v2/assets?search=` (an unlisted ticker: the results
 * come in market-cap rank order, so the first exact ticker match is the largest); with a key the
 * same paths under `/v3`. USD only.
 *
 * @example
 *   await createCoinCapSource({ baseUrl: 'https://rest.coincap.io', apiKey, timeoutMs: 5000 })
 *     .run(signal, { target: { kind: 'asset', id: 'bitcoin', coincapId: 'bitcoin' }, currency: 'usd' })
 */
export function createCoinCapSource(options: CoinCapOptions): PriceSource {
  const api = `${options.baseUrl}/${options.apiKey ? 'v3' : 'v2'}`;
  const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  const get = (url: URL, signal: AbortSignal) =>
    httpJson(url, { headers, timeoutMs: options.timeoutMs, maxBytes: PRICE_MAX_BYTES, signal });
  return {
    name: 'CoinCap',
    unsupported({ target, currency }) {
      if (currency !== 'usd') return 'prices in USD only';
      if (target.kind === 'contract') return 'no lookup by contract';
      return undefined;
    },
    async run(signal, { target }) {
      if (target.kind === 'contract') return null;
      if (target.kind === 'asset') {
        let body: unknown;
        try {
          body = await get(new URL(`${api}/assets/${encodeURIComponent(target.coincapId)}`), signal);
        } catch (err) {
          // `{"error":"<id> not found","timestamp":…}` with 404.
          if (err instanceof HttpStatusError && err.status === 404) return null;
          throw err;
        }
        const { data, timestamp } = oneAssetSchema.parse(body);
        return toQuote(data, timestamp);
      }
      const url = new URL(`${api}/assets`);
      url.search = new URLSearchParams({ search: target.symbol, limit: '20' }).toString();
      const { data, timestamp } = assetListSchema.parse(await get(url, signal));
      const match = data.find((asset) => asset.symbol.toUpperCase() === target.symbol);
      return match ? toQuote(match, timestamp) : null;
    },
  };
}

function toQuote(asset: z.infer<typeof assetSchema>, timestamp: number | undefined): PriceQuote | null {
  const price = finiteOrUndefined(asset.priceUsd);
  if (price === undefined) return null;
  return {
    price,
    change24hPct: finiteOrUndefined(asset.changePercent24Hr),
    marketCap: finiteOrUndefined(asset.marketCapUsd),
    asOfMs: timestamp ?? Date.now(),
    symbol: asset.symbol,
    name: asset.name,
    assetId: asset.id,
  };
}
