import type { Provider } from '../../kit/index.js';
import type { PriceChain } from '../asset-map.js';

/** What a price is asked for, after the tool's arguments are resolved. */
export type PriceTarget =
  /** A listed asset, or any CoinGecko id the caller passed. */
  | { kind: 'asset'; id: string; symbol?: string; name?: string; coincapId: string; binanceBase?: string }
  /** A ticker the asset map does not list: only providers that search by ticker can answer. */
  | { kind: 'symbol'; symbol: string }
  /** A token by contract address on an EVM chain (address lower-case). */
  | { kind: 'contract'; chain: PriceChain; address: string };

/** One provider's answer. Numbers keep the provider's own precision. */
export interface PriceQuote {
  price: number;
  change24hPct?: number;
  marketCap?: number;
  /** When the provider says the price was last updated (ms since epoch). */
  asOfMs: number;
  /** Facts the provider adds about the asset (e.g. DefiLlama's symbol for a contract). */
  symbol?: string;
  name?: string;
  assetId?: string;
  /** A caveat worth showing, e.g. "priced against USDT". */
  note?: string;
}

/** What a price source is asked: a target in a currency (lower-case). */
export interface PriceRequest {
  target: PriceTarget;
  currency: string;
}

/**
 * One price provider. `unsupported` says why it cannot price a target in a currency (it is then
 * skipped); `run` returns null when the provider does not know the asset, throws when it failed.
 */
export type PriceSource = Provider<PriceQuote | null, PriceRequest> & { unsupported(request: PriceRequest): string | undefined };

/** Shared by the providers: a number only when it is a finite number. */
export function finiteOrUndefined(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** Bytes a price response may take; real answers are a few hundred bytes. */
export const PRICE_MAX_BYTES = 256 * 1024;
