import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startForecast, startGeocoding } from '../../fixtures/utility/open-meteo-fixtures.js';
import type { FixtureServer } from '../../fixtures/utility/fixture-server.js';
import { connectUtility, type UtilityClient } from '../../fixtures/utility/connect-utility.js';

describe('get_weather', () => {
  let geocoding: FixtureServer;
  let forecast: FixtureServer;
  let utility: UtilityClient;

  before(async () => {
    [geocoding, forecast] = await Promise.all([startGeocoding(), startForecast()]);
    // The longest timeout there is: an answer from the fixtures must never depend on how busy the
    // machine is. The one test of the timeout itself has a client of its own.
    utility = await connectUtility(fixtureEnv('60000'));
  });
  afterEach(() => {
    for (const server of [geocoding, forecast]) {
      server.mode = 'ok';
      server.requests.length = 0;
    }
  });
  after(async () => {
    await utility.close();
    await Promise.all([geocoding.close(), forecast.close()]);
  });

  /** The utility server's environment: the two fixtures, and each provider request's timeout. */
  function fixtureEnv(timeoutMs: string): Record<string, string> {
    return { OPEN_METEO_BASE_URL: forecast.url, OPEN_METEO_GEOCODING_BASE_URL: geocoding.url, UTILITY_TIMEOUT_MS: timeoutMs };
  }

  test('a place name is geocoded, then its forecast read, with WMO codes in words', async () => {
    const { result, error } = await utility.call('get_weather', { location: 'Berlin' });
    assert.equal(error, undefined);
    assert.deepEqual(result, {
      location: {
        name: 'Berlin',
        country: 'Germany',
        region: 'Land Berlin',
        latitude: 52.52437,
        longitude: 13.41053,
        timezone: 'Europe/Berlin',
      },
      units: { temperature: '°C', wind_speed: 'km/h', humidity: '%' },
      current: {
        time: '2026-03-08T14:15',
        temperature: 7.5,
        apparent_temperature: 4.2,
        humidity: 81,
        wind_speed: 16.1,
        weather_code: 63,
        description: 'moderate rain',
      },
      daily: [
        { date: '2026-03-08', min: 1, max: 9, weather_code: 3, description: 'overcast' },
        { date: '2026-03-09', min: 2, max: 10, weather_code: 61, description: 'slight rain' },
        { date: '2026-03-10', min: 3, max: 11, weather_code: 95, description: 'thunderstorm' },
      ],
      provider: 'Open-Meteo',
    });
    const search = geocoding.requests[0];
    assert.equal(search.path, '/v1/search');
    assert.equal(search.query.get('name'), 'Berlin');
    assert.equal(search.query.get('format'), 'json');
    const request = forecast.requests[0];
    assert.equal(request.path, '/v1/forecast');
    assert.equal(request.query.get('latitude'), '52.52437');
    assert.equal(request.query.get('longitude'), '13.41053');
    assert.equal(request.query.get('current'), 'temperature_2m,apparent_temperature,relative_humidity_2m,wind_speed_10m,weather_code');
    assert.equal(request.query.get('daily'), 'temperature_2m_max,temperature_2m_min,weather_code');
    assert.equal(request.query.get('timezone'), 'auto');
    assert.equal(request.query.get('forecast_days'), '3');
    assert.equal(request.query.get('temperature_unit'), null);
  });

  test('imperial asks Open-Meteo for fahrenheit and mph', async () => {
    const { result } = await utility.call('get_weather', { location: 'Berlin', units: 'imperial', days: 1 });
    assert.deepEqual(result?.units, { temperature: '°F', wind_speed: 'mp/h', humidity: '%' });
    assert.equal((result?.current as Record<string, unknown>).temperature, 45.5);
    assert.equal((result?.current as Record<string, unknown>).wind_speed, 10);
    assert.deepEqual(result?.daily, [{ date: '2026-03-08', min: 33.8, max: 48.2, weather_code: 3, description: 'overcast' }]);
    assert.equal(forecast.requests[0].query.get('temperature_unit'), 'fahrenheit');
    assert.equal(forecast.requests[0].query.get('wind_speed_unit'), 'mph');
  });

  test('coordinates skip geocoding; days 0 gives current conditions only', async () => {
    const { result } = await utility.call('get_weather', { latitude: 19.07, longitude: 72.88, days: 0 });
    assert.deepEqual(result?.location, { name: '19.07, 72.88', latitude: 19.07, longitude: 72.88, timezone: 'Asia/Kolkata' });
    assert.equal('daily' in (result ?? {}), false);
    assert.equal(geocoding.requests.length, 0);
    assert.equal(forecast.requests[0].query.get('daily'), null);
  });

  // Open-Meteo matches bare names only: the qualifier after the comma must choose among its results.
  const qualified: Array<[string, { name: string; country: string; region: string; latitude: number; longitude: number }]> = [
    ['Dover', { name: 'Dover', country: 'United States', region: 'Delaware', latitude: 39.15817, longitude: -75.52437 }],
    ['Dover, UK', { name: 'Dover', country: 'United Kingdom', region: 'England', latitude: 51.12598, longitude: 1.31257 }],
    ['Dover, NH', { name: 'Dover', country: 'United States', region: 'New Hampshire', latitude: 43.19786, longitude: -70.8737 }],
    ['dover, new jersey', { name: 'Dover', country: 'United States', region: 'New Jersey', latitude: 40.88399, longitude: -74.5621 }],
    ['Austin, Texas', { name: 'Austin', country: 'United States', region: 'Texas', latitude: 30.26715, longitude: -97.74306 }],
    ['Austin, MN, USA', { name: 'Austin', country: 'United States', region: 'Minnesota', latitude: 43.66663, longitude: -92.97464 }],
    ['Paris, FR', { name: 'Paris', country: 'France', region: 'Île-de-France', latitude: 48.85341, longitude: 2.3488 }],
    ['Paris, Texas', { name: 'Paris', country: 'United States', region: 'Texas', latitude: 33.66094, longitude: -95.55551 }],
    ['Paris, Ile-de-France', { name: 'Paris', country: 'France', region: 'Île-de-France', latitude: 48.85341, longitude: 2.3488 }],
  ];
  for (const [location, expected] of qualified) {
    test(`"${location}" is geocoded by name, the qualifier choosing among same-named places`, async () => {
      const { result, error } = await utility.call('get_weather', { location, days: 0 });
      assert.equal(error, undefined);
      const { timezone: _zone, ...place } = result?.location as Record<string, unknown>;
      assert.deepEqual(place, expected);
      assert.equal(geocoding.requests[0].query.get('name'), location.split(',')[0]);
      assert.equal(geocoding.requests[0].query.get('count'), '10');
      assert.equal(forecast.requests[0].query.get('latitude'), String(expected.latitude));
    });
  }

  test('a qualifier no same-named place matches is not_found, not another place of that name', async () => {
    const { error } = await utility.call('get_weather', { location: 'Dover, Narnia' });
    assert.deepEqual(error, { code: 'not_found', message: 'No place called "Dover, Narnia" was found.', param: 'location' });
    assert.equal(forecast.requests.length, 0);
  });

  test('an unknown place is not_found (Open-Meteo sends no results key)', async () => {
    const { error } = await utility.call('get_weather', { location: 'Atlantis' });
    assert.deepEqual(error, { code: 'not_found', message: 'No place called "Atlantis" was found.', param: 'location' });
    assert.equal(forecast.requests.length, 0);
  });

  const invalid: Array<[string, Record<string, unknown>, { code: string; message: string; param: string }]> = [
    [
      'nothing',
      {},
      { code: 'invalid_arguments', message: 'Pass `location` (a place name) or `latitude` + `longitude`.', param: 'location' },
    ],
    [
      'both',
      { location: 'Berlin', latitude: 1, longitude: 2 },
      { code: 'invalid_arguments', message: 'Pass either `location` or `latitude` + `longitude`, not both.', param: 'location' },
    ],
    [
      'latitude alone',
      { latitude: 52.5 },
      { code: 'invalid_arguments', message: '`longitude` is required with `latitude`.', param: 'longitude' },
    ],
    [
      'latitude out of range',
      { latitude: 91, longitude: 0 },
      { code: 'invalid_arguments', message: 'latitude: Too big: expected number to be <=90', param: 'latitude' },
    ],
    [
      'unknown units',
      { location: 'Berlin', units: 'kelvin' },
      { code: 'invalid_arguments', message: 'units: Invalid option: expected one of "metric"|"imperial"', param: 'units' },
    ],
  ];
  for (const [name, args, expected] of invalid) {
    test(`invalid arguments: ${name}`, async () => {
      const { error } = await utility.call('get_weather', args);
      assert.deepEqual(error, expected);
    });
  }

  test('a failing forecast is upstream_unavailable naming it', async () => {
    forecast.mode = 'status500';
    const { error } = await utility.call('get_weather', { latitude: 1, longitude: 2 });
    assert.deepEqual(error, { code: 'upstream_unavailable', message: 'Open-Meteo forecast: HTTP 500' });
  });

  test('a forecast that never answers is a timeout', async () => {
    forecast.mode = 'hang';
    const hurried = await connectUtility(fixtureEnv('300'));
    try {
      const { error } = await hurried.call('get_weather', { latitude: 1, longitude: 2 });
      assert.deepEqual(error, { code: 'timeout', message: 'Open-Meteo forecast: timed out after 300 ms' });
    } finally {
      await hurried.close();
    }
  });

  test('a forecast of the wrong shape is upstream_unavailable', async () => {
    forecast.mode = 'wrong_shape';
    const { error } = await utility.call('get_weather', { latitude: 1, longitude: 2 });
    assert.deepEqual(error, { code: 'upstream_unavailable', message: 'Open-Meteo forecast: unexpected response' });
  });

  test('a geocoder answering garbage is upstream_unavailable', async () => {
    geocoding.mode = 'garbage';
    const { error } = await utility.call('get_weather', { location: 'Berlin' });
    assert.deepEqual(error, { code: 'upstream_unavailable', message: 'Open-Meteo geocoding: response is not valid JSON' });
  });
});
