import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { PRICE_MAX_BYTES, type PriceSource } from './types.js';

export interface DefiLlamaOptions {
  baseUrl: string;
  timeoutMs: number;
}

// `{ "coins": { "coingecko:ethereum": { "price", "symbol", "timestamp", "confidence", "decimals"? } } }`; unknown ids are left out.
const currentPricesSchema = z.object({
  coins: z.record(
    z.string(),
    z.object({ price: z.number(), symbol: z.string().optional(), timestamp: z.number().optional(), confidence: z.number().optional() }),
  ),
});

/**
 * DefiLlama `/prices/current/{coins}`: USD only, keyless, by CoinGecko id or `{chain}:{address}`.
 * It has no 24 h change or market cap.
 *
 * @example
 *   await createDefiLlamaSource({ baseUrl: 'https://coins.llama.fi', timeoutMs: 5000 })
 *     .run(signal, { target: { kind: 'asset', id: 'ethereum', coincapId: 'ethereum' }, currency: 'usd' })
 */
export function createDefiLlamaSource(options: DefiLlamaOptions): PriceSource {
  return {
    name: 'DefiLlama',
    unsupported({ target, currency }) {
      if (currency !== 'usd') return 'prices in USD only';
      if (target.kind === 'symbol') return 'needs a CoinGecko id for an unlisted symbol';
      return undefined;
    },
    async run(signal, { target }) {
      if (target.kind === 'symbol') return null;
      const coin = target.kind === 'asset' ? `coingecko:${target.id}` : `${target.chain.defillamaChain}:${target.address}`;
      // DefiLlama wants the colon literal: encode each side, not the whole coin.
      const url = `${options.baseUrl}/prices/current/${coin.split(':').map(encodeURIComponent).join(':')}`;
      const body = currentPricesSchema.parse(await httpJson(url, { timeoutMs: options.timeoutMs, maxBytes: PRICE_MAX_BYTES, signal }));
      // Contract keys may come back checksummed: match without case.
      const entry = Object.entries(body.coins).find(([key]) => key.toLowerCase() === coin.toLowerCase())?.[1];
      if (!entry || !Number.isFinite(entry.price)) return null;
      return {
        price: entry.price,
        asOfMs: entry.timestamp !== undefined ? entry.timestamp * 1000 : Date.now(),
        symbol: entry.symbol,
      };
    },
  };
}
