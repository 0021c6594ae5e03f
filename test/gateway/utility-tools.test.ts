import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestGateway, walletHeaders, type TestGateway, executeTool } from '../helpers/gateway.js';
import { runnableEnv } from './tools/fixture-servers.js';
import { startPriceFixtures, type PriceFixtures } from '../fixtures/utility/price-fixtures.js';
import { startForecast, startGeocoding } from '../fixtures/utility/open-meteo-fixtures.js';
import type { FixtureServer } from '../fixtures/utility/fixture-server.js';

// The built utility server (dist/, so run `npm run build` first) behind the real gateway, its
// providers replaced by fixtures on 127.0.0.1.
describe('utility tools through the gateway', () => {
  let gateway: TestGateway;
  let prices: PriceFixtures;
  let geocoding: FixtureServer;
  let forecast: FixtureServer;

  const execute = (tool: string, args: Record<string, unknown>) => executeTool(gateway, tool, args);

  before(async () => {
    [prices, geocoding, forecast] = await Promise.all([startPriceFixtures(), startGeocoding(), startForecast()]);
    const passThrough = runnableEnv();
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.mcpServers = {
          utility: {
            command: process.execPath,
            args: ['dist/tool-servers/utility/main.js'],
            env: {
              ...prices.env,
              OPEN_METEO_BASE_URL: forecast.url,
              // Through the host's ${VAR} expansion, as the shipped config does it.
              OPEN_METEO_GEOCODING_BASE_URL: '${TEST_GEOCODING_URL}',
              COINGECKO_API_KEY: '${COINGECKO_API_KEY}',
              UTILITY_TIMEOUT_MS: '2000',
            },
          },
        };
      },
      env: { ...passThrough, FREE_MODE: 'true', TEST_GEOCODING_URL: geocoding.url },
    });
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([prices?.close(), geocoding?.close(), forecast?.close()]);
  });

  test('GET /v1/tools lists the three utility tools with their params', async () => {
    const response = await fetch(`${gateway.url}/v1/tools`, { headers: walletHeaders() });
    assert.equal(response.status, 200);
    const { tools } = (await response.json()) as { tools: Array<{ name: string; params: string[]; server?: string }> };
    const utility = tools.filter((t) => t.server === 'utility');
    assert.deepEqual(
      utility.map((t) => [t.name, t.params]),
      [
        ['get_crypto_price', ['symbol', 'id', 'contract', 'chain', 'currency']],
        ['get_weather', ['location', 'latitude', 'longitude', 'units', 'days']],
        ['get_time', ['timezone', 'location', 'at']],
      ],
    );
  });

  test('get_crypto_price runs: {ok, tool, result} naming asset and provider', async () => {
    const { status, body } = await execute('get_crypto_price', { symbol: 'BTC' });
    assert.equal(status, 200);
    assert.deepEqual(body, {
      ok: true,
      tool: 'get_crypto_price',
      result: {
        symbol: 'BTC',
        name: 'Bitcoin',
        asset_id: 'bitcoin',
        resolved_from: 'symbol',
        price: 67187.33,
        currency: 'usd',
        change_24h_pct: 3.6370567,
        market_cap: 1317802988326.25,
        provider: 'CoinGecko',
        as_of: new Date(1711356300 * 1000).toISOString(),
      },
    });
    // An unset ${COINGECKO_API_KEY} is dropped, so no empty key header goes out.
    assert.equal(prices.coingecko.requests.at(-1)?.headers['x-cg-demo-api-key'], undefined);
  });

  test('get_crypto_price: unknown asset is 404 not_found; all providers down is 502 upstream_unavailable', async () => {
    const unknown = await execute('get_crypto_price', { symbol: 'ZZZQ' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.ok, false);
    assert.equal((unknown.body.error as { code: string }).code, 'not_found');

    for (const fixture of [prices.coingecko, prices.defillama, prices.binance, prices.coincap]) fixture.mode = 'status500';
    try {
      const down = await execute('get_crypto_price', { id: 'ethereum' });
      assert.equal(down.status, 502);
      assert.deepEqual(down.body.error, {
        message: 'All providers failed: CoinGecko: HTTP 500; DefiLlama: HTTP 500; Binance: HTTP 500; CoinCap: HTTP 500',
        type: (down.body.error as { type: string }).type,
        code: 'upstream_unavailable',
        param: null,
      });
    } finally {
      prices.reset();
    }
  });

  test('get_weather runs with geocoding through ${VAR} expansion', async () => {
    const { status, body } = await execute('get_weather', { location: 'Berlin', days: 1 });
    assert.equal(status, 200);
    const result = body.result as { location: { name: string; timezone: string }; current: { description: string }; daily: unknown[] };
    assert.equal(result.location.name, 'Berlin');
    assert.equal(result.location.timezone, 'Europe/Berlin');
    assert.equal(result.current.description, 'moderate rain');
    assert.equal(result.daily.length, 1);
  });

  test('get_time runs; an invalid zone is a 400 naming the argument', async () => {
    const { status, body } = await execute('get_time', { timezone: 'Asia/Kolkata', at: '2026-03-08T07:00:00Z' });
    assert.equal(status, 200);
    assert.equal((body.result as { iso: string }).iso, '2026-03-08T12:30:00+05:30');
    const bad = await execute('get_time', { timezone: 'Nowhere/Special' });
    assert.equal(bad.status, 400);
    assert.equal((bad.body.error as { code: string }).code, 'invalid_tool_arguments');
    assert.equal((bad.body.error as { param: string }).param, 'timezone');
  });

  test('the shipped config forwards every utility variable to the utility server', () => {
    const shipped = JSON.parse(readFileSync('config/gateway.json', 'utf8')) as { mcpServers: { utility: { env: Record<string, string> } } };
    const names = [
      'COINGECKO_BASE_URL',
      'COINGECKO_API_KEY',
      'DEFILLAMA_BASE_URL',
      'BINANCE_BASE_URL',
      'COINCAP_BASE_URL',
      'COINCAP_API_KEY',
      'OPEN_METEO_BASE_URL',
      'OPEN_METEO_GEOCODING_BASE_URL',
      'PRICE_PROVIDERS',
      'PRICE_CACHE_TTL_MS',
      'PRICE_FALLBACK_DEADLINE_MS',
      'UTILITY_TIMEOUT_MS',
      'LOG_LEVEL',
    ];
    assert.deepEqual(shipped.mcpServers.utility.env, Object.fromEntries(names.map((name) => [name, `\${${name}}`])));
  });
});

