import { z } from 'zod';

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
  coincapBaseUrl: string;
  openMeteoBaseUrl: string;
  openMeteoGeocodingBaseUrl: string;
  priceProviders: PriceProviderName[];
  /** Per outbound request. */
  timeoutMs: number;
  /** How long a price answer is reused; capped at 30 s so prices stay live. */
  priceCacheTtlMs: number;
}

export const DEFAULT_BASE_URLS = {
  coingecko: 'https://api.coingecko.com',
  defillama: 'https://coins.llama.fi',
  binance: 'https://data-api.binance.vision',
  coincap: 'https://api.coincap.io',
  openMeteo: 'https://api.open-meteo.com',
  openMeteoGeocoding: 'https://geocoding-api.open-meteo.com',
} as const;

const MAX_PRICE_CACHE_TTL_MS = 30_000;

const baseUrl = (name: string, fallback: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value) => (value ? value : fallback))
    .pipe(z.url({ protocol: /^https?$/, error: `${name} must be an http(s) URL` }))
    // Paths are appended to the base, so a trailing slash would double up.
    .transform((value) => value.replace(/\/+$/, ''));

const wholeNumber = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .trim()
    .optional()
    .transform((value, ctx) => {
      if (!value) return fallback;
      const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      if (!(parsed >= min && parsed <= max)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a whole number from ${min} to ${max}, got "${value}"` });
        return z.NEVER;
      }
      return parsed;
    });

const envSchema = z.object({
  COINGECKO_BASE_URL: baseUrl('COINGECKO_BASE_URL', DEFAULT_BASE_URLS.coingecko),
  COINGECKO_API_KEY: z.string().trim().optional().transform((value) => value || undefined),
  DEFILLAMA_BASE_URL: baseUrl('DEFILLAMA_BASE_URL', DEFAULT_BASE_URLS.defillama),
  BINANCE_BASE_URL: baseUrl('BINANCE_BASE_URL', DEFAULT_BASE_URLS.binance),
  COINCAP_BASE_URL: baseUrl('COINCAP_BASE_URL', DEFAULT_BASE_URLS.coincap),
  OPEN_METEO_BASE_URL: baseUrl('OPEN_METEO_BASE_URL', DEFAULT_BASE_URLS.openMeteo),
  OPEN_METEO_GEOCODING_BASE_URL: baseUrl('OPEN_METEO_GEOCODING_BASE_URL', DEFAULT_BASE_URLS.openMeteoGeocoding),
  PRICE_PROVIDERS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (!value?.trim()) return [...PRICE_PROVIDER_NAMES];
      const names = value.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
      const unknown = names.filter((name) => !(PRICE_PROVIDER_NAMES as readonly string[]).includes(name));
      if (unknown.length > 0 || names.length === 0) {
        ctx.addIssue({ code: 'custom', message: `PRICE_PROVIDERS: unknown provider "${unknown[0] ?? value}" (known: ${PRICE_PROVIDER_NAMES.join(', ')})` });
        return z.NEVER;
      }
      return [...new Set(names)] as PriceProviderName[];
    }),
  // Four providers in a row must still finish inside the gateway's per-call tool timeout.
  UTILITY_TIMEOUT_MS: wholeNumber('UTILITY_TIMEOUT_MS', 5_000, 50, 60_000),
  PRICE_CACHE_TTL_MS: wholeNumber('PRICE_CACHE_TTL_MS', MAX_PRICE_CACHE_TTL_MS, 0, MAX_PRICE_CACHE_TTL_MS),
});

/**
 * Read the utility server's settings from `env` (only main.ts passes process.env). Unset
 * variables fall back to the providers' real public endpoints. A bad value throws an Error
 * naming the variable, so the server refuses to start rather than misbehave later.
 *
 * @example
 *   readUtilitySettings({ COINGECKO_BASE_URL: 'http://127.0.0.1:4010', PRICE_PROVIDERS: 'coingecko,binance' })
 */
export function readUtilitySettings(env: Record<string, string | undefined>): UtilitySettings {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`utility: ${issue.message}`);
  }
  const e = parsed.data;
  return {
    coingeckoBaseUrl: e.COINGECKO_BASE_URL,
    coingeckoApiKey: e.COINGECKO_API_KEY,
    defillamaBaseUrl: e.DEFILLAMA_BASE_URL,
    binanceBaseUrl: e.BINANCE_BASE_URL,
    coincapBaseUrl: e.COINCAP_BASE_URL,
    openMeteoBaseUrl: e.OPEN_METEO_BASE_URL,
    openMeteoGeocodingBaseUrl: e.OPEN_METEO_GEOCODING_BASE_URL,
    priceProviders: e.PRICE_PROVIDERS,
    timeoutMs: e.UTILITY_TIMEOUT_MS,
    priceCacheTtlMs: e.PRICE_CACHE_TTL_MS,
  };
}
