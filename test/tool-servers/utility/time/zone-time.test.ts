import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalTimeZone, formatUtcOffset, isDaylightSaving, zonedTime } from '../../../../tool-servers/utility/time/zone-time.js';

test('offsets format as ±HH:MM', () => {
  assert.equal(formatUtcOffset(0), '+00:00');
  assert.equal(formatUtcOffset(330), '+05:30');
  assert.equal(formatUtcOffset(-210), '-03:30');
  assert.equal(formatUtcOffset(-570), '-09:30');
  assert.equal(formatUtcOffset(765), '+12:45');
});

test('zone names are canonical: case fixed, links followed, current IANA names', () => {
  assert.equal(canonicalTimeZone('asia/calcutta'), 'Asia/Kolkata');
  assert.equal(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata');
  assert.equal(canonicalTimeZone('Europe/Kiev'), 'Europe/Kyiv');
  assert.equal(canonicalTimeZone('US/Eastern'), 'America/New_York');
  assert.equal(canonicalTimeZone('Etc/UTC'), 'UTC');
  assert.equal(canonicalTimeZone('Mars/Olympus'), undefined);
  assert.equal(canonicalTimeZone(''), undefined);
});

test('Chatham Islands: +13:45 in southern summer, +12:45 in winter', () => {
  // Chatham Standard Time is UTC+12:45, with one hour of daylight saving from late September to early April.
  assert.equal(zonedTime(Date.UTC(2026, 0, 15), 'Pacific/Chatham').offsetMinutes, 13 * 60 + 45);
  assert.equal(zonedTime(Date.UTC(2026, 6, 15), 'Pacific/Chatham').offsetMinutes, 12 * 60 + 45);
  assert.equal(isDaylightSaving(Date.UTC(2026, 0, 15), 'Pacific/Chatham'), true);
  assert.equal(isDaylightSaving(Date.UTC(2026, 6, 15), 'Pacific/Chatham'), false);
});

test('a reading crosses the date line correctly', () => {
  // 2026-12-31T23:30Z is already 2027 in Kiribati (Line Islands, UTC+14).
  const t = zonedTime(Date.UTC(2026, 11, 31, 23, 30), 'Pacific/Kiritimati');
  assert.deepEqual([t.year, t.month, t.day, t.hour, t.minute, t.weekday, t.offsetMinutes], [2027, 1, 1, 13, 30, 'Friday', 14 * 60]);
});
