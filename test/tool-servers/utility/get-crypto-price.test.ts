import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  COINCAP_TEST_KEY,
  startPriceFixtures,
  USDC_ETHEREUM,
  USDC_ETHEREUM_CHECKSUMMED,
  type PriceFixtures,
} from '../../fixtures/utility/price-fixtures.js';
import { connectUtility, type UtilityClient } from '../../fixtures/utility/connect-utility.js';
import { createUtilityServer } from '../../../tool-servers/utility/server.js';
import { readUtilitySettings } from '../../../tool-servers/utility/settings.js';

const iso = (ms: number) => new Date(ms).toISOString();

describe('get_crypto_price', () => {
  let fixtures: PriceFixtures;
  const clients: UtilityClient[] = [];
  /** A fresh server (own cache) over the fixtures, with extra env. */
  const connect = async (env: Record<string, string> = {}, now?: () => number) => {
    const client = await connectUtility({ ...fixtures.env, UTILITY_TIMEOUT_MS: '2000', ...env }, now);
    clients.push(client);
    return client;
  };

  before(async () => {
    fixtures = await startPriceFixtures();
  });
  afterEach(() => fixtures.reset());
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await fixtures.close();
  });

  describe('each provider reads its own wire format', () => {
    test('CoinGecko simple/price: price, 24 h change, market cap, last_updated_at', async () => {
      const utility = await connect({ COINGECKO_API_KEY: 'CG-demo-key' });
      const { result } = await utility.call('get_crypto_price', { symbol: 'btc' });
      assert.deepEqual(result, {
        symbol: 'BTC',
        name: 'Bitcoin',
        asset_id: 'bitcoin',
        resolved_from: 'symbol',
        price: 67187.33,
        currency: 'usd',
        change_24h_pct: 3.6370567,
        market_cap: 1317802988326.25,
        provider: 'CoinGecko',
        as_of: iso(1711356300 * 1000),
      });
      const [request] = fixtures.coingecko.requests;
      assert.equal(request.path, '/api/v3/simple/price');
      assert.equal(request.query.get('ids'), 'bitcoin');
      assert.equal(request.query.get('vs_currencies'), 'usd');
      assert.equal(request.query.get('include_24hr_change'), 'true');
      assert.equal(request.query.get('include_market_cap'), 'true');
      assert.equal(request.query.get('include_last_updated_at'), 'true');
      assert.equal(request.headers['x-cg-demo-api-key'], 'CG-demo-key');
      assert.equal(fixtures.defillama.count(), 0);
    });

    test('CoinGecko in another currency', async () => {
      const utility = await connect();
      const { result } = await utility.call('get_crypto_price', { id: 'bitcoin', currency: 'EUR' });
      assert.equal(result?.price, 61950.12);
      assert.equal(result?.currency, 'eur');
      assert.equal(result?.change_24h_pct, 3.51);
      assert.equal(result?.market_cap, 1215106471520.8);
      assert.equal(result?.resolved_from, 'id');
      assert.equal(fixtures.coingecko.requests[0].headers['x-cg-demo-api-key'], undefined);
    });

    test('CoinGecko token_price by contract, keyed by the lower-case address', async () => {
      const utility = await connect();
      const { result } = await utility.call('get_crypto_price', { contract: USDC_ETHEREUM_CHECKSUMMED, chain: 'Ethereum' });
      assert.deepEqual(result, {
        symbol: USDC_ETHEREUM,
        resolved_from: 'contract',
        contract: USDC_ETHEREUM,
        chain: 'ethereum',
        price: 0.999871,
        currency: 'usd',
        change_24h_pct: -0.0123,
        market_cap: 32000000000,
        provider: 'CoinGecko',
        as_of: iso(1711356260 * 1000),
      });
      assert.equal(fixtures.coingecko.requests[0].path, '/api/v3/simple/token_price/ethereum');
      assert.equal(fixtures.coingecko.requests[0].query.get('contract_addresses'), USDC_ETHEREUM);
    });

    test('DefiLlama prices/current by coingecko id (USD only, no change)', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'defillama' });
      const { result } = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.deepEqual(result, {
        symbol: 'ETH',
        name: 'Ethereum',
        asset_id: 'ethereum',
        resolved_from: 'symbol',
        price: 3456.5,
        currency: 'usd',
        provider: 'DefiLlama',
        as_of: iso(1711356302 * 1000),
      });
      assert.equal(fixtures.defillama.requests[0].path, '/prices/current/coingecko:ethereum');
    });

    test('DefiLlama by chain:address names the token', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'defillama' });
      const { result } = await utility.call('get_crypto_price', { contract: USDC_ETHEREUM, chain: 'mainnet' });
      assert.equal(result?.symbol, 'USDC');
      assert.equal(result?.price, 0.999902);
      assert.equal(fixtures.defillama.requests[0].path, `/prices/current/ethereum:${USDC_ETHEREUM}`);
    });

    test('Binance ticker/24hr: string prices, USDT pair, change from the same call', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'binance' });
      const { result } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.deepEqual(result, {
        symbol: 'BTC',
        name: 'Bitcoin',
        asset_id: 'bitcoin',
        resolved_from: 'symbol',
        price: 67187.33,
        currency: 'usd',
        change_24h_pct: -0.141,
        provider: 'Binance',
        as_of: iso(1711356299999),
        note: 'Binance BTCUSDT pair: priced in USDT, which tracks USD closely.',
      });
      assert.equal(fixtures.binance.requests[0].path, '/api/v3/ticker/24hr');
      assert.equal(fixtures.binance.requests[0].query.get('symbol'), 'BTCUSDT');
    });

    test('CoinCap v2 asset: numbers sent as strings', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coincap' });
      const { result } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.deepEqual(result, {
        symbol: 'BTC',
        name: 'Bitcoin',
        asset_id: 'bitcoin',
        resolved_from: 'symbol',
        price: Number('67187.3312345678901234'),
        currency: 'usd',
        change_24h_pct: 3.6370567001,
        market_cap: 1321982328121.5478,
        provider: 'CoinCap',
        as_of: iso(1711356300123),
      });
      assert.equal(fixtures.coincap.requests[0].path, '/v2/assets/bitcoin');
      assert.equal(fixtures.coincap.requests[0].headers.authorization, undefined);
    });

    test('CoinCap v3 with COINCAP_API_KEY: same shape, /v3 paths, the key as a Bearer token', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coincap', COINCAP_API_KEY: COINCAP_TEST_KEY });
      const byId = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.equal(byId.result?.provider, 'CoinCap');
      assert.equal(byId.result?.price, 3456.7712345678901);
      const bySearch = await utility.call('get_crypto_price', { symbol: 'PEPE' });
      assert.equal(bySearch.result?.price, 0.000007123456789);
      assert.deepEqual(
        fixtures.coincap.requests.map((r) => [r.path, r.headers.authorization]),
        [
          ['/v3/assets/ethereum', `Bearer ${COINCAP_TEST_KEY}`],
          ['/v3/assets', `Bearer ${COINCAP_TEST_KEY}`],
        ],
      );
    });

    test('a rejected CoinCap key is a provider failure like any other', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coincap', COINCAP_API_KEY: 'wrong-key' });
      const { error } = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.deepEqual(error, { code: 'upstream_unavailable', message: 'All providers failed: CoinCap: HTTP 401' });
    });
  });

  describe('resolving what is asked for', () => {
    test('an ambiguous ticker picks the largest by market cap and says so', async () => {
      const utility = await connect();
      const { result } = await utility.call('get_crypto_price', { symbol: 'TON' });
      assert.equal(result?.asset_id, 'the-open-network');
      assert.equal(result?.name, 'Toncoin');
      assert.equal(result?.price, 5.4321);
      assert.equal('change_24h_pct' in (result ?? {}), false, 'a null change is left out');
      assert.equal(
        result?.note,
        '"TON" is also the ticker of Tokamak Network (id "tokamak-network"); chose Toncoin (id "the-open-network"), the largest by market cap. Pass `id` to choose another.',
      );
    });

    test('an unlisted ticker is priced by the providers that search by ticker (Binance, then CoinCap)', async () => {
      const utility = await connect({ PRICE_CACHE_TTL_MS: '0' });
      const first = await utility.call('get_crypto_price', { symbol: 'pepe' });
      assert.equal(first.result?.provider, 'Binance');
      assert.equal(first.result?.price, 0.00000712);
      assert.equal(first.result?.symbol, 'PEPE');
      assert.equal(fixtures.coingecko.count(), 0, 'CoinGecko needs an id: skipped');
      fixtures.binance.mode = 'status500';
      const second = await utility.call('get_crypto_price', { symbol: 'PEPE' });
      assert.equal(second.result?.provider, 'CoinCap');
      assert.equal(second.result?.asset_id, 'pepe', 'the exact ticker match, not PEPECOIN');
      assert.equal(second.result?.price, 0.000007123456789);
      assert.equal(fixtures.coincap.requests[0].query.get('search'), 'PEPE');
    });

    test('an unknown id is not_found once every provider said it does not know it', async () => {
      const utility = await connect();
      const { error } = await utility.call('get_crypto_price', { id: 'no-such-coin' });
      assert.deepEqual(error, {
        code: 'not_found',
        message:
          'Unknown asset: no price provider knows "no-such-coin"; `id` is a CoinGecko id such as "bitcoin" (CoinGecko: no results; DefiLlama: no results; Binance: skipped (no USDT pair for this asset); CoinCap: no results).',
      });
    });

    test('an unknown ticker is not_found (Binance -1121 and no CoinCap match both mean unknown)', async () => {
      const utility = await connect();
      const { error } = await utility.call('get_crypto_price', { symbol: 'ZZZQ' });
      assert.deepEqual(error, {
        code: 'not_found',
        message:
          'Unknown asset: no price provider knows symbol "ZZZQ"; pass `id` (a CoinGecko id such as "bitcoin") or `contract` with `chain` (CoinGecko: skipped (needs a CoinGecko id for an unlisted symbol); DefiLlama: skipped (needs a CoinGecko id for an unlisted symbol); Binance: no results; CoinCap: no results).',
      });
      assert.equal(fixtures.binance.count(), 1);
    });

    test('"unknown" from some and a failure from another is upstream_unavailable, not not_found', async () => {
      const utility = await connect();
      fixtures.coincap.mode = 'status500';
      const { error } = await utility.call('get_crypto_price', { id: 'no-such-coin' });
      assert.equal(error?.code, 'upstream_unavailable');
      assert.equal(
        error?.message,
        'All providers failed: CoinGecko: no results; DefiLlama: no results; Binance: skipped (no USDT pair for this asset); CoinCap: HTTP 500',
      );
    });

    test('an unlisted ticker in a currency no ticker-searching provider quotes is not_found saying why', async () => {
      const utility = await connect();
      const { error } = await utility.call('get_crypto_price', { symbol: 'PEPE', currency: 'eur' });
      assert.deepEqual(error, {
        code: 'not_found',
        message:
          'No configured price provider can price symbol "PEPE" in EUR (CoinGecko: needs a CoinGecko id for an unlisted symbol; DefiLlama: prices in USD only; Binance: USDT pairs only (usd or usdt); CoinCap: prices in USD only).',
      });
    });

    const invalid: Array<[string, Record<string, unknown>, { code: string; message: string; param: string }]> = [
      [
        'nothing to price',
        {},
        {
          code: 'invalid_arguments',
          message: 'Pass one of `symbol` (e.g. "BTC"), `id` (a CoinGecko id such as "bitcoin") or `contract` with `chain`.',
          param: 'symbol',
        },
      ],
      [
        'symbol and id',
        { symbol: 'BTC', id: 'bitcoin' },
        { code: 'invalid_arguments', message: 'Pass only one of `symbol`, `id` or `contract` (got `symbol` and `id`).', param: 'id' },
      ],
      [
        'chain without contract',
        { symbol: 'BTC', chain: 'base' },
        { code: 'invalid_arguments', message: '`chain` goes with `contract`; for a coin, pass `symbol` or `id` alone.', param: 'chain' },
      ],
      [
        'contract without chain',
        { contract: USDC_ETHEREUM },
        {
          code: 'invalid_arguments',
          message: '`contract` needs `chain` (one of ethereum, base, arbitrum, optimism, polygon, bsc, avalanche).',
          param: 'chain',
        },
      ],
      [
        'unknown chain',
        { contract: USDC_ETHEREUM, chain: 'solana' },
        {
          code: 'invalid_arguments',
          message: 'Unknown chain "solana"; use one of ethereum, base, arbitrum, optimism, polygon, bsc, avalanche.',
          param: 'chain',
        },
      ],
      [
        'malformed contract',
        { contract: '0x1234', chain: 'base' },
        { code: 'invalid_arguments', message: 'contract: must be 0x followed by 40 hex digits', param: 'contract' },
      ],
      [
        'malformed currency',
        { symbol: 'BTC', currency: 'US Dollar' },
        { code: 'invalid_arguments', message: 'currency: must be a currency code such as "usd" or "eur"', param: 'currency' },
      ],
    ];
    for (const [name, args, expected] of invalid) {
      test(`invalid arguments: ${name}`, async () => {
        const utility = await connect();
        const { error } = await utility.call('get_crypto_price', args);
        assert.deepEqual(error, expected);
        assert.equal(fixtures.coingecko.count(), 0);
      });
    }
  });

  describe('fallback chain', () => {
    test('CoinGecko 500 → DefiLlama answers', async () => {
      const utility = await connect();
      fixtures.coingecko.mode = 'status500';
      const { result } = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.equal(result?.provider, 'DefiLlama');
      assert.equal(result?.price, 3456.5);
      assert.equal(fixtures.coingecko.count(), 1);
    });

    test('CoinGecko 429 and DefiLlama timing out → Binance answers', async () => {
      const utility = await connect({ UTILITY_TIMEOUT_MS: '300' });
      fixtures.coingecko.mode = 'status429';
      fixtures.defillama.mode = 'hang';
      const { result } = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.equal(result?.provider, 'Binance');
      assert.equal(result?.price, 3456.01);
      assert.equal(result?.change_24h_pct, 1.25);
    });

    test('CoinGecko garbage, DefiLlama 500, Binance 429 → CoinCap answers', async () => {
      const utility = await connect();
      fixtures.coingecko.mode = 'garbage';
      fixtures.defillama.mode = 'status500';
      fixtures.binance.mode = 'status429';
      const { result } = await utility.call('get_crypto_price', { symbol: 'ETH' });
      assert.equal(result?.provider, 'CoinCap');
      assert.equal(result?.price, 3456.7712345678901);
    });

    test('a 200 with JSON of the wrong shape counts as a failure', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coingecko,defillama,binance,coincap' });
      for (const fixture of [fixtures.coingecko, fixtures.defillama, fixtures.binance, fixtures.coincap]) fixture.mode = 'wrong_shape';
      const { error } = await utility.call('get_crypto_price', { id: 'ethereum' });
      assert.deepEqual(error, {
        code: 'upstream_unavailable',
        message:
          'All providers failed: CoinGecko: unexpected response; DefiLlama: unexpected response; Binance: unexpected response; CoinCap: unexpected response',
      });
    });

    test('all down → upstream_unavailable listing each failure', async () => {
      const utility = await connect({ UTILITY_TIMEOUT_MS: '300' });
      fixtures.coingecko.mode = 'status500';
      fixtures.defillama.mode = 'hang';
      fixtures.binance.mode = 'status429';
      fixtures.coincap.mode = 'garbage';
      const { error } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.deepEqual(error, {
        code: 'upstream_unavailable',
        message:
          'All providers failed: CoinGecko: HTTP 500; DefiLlama: timed out after 300 ms; Binance: HTTP 429 (rate limited); CoinCap: response is not valid JSON',
      });
    });

    test('keyless CoinCap (v2, may be retired) waits at most 2 s whatever UTILITY_TIMEOUT_MS says', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coincap', UTILITY_TIMEOUT_MS: '10000' });
      fixtures.coincap.mode = 'hang';
      const started = Date.now();
      const { error } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.deepEqual(error, { code: 'upstream_unavailable', message: 'All providers failed: CoinCap: timed out after 2000 ms' });
      assert.ok(Date.now() - started < 4000);
    });

    test('the whole chain has one deadline: past it the provider asked is stopped and the rest not asked', async () => {
      const utility = await connect({ UTILITY_TIMEOUT_MS: '300', PRICE_FALLBACK_DEADLINE_MS: '450' });
      for (const fixture of [fixtures.coingecko, fixtures.defillama, fixtures.binance, fixtures.coincap]) fixture.mode = 'hang';
      const started = Date.now();
      const { error } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      const elapsed = Date.now() - started;
      assert.deepEqual(error, {
        code: 'upstream_unavailable',
        message:
          'All providers failed: CoinGecko: timed out after 300 ms; DefiLlama: stopped at the 450 ms deadline; Binance: not asked (the 450 ms deadline had passed); CoinCap: not asked (the 450 ms deadline had passed)',
      });
      // Four providers in a row would take 4 × 300 ms.
      assert.ok(elapsed < 1000, `took ${elapsed} ms`);
      assert.equal(fixtures.binance.count() + fixtures.coincap.count(), 0);
    });

    test('PRICE_PROVIDERS sets the order', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coincap, binance' });
      const { result } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.equal(result?.provider, 'CoinCap');
      assert.equal(fixtures.coingecko.count() + fixtures.defillama.count() + fixtures.binance.count(), 0);
    });
  });

  describe('cache and coalescing', () => {
    test('identical concurrent requests reach the provider once', async () => {
      const utility = await connect();
      fixtures.coingecko.delayMs = 300;
      const results = await Promise.all(Array.from({ length: 10 }, () => utility.call('get_crypto_price', { symbol: 'ETH' })));
      assert.equal(fixtures.coingecko.count('/api/v3/simple/price'), 1);
      for (const { result } of results) assert.equal(result?.price, 3456.78);
      // Different currency or asset: its own request.
      await Promise.all([
        utility.call('get_crypto_price', { id: 'bitcoin' }),
        utility.call('get_crypto_price', { id: 'bitcoin', currency: 'eur' }),
      ]);
      assert.equal(fixtures.coingecko.count('/api/v3/simple/price'), 3);
    });

    test('one caller cancelling does not fail the others sharing its request', async () => {
      const utility = await connect();
      fixtures.coingecko.delayMs = 400;
      const controller = new AbortController();
      const cancelled = utility.client.callTool({ name: 'get_crypto_price', arguments: { symbol: 'ETH' } }, undefined, {
        signal: controller.signal,
      });
      const waiting = utility.call('get_crypto_price', { symbol: 'ETH' });
      setTimeout(() => controller.abort(), 100);
      await assert.rejects(cancelled);
      const { result } = await waiting;
      assert.equal(result?.price, 3456.78);
      assert.equal(fixtures.coingecko.count(), 1);
    });

    test('concurrent requests share a failure too, and it is not cached', async () => {
      const utility = await connect({ PRICE_PROVIDERS: 'coingecko' });
      fixtures.coingecko.mode = 'status500';
      const failures = await Promise.all(Array.from({ length: 5 }, () => utility.call('get_crypto_price', { symbol: 'BTC' })));
      assert.equal(fixtures.coingecko.count(), 1);
      for (const { error } of failures) assert.equal(error?.message, 'All providers failed: CoinGecko: HTTP 500');
      fixtures.coingecko.mode = 'ok';
      const { result } = await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.equal(result?.price, 67187.33);
      assert.equal(fixtures.coingecko.count(), 2);
    });

    test('an answer is reused for 30 s, then asked again', async () => {
      let clock = Date.UTC(2026, 0, 1);
      const utility = await connect({}, () => clock);
      await utility.call('get_crypto_price', { symbol: 'BTC' });
      clock += 29_999;
      const cached = await utility.call('get_crypto_price', { symbol: 'btc' });
      assert.equal(cached.result?.price, 67187.33);
      assert.equal(fixtures.coingecko.count(), 1);
      // The same asset asked by id shares the entry.
      await utility.call('get_crypto_price', { id: 'bitcoin' });
      assert.equal(fixtures.coingecko.count(), 1);
      clock += 2;
      await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.equal(fixtures.coingecko.count(), 2);
    });

    test('PRICE_CACHE_TTL_MS=0 turns the cache off', async () => {
      const utility = await connect({ PRICE_CACHE_TTL_MS: '0' });
      await utility.call('get_crypto_price', { symbol: 'BTC' });
      await utility.call('get_crypto_price', { symbol: 'BTC' });
      assert.equal(fixtures.coingecko.count(), 2);
    });
  });

  describe('settings', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { PRICE_PROVIDERS: 'coingecko,bogus' },
        'utility: PRICE_PROVIDERS: unknown provider "bogus" (known: coingecko, defillama, binance, coincap)',
      ],
      [{ COINGECKO_BASE_URL: 'ftp://example.test' }, 'utility: COINGECKO_BASE_URL must be an http(s) URL'],
      [{ OPEN_METEO_BASE_URL: 'not a url' }, 'utility: OPEN_METEO_BASE_URL must be an http(s) URL'],
      [{ PRICE_CACHE_TTL_MS: '60000' }, 'utility: PRICE_CACHE_TTL_MS must be a whole number from 0 to 30000, got "60000"'],
      [{ UTILITY_TIMEOUT_MS: 'soon' }, 'utility: UTILITY_TIMEOUT_MS must be a whole number from 50 to 60000, got "soon"'],
      [{ PRICE_FALLBACK_DEADLINE_MS: '0' }, 'utility: PRICE_FALLBACK_DEADLINE_MS must be a whole number from 50 to 120000, got "0"'],
      [{ COINCAP_BASE_URL: 'api.coincap.io' }, 'utility: COINCAP_BASE_URL must be an http(s) URL'],
    ];
    for (const [env, message] of cases) {
      test(`refuses to start: ${message}`, () => {
        assert.throws(() => createUtilityServer({ env }), { message });
      });
    }

    test('defaults need no environment at all', () => {
      assert.doesNotThrow(() => createUtilityServer({ env: {} }));
    });

    test('CoinCap: keyless is v2 on api.coincap.io, last, with a short timeout; a key selects v3 on rest.coincap.io', () => {
      const keyless = readUtilitySettings({});
      assert.deepEqual(
        [keyless.coincapBaseUrl, keyless.coincapApiKey, keyless.coincapTimeoutMs, keyless.priceProviders.at(-1), keyless.priceDeadlineMs],
        ['https://api.coincap.io', undefined, 2000, 'coincap', 20000],
      );
      assert.equal(readUtilitySettings({ UTILITY_TIMEOUT_MS: '800' }).coincapTimeoutMs, 800);
      const keyed = readUtilitySettings({ COINCAP_API_KEY: 'k' });
      assert.deepEqual([keyed.coincapBaseUrl, keyed.coincapApiKey, keyed.coincapTimeoutMs], ['https://rest.coincap.io', 'k', 5000]);
      assert.equal(
        readUtilitySettings({ COINCAP_API_KEY: 'k', COINCAP_BASE_URL: 'http://127.0.0.1:9/' }).coincapBaseUrl,
        'http://127.0.0.1:9',
      );
    });
  });
});
