import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';
import { readUtilitySettings, type PriceProviderName, type UtilitySettings } from './settings.js';
import { createPriceLookup } from './prices/price-lookup.js';
import { createCoinGeckoSource } from './prices/coingecko.js';
import { createDefiLlamaSource } from './prices/defillama.js';
import { createBinanceSource } from './prices/binance.js';
import { createCoinCapSource } from './prices/coincap.js';
import type { PriceSource } from './prices/types.js';
import { getCryptoPriceTool } from './tools/get-crypto-price.js';
import { getWeatherTool } from './tools/get-weather.js';
import { getTimeTool } from './tools/get-time.js';

export interface UtilityServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
  /** The clock (ms since epoch) for get_time and the price cache; tests pass a fixed one. */
  now?: () => number;
}

/**
 * The `utility` tool server: get_crypto_price, get_weather, get_time. Reads its provider base
 * URLs, key and provider order from `env` (see settings.ts); throws on a bad value.
 *
 * @example
 *   const server = createUtilityServer({ env: { COINGECKO_BASE_URL: 'http://127.0.0.1:4010' } })
 *   await server.connect(transport)
 */
export function createUtilityServer(options: UtilityServerOptions): Server {
  const settings = readUtilitySettings(options.env);
  const now = options.now ?? Date.now;
  const prices = createPriceLookup({
    sources: settings.priceProviders.map((name) => createPriceSource(name, settings)),
    cacheTtlMs: settings.priceCacheTtlMs,
    deadlineMs: settings.priceDeadlineMs,
    now,
  });
  return createServer({
    name: 'switchyard-utility',
    version: '0.1.0',
    logger: options.logger,
    tools: [
      getCryptoPriceTool({ prices }),
      getWeatherTool({
        forecastBaseUrl: settings.openMeteoBaseUrl,
        geocodingBaseUrl: settings.openMeteoGeocodingBaseUrl,
        timeoutMs: settings.timeoutMs,
      }),
      getTimeTool({ geocodingBaseUrl: settings.openMeteoGeocodingBaseUrl, timeoutMs: settings.timeoutMs, now }),
    ],
  });
}

function createPriceSource(name: PriceProviderName, settings: UtilitySettings): PriceSource {
  const timeoutMs = settings.timeoutMs;
  switch (name) {
    case 'coingecko':
      return createCoinGeckoSource({ baseUrl: settings.coingeckoBaseUrl, apiKey: settings.coingeckoApiKey, timeoutMs });
    case 'defillama':
      return createDefiLlamaSource({ baseUrl: settings.defillamaBaseUrl, timeoutMs });
    case 'binance':
      return createBinanceSource({ baseUrl: settings.binanceBaseUrl, timeoutMs });
    case 'coincap':
      return createCoinCapSource({
        baseUrl: settings.coincapBaseUrl,
        apiKey: settings.coincapApiKey,
        timeoutMs: settings.coincapTimeoutMs,
      });
  }
}
