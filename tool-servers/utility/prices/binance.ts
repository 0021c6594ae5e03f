import { z } from 'zod';
import { httpJson, HttpStatusError } from '../../kit/index.js';
import { PRICE_MAX_BYTES, type PriceSource, type PriceTarget } from './types.js';

export interface BinanceOptions {
  baseUrl: string;
  timeoutMs: number;
}

// `/api/v3/ticker/24hr?symbol=BTCUSDT`: prices are decimal strings.
const ticker24hSchema = z.object({
  symbol: z.string(),
  lastPrice: z.string(),
  priceChangePercent: z.string().optional(),
  closeTime: z.number().optional(),
});
const binanceErrorSchema = z.object({ code: z.number(), msg: z.string() });
const INVALID_SYMBOL = -1121;

/**
 * Binance public market data (`/api/v3/ticker/24hr`, keyless on data-api.binance.vision): the
 * `<SYMBOL>USDT` pair, so only for usd or usdt. One call gives the last price and the 24 h change.
 *
 * @example
 *   await createBinanceSource({ baseUrl: 'https://data-api.binance.vision', timeoutMs: 5000 })
 *     .run(signal, { target: { kind: 'symbol', symbol: 'PEPE' }, currency: 'usd' })
 */
export function createBinanceSource(options: BinanceOptions): PriceSource {
  return {
    name: 'Binance',
    unsupported({ target, currency }) {
      if (currency !== 'usd' && currency !== 'usdt') return 'USDT pairs only (usd or usdt)';
      if (target.kind === 'contract') return 'no lookup by contract';
      if (pairBase(target) === undefined) return 'no USDT pair for this asset';
      return undefined;
    },
    async run(signal, { target, currency }) {
      const base = pairBase(target);
      if (base === undefined) return null;
      const url = new URL(`${options.baseUrl}/api/v3/ticker/24hr`);
      url.searchParams.set('symbol', `${base}USDT`);
      let body: unknown;
      try {
        body = await httpJson(url, { timeoutMs: options.timeoutMs, maxBytes: PRICE_MAX_BYTES, signal });
      } catch (err) {
        if (err instanceof HttpStatusError && err.status === 400 && isInvalidSymbol(err.body)) return null;
        throw err;
      }
      const ticker = ticker24hSchema.parse(body);
      const price = Number(ticker.lastPrice);
      if (!Number.isFinite(price)) throw new SyntaxError('lastPrice is not a number');
      const change = ticker.priceChangePercent !== undefined ? Number(ticker.priceChangePercent) : Number.NaN;
      return {
        price,
        change24hPct: Number.isFinite(change) ? change : undefined,
        asOfMs: ticker.closeTime ?? Date.now(),
        symbol: base,
        note: currency === 'usd' ? `Binance ${ticker.symbol} pair: priced in USDT, which tracks USD closely.` : undefined,
      };
    },
  };
}

function pairBase(target: PriceTarget): string | undefined {
  if (target.kind === 'symbol') return /^[A-Z0-9]{2,15}$/.test(target.symbol) && target.symbol !== 'USDT' ? target.symbol : undefined;
  if (target.kind === 'asset') return target.binanceBase;
  return undefined;
}

function isInvalidSymbol(body: string): boolean {
  try {
    const parsed = binanceErrorSchema.safeParse(JSON.parse(body));
    return parsed.success && parsed.data.code === INVALID_SYMBOL;
  } catch {
    return false;
  }
}
