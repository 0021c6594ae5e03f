/**
 * The assets people ask about most, keyed by ticker, with each provider's own name for them.
 * CoinGecko ids are the canonical `asset_id`. A ticker shared by several assets lists them all;
 * `rank` (market-cap order, lower is larger) makes the pick deterministic.
 */
export interface KnownAsset {
  /** CoinGecko id, also used by DefiLlama as `coingecko:<id>`. */
  id: string;
  symbol: string;
  name: string;
  /** Market-cap rank at the time the table was written; only the order among one ticker matters. */
  rank: number;
  /** CoinCap v2 id when it differs from the CoinGecko id. */
  coincapId?: string;
  /** Binance base asset of the `<BASE>USDT` pair; absent when there is no such pair. */
  binanceBase?: string;
}

const KNOWN_ASSETS: readonly KnownAsset[] = [
  { id: 'bitcoin', symbol: 'BTC', name: 'Bitcoin', rank: 1, binanceBase: 'BTC' },
  { id: 'ethereum', symbol: 'ETH', name: 'Ethereum', rank: 2, binanceBase: 'ETH' },
  { id: 'tether', symbol: 'USDT', name: 'Tether', rank: 3 },
  { id: 'ripple', symbol: 'XRP', name: 'XRP', rank: 4, coincapId: 'xrp', binanceBase: 'XRP' },
  { id: 'binancecoin', symbol: 'BNB', name: 'BNB', rank: 5, coincapId: 'binance-coin', binanceBase: 'BNB' },
  { id: 'solana', symbol: 'SOL', name: 'Solana', rank: 6, binanceBase: 'SOL' },
  { id: 'usd-coin', symbol: 'USDC', name: 'USDC', rank: 7, binanceBase: 'USDC' },
  { id: 'dogecoin', symbol: 'DOGE', name: 'Dogecoin', rank: 8, binanceBase: 'DOGE' },
  { id: 'tron', symbol: 'TRX', name: 'TRON', rank: 9, binanceBase: 'TRX' },
  { id: 'cardano', symbol: 'ADA', name: 'Cardano', rank: 10, binanceBase: 'ADA' },
  { id: 'chainlink', symbol: 'LINK', name: 'Chainlink', rank: 12, binanceBase: 'LINK' },
  { id: 'avalanche-2', symbol: 'AVAX', name: 'Avalanche', rank: 14, coincapId: 'avalanche', binanceBase: 'AVAX' },
  { id: 'stellar', symbol: 'XLM', name: 'Stellar', rank: 15, binanceBase: 'XLM' },
  { id: 'wrapped-bitcoin', symbol: 'WBTC', name: 'Wrapped Bitcoin', rank: 16, binanceBase: 'WBTC' },
  { id: 'the-open-network', symbol: 'TON', name: 'Toncoin', rank: 18, coincapId: 'toncoin', binanceBase: 'TON' },
  { id: 'shiba-inu', symbol: 'SHIB', name: 'Shiba Inu', rank: 19, binanceBase: 'SHIB' },
  { id: 'litecoin', symbol: 'LTC', name: 'Litecoin', rank: 20, binanceBase: 'LTC' },
  { id: 'polkadot', symbol: 'DOT', name: 'Polkadot', rank: 22, binanceBase: 'DOT' },
  { id: 'dai', symbol: 'DAI', name: 'Dai', rank: 24, coincapId: 'multi-collateral-dai' },
  { id: 'uniswap', symbol: 'UNI', name: 'Uniswap', rank: 26, binanceBase: 'UNI' },
  { id: 'near', symbol: 'NEAR', name: 'NEAR Protocol', rank: 30, coincapId: 'near-protocol', binanceBase: 'NEAR' },
  { id: 'aave', symbol: 'AAVE', name: 'Aave', rank: 32, binanceBase: 'AAVE' },
  { id: 'arbitrum', symbol: 'ARB', name: 'Arbitrum', rank: 50, binanceBase: 'ARB' },
  { id: 'optimism', symbol: 'OP', name: 'Optimism', rank: 60, binanceBase: 'OP' },
  // Tokamak Network also trades as TON; far smaller than Toncoin, so "TON" means Toncoin.
  { id: 'tokamak-network', symbol: 'TON', name: 'Tokamak Network', rank: 700 },
];

export interface SymbolMatch {
  asset: KnownAsset;
  /** Other assets sharing the ticker, largest first; empty when the ticker is unambiguous. */
  alsoKnownAs: KnownAsset[];
}

/**
 * The asset a ticker means: the largest by market cap among known assets with that ticker.
 *
 * @example
 *   resolveSymbol('ton') // { asset: { id: 'the-open-network', … }, alsoKnownAs: [{ id: 'tokamak-network', … }] }
 */
export function resolveSymbol(symbol: string): SymbolMatch | undefined {
  const wanted = symbol.trim().toUpperCase();
  const matches = KNOWN_ASSETS.filter((asset) => asset.symbol === wanted).sort((a, b) => a.rank - b.rank);
  if (matches.length === 0) return undefined;
  return { asset: matches[0], alsoKnownAs: matches.slice(1) };
}

/**
 * A known asset by its CoinGecko id, or undefined.
 *
 * @example
 *   findAssetById('binancecoin')?.coincapId // 'binance-coin'
 */
export function findAssetById(id: string): KnownAsset | undefined {
  const wanted = id.trim().toLowerCase();
  return KNOWN_ASSETS.find((asset) => asset.id === wanted);
}

/** One EVM chain as the contract-price providers name it. */
export interface PriceChain {
  name: string;
  /** CoinGecko asset platform id for `/simple/token_price/{platform}`. */
  coingeckoPlatform: string;
  /** DefiLlama chain prefix for `{chain}:{address}`. */
  defillamaChain: string;
}

const CHAINS: readonly (PriceChain & { aliases: string[] })[] = [
  { name: 'ethereum', coingeckoPlatform: 'ethereum', defillamaChain: 'ethereum', aliases: ['eth', 'mainnet'] },
  { name: 'base', coingeckoPlatform: 'base', defillamaChain: 'base', aliases: [] },
  { name: 'arbitrum', coingeckoPlatform: 'arbitrum-one', defillamaChain: 'arbitrum', aliases: ['arbitrum-one', 'arb'] },
  { name: 'optimism', coingeckoPlatform: 'optimistic-ethereum', defillamaChain: 'optimism', aliases: ['op'] },
  { name: 'polygon', coingeckoPlatform: 'polygon-pos', defillamaChain: 'polygon', aliases: ['matic', 'polygon-pos'] },
  { name: 'bsc', coingeckoPlatform: 'binance-smart-chain', defillamaChain: 'bsc', aliases: ['bnb', 'binance-smart-chain'] },
  { name: 'avalanche', coingeckoPlatform: 'avalanche', defillamaChain: 'avax', aliases: ['avax'] },
];

/** Chain names accepted by `get_crypto_price` with `contract`. */
export const PRICE_CHAIN_NAMES = CHAINS.map((chain) => chain.name);

/**
 * A chain by name or common alias (case-insensitive), or undefined.
 *
 * @example
 *   findPriceChain('Arbitrum-One')?.defillamaChain // 'arbitrum'
 */
export function findPriceChain(name: string): PriceChain | undefined {
  const wanted = name.trim().toLowerCase();
  const chain = CHAINS.find((c) => c.name === wanted || c.aliases.includes(wanted));
  return chain ? { name: chain.name, coingeckoPlatform: chain.coingeckoPlatform, defillamaChain: chain.defillamaChain } : undefined;
}
