import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGeocoding } from '../../fixtures/utility/open-meteo-fixtures.js';
import type { FixtureServer } from '../../fixtures/utility/fixture-server.js';
import { connectUtility, type UtilityClient } from '../../fixtures/utility/connect-utility.js';

// Expected values are worked out by hand from the zones' published rules, not from Intl:
// New York moves from EST (−5) to EDT (−4) at 02:00 local on the 2nd Sunday of March (2026-03-08
// = 07:00Z) and back at 02:00 EDT on the 1st Sunday of November (2026-11-01 = 06:00Z). Lord Howe
// Island shifts by half an hour: +11:00 in summer until 02:00 local on the 1st Sunday of April
// (2026-04-05 = 2026-04-04T15:00Z), +10:30 until 02:00 local on the 1st Sunday of October
// (2026-10-04 = 2026-10-03T15:30Z). Kolkata is +05:30 all year, Kathmandu +05:45, St John's −03:30 in winter.
const FIXED_NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('get_time', () => {
  let geocoding: FixtureServer;
  let utility: UtilityClient;

  before(async () => {
    geocoding = await startGeocoding();
    utility = await connectUtility({ OPEN_METEO_GEOCODING_BASE_URL: geocoding.url, UTILITY_TIMEOUT_MS: '2000' }, () => FIXED_NOW);
  });
  after(async () => {
    await utility.close();
    await geocoding.close();
  });

  const cases: Array<{ zone: string; at: string; iso: string; offset: string; dst: boolean; weekday: string }> = [
    {
      zone: 'America/New_York',
      at: '2026-03-08T06:59:59Z',
      iso: '2026-03-08T01:59:59-05:00',
      offset: '-05:00',
      dst: false,
      weekday: 'Sunday',
    },
    {
      zone: 'America/New_York',
      at: '2026-03-08T07:00:00Z',
      iso: '2026-03-08T03:00:00-04:00',
      offset: '-04:00',
      dst: true,
      weekday: 'Sunday',
    },
    {
      zone: 'America/New_York',
      at: '2026-11-01T05:59:59Z',
      iso: '2026-11-01T01:59:59-04:00',
      offset: '-04:00',
      dst: true,
      weekday: 'Sunday',
    },
    {
      zone: 'America/New_York',
      at: '2026-11-01T06:00:00Z',
      iso: '2026-11-01T01:00:00-05:00',
      offset: '-05:00',
      dst: false,
      weekday: 'Sunday',
    },
    { zone: 'Asia/Kolkata', at: '2026-03-08T07:00:00Z', iso: '2026-03-08T12:30:00+05:30', offset: '+05:30', dst: false, weekday: 'Sunday' },
    {
      zone: 'Asia/Kathmandu',
      at: '2026-07-01T00:00:00Z',
      iso: '2026-07-01T05:45:00+05:45',
      offset: '+05:45',
      dst: false,
      weekday: 'Wednesday',
    },
    {
      zone: 'America/St_Johns',
      at: '2026-01-15T12:00:00Z',
      iso: '2026-01-15T08:30:00-03:30',
      offset: '-03:30',
      dst: false,
      weekday: 'Thursday',
    },
    {
      zone: 'Australia/Lord_Howe',
      at: '2026-04-04T14:59:59Z',
      iso: '2026-04-05T01:59:59+11:00',
      offset: '+11:00',
      dst: true,
      weekday: 'Sunday',
    },
    {
      zone: 'Australia/Lord_Howe',
      at: '2026-04-04T15:00:00Z',
      iso: '2026-04-05T01:30:00+10:30',
      offset: '+10:30',
      dst: false,
      weekday: 'Sunday',
    },
    {
      zone: 'Australia/Lord_Howe',
      at: '2026-10-03T15:29:59Z',
      iso: '2026-10-04T01:59:59+10:30',
      offset: '+10:30',
      dst: false,
      weekday: 'Sunday',
    },
    {
      zone: 'Australia/Lord_Howe',
      at: '2026-10-03T15:30:00Z',
      iso: '2026-10-04T02:30:00+11:00',
      offset: '+11:00',
      dst: true,
      weekday: 'Sunday',
    },
    { zone: 'UTC', at: '2026-03-08T07:00:00.750Z', iso: '2026-03-08T07:00:00+00:00', offset: '+00:00', dst: false, weekday: 'Sunday' },
  ];
  for (const c of cases) {
    test(`${c.zone} at ${c.at} is ${c.iso}`, async () => {
      const { result, error } = await utility.call('get_time', { timezone: c.zone, at: c.at });
      assert.equal(error, undefined);
      assert.deepEqual(result, {
        timezone: c.zone,
        iso: c.iso,
        local_time: c.iso.slice(0, 19).replace('T', ' '),
        utc_offset: c.offset,
        unix: Math.floor(Date.parse(c.at) / 1000),
        day_of_week: c.weekday,
        is_dst: c.dst,
      });
    });
  }

  test('with neither timezone nor location it is UTC now (the injected clock)', async () => {
    const { result } = await utility.call('get_time', {});
    assert.deepEqual(result, {
      timezone: 'UTC',
      iso: '2026-01-15T12:00:00+00:00',
      local_time: '2026-01-15 12:00:00',
      utc_offset: '+00:00',
      unix: FIXED_NOW / 1000,
      day_of_week: 'Thursday',
      is_dst: false,
    });
  });

  test('an instant given with an offset is the same instant', async () => {
    const { result } = await utility.call('get_time', { timezone: 'Europe/Berlin', at: '2026-03-08T02:30:00-05:00' });
    assert.equal(result?.iso, '2026-03-08T08:30:00+01:00');
    assert.equal(result?.unix, Date.UTC(2026, 2, 8, 7, 30) / 1000);
  });

  test('a zone name in the wrong case is answered under its canonical name', async () => {
    const { result } = await utility.call('get_time', { timezone: 'europe/berlin', at: '2026-07-01T12:00:00Z' });
    assert.equal(result?.timezone, 'Europe/Berlin');
    assert.equal(result?.utc_offset, '+02:00');
    assert.equal(result?.is_dst, true);
  });

  test('an invalid zone is invalid_arguments saying how to name one', async () => {
    const { error } = await utility.call('get_time', { timezone: 'Mars/Olympus_Mons' });
    assert.deepEqual(error, {
      code: 'invalid_arguments',
      message:
        'Unknown time zone "Mars/Olympus_Mons". Name an IANA time zone as Area/City, e.g. "Europe/Berlin", "America/New_York" or "Asia/Kolkata" (or "UTC"), or pass `location` with a place name.',
      param: 'timezone',
    });
  });

  test('a malformed `at` is invalid_arguments naming it', async () => {
    const { error } = await utility.call('get_time', { at: 'yesterday' });
    assert.equal(error?.code, 'invalid_arguments');
    assert.equal(error?.param, 'at');
    const impossible = await utility.call('get_time', { at: '2026-13-45T99:00:00Z' });
    assert.deepEqual(impossible.error, {
      code: 'invalid_arguments',
      message: 'at: "2026-13-45T99:00:00Z" is not a real date and time.',
      param: 'at',
    });
  });

  test('timezone and location together are refused', async () => {
    const { error } = await utility.call('get_time', { timezone: 'UTC', location: 'Berlin' });
    assert.deepEqual(error, { code: 'invalid_arguments', message: 'Pass either `timezone` or `location`, not both.', param: 'location' });
  });

  test('a place name is geocoded and its zone used', async () => {
    geocoding.requests.length = 0;
    const { result } = await utility.call('get_time', { location: 'Mumbai', at: '2026-03-08T07:00:00Z' });
    assert.deepEqual(result, {
      timezone: 'Asia/Kolkata',
      iso: '2026-03-08T12:30:00+05:30',
      local_time: '2026-03-08 12:30:00',
      utc_offset: '+05:30',
      unix: Date.UTC(2026, 2, 8, 7) / 1000,
      day_of_week: 'Sunday',
      is_dst: false,
      location: { name: 'Mumbai', country: 'India', region: 'Maharashtra', latitude: 19.07283, longitude: 72.88261 },
    });
    assert.equal(geocoding.requests.length, 1);
    assert.equal(geocoding.requests[0].query.get('name'), 'Mumbai');
  });

  test('a qualified place name uses the zone of the place it names', async () => {
    geocoding.requests.length = 0;
    const london = await utility.call('get_time', { location: 'Dover, United Kingdom', at: '2026-07-01T12:00:00Z' });
    assert.equal(london.result?.timezone, 'Europe/London');
    assert.deepEqual(london.result?.location, {
      name: 'Dover',
      country: 'United Kingdom',
      region: 'England',
      latitude: 51.12598,
      longitude: 1.31257,
    });
    const austin = await utility.call('get_time', { location: 'Austin, TX', at: '2026-07-01T12:00:00Z' });
    assert.equal(austin.result?.timezone, 'America/Chicago');
    assert.equal(austin.result?.utc_offset, '-05:00');
    // Unqualified, the most populous Dover (Delaware), not the first one listed (England).
    const dover = await utility.call('get_time', { location: 'Dover', at: '2026-07-01T12:00:00Z' });
    assert.equal(dover.result?.timezone, 'America/New_York');
    assert.deepEqual(
      geocoding.requests.map((r) => [r.query.get('name'), r.query.get('count')]),
      [
        ['Dover', '10'],
        ['Austin', '10'],
        ['Dover', '10'],
      ],
    );
  });

  test('an unknown place is not_found', async () => {
    const { error } = await utility.call('get_time', { location: 'Atlantis' });
    assert.deepEqual(error, { code: 'not_found', message: 'No place called "Atlantis" was found.', param: 'location' });
  });

  test('a failing geocoder is upstream_unavailable naming it', async () => {
    geocoding.mode = 'status500';
    try {
      const { error } = await utility.call('get_time', { location: 'Berlin' });
      assert.deepEqual(error, { code: 'upstream_unavailable', message: 'Open-Meteo geocoding: HTTP 500' });
    } finally {
      geocoding.mode = 'ok';
    }
  });

  test('a zone given by name needs no network', async () => {
    geocoding.requests.length = 0;
    await utility.call('get_time', { timezone: 'Asia/Tokyo' });
    assert.equal(geocoding.requests.length, 0);
  });
});
