import { z } from 'zod';
import { envInt, envUrl, parseServerEnv, type ServerEnv } from '../kit/index.js';

/** Names of the price providers, in the default order they are asked. */
export const PRICE_PROVIDER_NAMES = ['coingecko', 'defillama', 'binance', 'coincap'] as const;
export type PriceProviderName = (typeof PRICE_PROVIDER_NAMES)[number];

/** Everything the utility server reads from its environment, parsed once in createUtilityServer. */
export interface UtilitySettings {
  coingeckoBaseUrl: string;
  /** Demo keys go in `x-cg-demo-api-key`; a key used against pro-api.coingecko.com in `x-cg-pro-api-key`. */
  coingeckoApiKey?: string;
  defillamaBaseUrl: string;
  binanceBaseUrl: string;
  /** Host only; the source appends `/v2` (keyless) or `/v3` (with a key). */
  coincapBaseUrl: string;
  /** Sent as a Bearer token; selects CoinCap's v3 API, which needs one. */
  coincapApiKey?: string;
  /** Per CoinCap request: short without a key, since the keyless v2 API may be gone (see below). */
  coincapTimeoutMs: number;
  openMeteoBaseUrl: string;
  openMeteoGeocodingBaseUrl: string;
  priceProviders: PriceProviderName[];
  /** Per outbound request. */
  timeoutMs: number;
  /** For get_crypto_price's whole chain of price providers. */
  priceDeadlineMs: number;
  /** How long a price answer is reused; capped at 30 s so prices stay live. */
  priceCacheTtlMs: number;
}

export const DEFAULT_BASE_URLS = {
  coingecko: 'https://api.coingecko.com',
  defillama: 'https://coins.llama.fi',
  binance: 'https://data-api.binance.vision',
  coincap: 'https://api.coincap.io',
  coincapV3: 'https://rest.coincap.io',
  openMeteo: 'https://api.open-meteo.com',
  openMeteoGeocoding: 'https://geocoding-api.open-meteo.com',
} as const;

const MAX_PRICE_CACHE_TTL_MS = 30_000;

// CoinCap's keyless v2 API has given way to v3, which needs a key, and may be gone. A full timeout
// spent waiting on it would only delay the failure listing, so keyless CoinCap gets at most this.
const KEYLESS_COINCAP_TIMEOUT_MS = 2_000;

export const utilityEnvSchema = z.object({
  COINGECKO_BASE_URL: envUrl()
    .default(DEFAULT_BASE_URLS.coingecko)
    .describe('CoinGecko base; with a paid key use `https://pro-api.coingecko.com`'),
  COINGECKO_API_KEY: z
    .string()
    .trim()
    .optional()
    .describe('CoinGecko key: sent as `x-cg-demo-api-key`, or `x-cg-pro-api-key` when the base is the pro host'),
  DEFILLAMA_BASE_URL: envUrl().default(DEFAULT_BASE_URLS.defillama).describe('DefiLlama prices base'),
  BINANCE_BASE_URL: envUrl().default(DEFAULT_BASE_URLS.binance).describe('Binance public market-data base (keyless mirror)'),
  // Its default depends on COINCAP_API_KEY, so it is resolved after parsing.
  COINCAP_BASE_URL: envUrl()
    .optional()
    .meta({
      description: 'CoinCap host (`/v2` or `/v3` is appended)',
      docDefault: `\`${DEFAULT_BASE_URLS.coincap}\`; with a key \`${DEFAULT_BASE_URLS.coincapV3}\``,
    }),
  COINCAP_API_KEY: z
    .string()
    .trim()
    .optional()
    .describe(
      'CoinCap key, sent as a Bearer token; selects the v3 API. Without it CoinCap is asked on keyless v2, which may be retired, ' +
        `with at most a ${KEYLESS_COINCAP_TIMEOUT_MS / 1000} s timeout`,
    ),
  OPEN_METEO_BASE_URL: envUrl().default(DEFAULT_BASE_URLS.openMeteo).describe('Open-Meteo forecast base'),
  OPEN_METEO_GEOCODING_BASE_URL: envUrl().default(DEFAULT_BASE_URLS.openMeteoGeocoding).describe('Open-Meteo geocoding base'),
  PRICE_PROVIDERS: z
    .string()
    .transform((value, ctx) => {
      const names = value
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean);
      const unknown = names.filter((name) => !(PRICE_PROVIDER_NAMES as readonly string[]).includes(name));
      if (unknown.length > 0 || names.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `PRICE_PROVIDERS: unknown provider "${unknown[0] ?? value}" (known: ${PRICE_PROVIDER_NAMES.join(', ')})`,
        });
        return z.NEVER;
      }
      return [...new Set(names)] as PriceProviderName[];
    })
    .default([...PRICE_PROVIDER_NAMES])
    .describe('Price providers and their order'),
  // Four providers in a row must still finish inside the gateway's per-call tool timeout.
  UTILITY_TIMEOUT_MS: envInt({ min: 50, max: 60_000 }).default(5_000).describe('Timeout of each provider request'),
  // The gateway gives a tool call 30 s: the chain must end (and list what each provider said) before.
  PRICE_FALLBACK_DEADLINE_MS: envInt({ min: 50, max: 120_000 })
    .default(20_000)
    .describe("Time for get_crypto_price's whole chain of price providers; keep it under the gateway's tool timeout (30 s)"),
  PRICE_CACHE_TTL_MS: envInt({ min: 0, max: MAX_PRICE_CACHE_TTL_MS })
    .default(MAX_PRICE_CACHE_TTL_MS)
    .describe(`How long a price is reused (0–${MAX_PRICE_CACHE_TTL_MS}; 0 = no cache, requests still coalesce)`),
});

/**
 * Read the utility server's settings from `env` (only main.ts passes process.env). Unset
 * variables fall back to the providers' real public endpoints. A bad value throws an Error
 * naming the variable, so the server refuses to start rather than misbehave later.
 *
 * @example
 *   readUtilitySettings({ COINGECKO_BASE_URL: 'http://127.0.0.1:4010', PRICE_PROVIDERS: 'coingecko,binance' })
 */
export function readUtilitySettings(env: ServerEnv): UtilitySettings {
  const e = parseServerEnv('utility', utilityEnvSchema, env);
  return {
    coingeckoBaseUrl: e.COINGECKO_BASE_URL,
    coingeckoApiKey: e.COINGECKO_API_KEY,
    defillamaBaseUrl: e.DEFILLAMA_BASE_URL,
    binanceBaseUrl: e.BINANCE_BASE_URL,
    coincapBaseUrl: e.COINCAP_BASE_URL ?? (e.COINCAP_API_KEY ? DEFAULT_BASE_URLS.coincapV3 : DEFAULT_BASE_URLS.coincap),
    coincapApiKey: e.COINCAP_API_KEY,
    coincapTimeoutMs: e.COINCAP_API_KEY ? e.UTILITY_TIMEOUT_MS : Math.min(e.UTILITY_TIMEOUT_MS, KEYLESS_COINCAP_TIMEOUT_MS),
    openMeteoBaseUrl: e.OPEN_METEO_BASE_URL,
    openMeteoGeocodingBaseUrl: e.OPEN_METEO_GEOCODING_BASE_URL,
    priceProviders: e.PRICE_PROVIDERS,
    timeoutMs: e.UTILITY_TIMEOUT_MS,
    priceDeadlineMs: e.PRICE_FALLBACK_DEADLINE_MS,
    priceCacheTtlMs: e.PRICE_CACHE_TTL_MS,
  };
}
