import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeWeatherCode } from '../../../tool-servers/utility/wmo-codes.js';

test('WMO codes in words, and an unknown code says so', () => {
  assert.equal(describeWeatherCode(0), 'clear sky');
  assert.equal(describeWeatherCode(2), 'partly cloudy');
  assert.equal(describeWeatherCode(45), 'fog');
  assert.equal(describeWeatherCode(57), 'dense freezing drizzle');
  assert.equal(describeWeatherCode(75), 'heavy snowfall');
  assert.equal(describeWeatherCode(82), 'violent rain showers');
  assert.equal(describeWeatherCode(99), 'thunderstorm with heavy hail');
  assert.equal(describeWeatherCode(42), 'unknown weather (WMO code 42)');
});
