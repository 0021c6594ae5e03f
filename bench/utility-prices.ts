/**
 * get_crypto_price cost, in-process over MCP, against a CoinGecko fixture on 127.0.0.1:
 * uncached (every call reaches the provider) vs cached, and N concurrent identical calls with a
 * slow provider (coalesced into one upstream request). Figures are ratios within one run.
 *
 *   npx tsx bench/utility-prices.ts
 */
import { startPriceFixtures } from '../test/fixtures/utility/price-fixtures.js';
import { connectUtility } from '../test/fixtures/utility/connect-utility.js';

const CALLS = 2000;
const CONCURRENT = 200;
const SLOW_PROVIDER_MS = 100;

const fixtures = await startPriceFixtures();
const uncached = await connectUtility({ ...fixtures.env, PRICE_PROVIDERS: 'coingecko', PRICE_CACHE_TTL_MS: '0' });
const cached = await connectUtility({ ...fixtures.env, PRICE_PROVIDERS: 'coingecko' });

async function rate(label: string, call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 50; i++) await call(); // warm-up
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) await call();
  const perSecond = CALLS / ((performance.now() - started) / 1000);
  console.log(`${label.padEnd(34)} ${perSecond.toFixed(0).padStart(7)} calls/s`);
  return perSecond;
}

try {
  const baseline = await rate('uncached (provider each call)', () => uncached.call('get_crypto_price', { symbol: 'BTC' }));
  const hot = await rate('cached (30 s TTL)', () => cached.call('get_crypto_price', { symbol: 'BTC' }));
  console.log(`cached / uncached                  ${(hot / baseline).toFixed(1)}x`);

  fixtures.reset();
  fixtures.coingecko.delayMs = SLOW_PROVIDER_MS;
  const coalescing = await connectUtility({ ...fixtures.env, PRICE_PROVIDERS: 'coingecko', PRICE_CACHE_TTL_MS: '0' });
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENT }, () => coalescing.call('get_crypto_price', { symbol: 'ETH' })));
  const wallMs = performance.now() - started;
  console.log(
    `${CONCURRENT} concurrent identical calls, provider ${SLOW_PROVIDER_MS} ms: ${fixtures.coingecko.count()} upstream request(s), ${wallMs.toFixed(0)} ms wall (${(wallMs / SLOW_PROVIDER_MS).toFixed(1)}x one provider round trip)`,
  );
  await coalescing.close();
} finally {
  await uncached.close();
  await cached.close();
  await fixtures.close();
}