// The last tool family to land checks the whole interface: the shipped config's four servers
// (built, in dist/) plus the gateway's own list_tools give exactly the 18 names, once each.
describe('the shipped tool servers together', () => {
  let gateway: TestGateway;

  before(async () => {
    const shipped = JSON.parse(readFileSync('config/gateway.json', 'utf8')) as { mcpServers: Record<string, { command: string }> };
    const passThrough = runnableEnv();
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.mcpServers = Object.fromEntries(
          Object.entries(shipped.mcpServers).map(([name, server]) => [
            name,
            { ...server, command: server.command === 'node' ? process.execPath : server.command },
          ]),
        );
      },
      env: { ...passThrough, FREE_MODE: 'true' },
    });
  });

  after(async () => {
    await gateway?.stop();
  });

  test('GET /v1/tools lists exactly the 18 tool names of the interface', async () => {
    const response = await fetch(`${gateway.url}/v1/tools`, { headers: walletHeaders() });
    assert.equal(response.status, 200);
    const { tools } = (await response.json()) as { tools: Array<{ name: string }> };
    assert.deepEqual(
      tools.map((t) => t.name).sort(),
      [
        'get_eth_balance',
        'get_token_balance',
        'get_token_info',
        'get_gas_price',
        'get_block',
        'get_tx_count',
        'is_contract',
        'resolve_ens',
        'get_transaction',
        'get_crypto_price',
        'web_search',
        'web_extract',
        'read_tweet',
        'find_music',
        'knowledge_search',
        'list_tools',
        'get_weather',
        'get_time',
      ].sort(),
    );
  });
});
