/** Wall-clock time in an IANA zone, computed locally with Intl (no network, no tz database of our own). */
export interface ZonedTime {
  /** Canonical zone name as Intl spells it, e.g. "Asia/Kolkata". */
  timezone: string;
  /** Minutes east of UTC at this instant. */
  offsetMinutes: number;
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** English weekday name. */
  weekday: string;
}

// ICU (and so Intl) still canonicalizes some zones to names IANA has since replaced; answer with
// the current IANA name people expect. Intl accepts both spellings as input.
const CURRENT_IANA_NAMES: Readonly<Record<string, string>> = {
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * The canonical spelling of an IANA zone (case fixed, links resolved, current names), or
 * undefined when Intl does not know it.
 *
 * @example
 *   canonicalTimeZone('asia/calcutta') // 'Asia/Kolkata'
 *   canonicalTimeZone('Mars/Olympus') // undefined
 */
export function canonicalTimeZone(zone: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return CURRENT_IANA_NAMES[resolved] ?? resolved;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'long',
      era: 'short',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/**
 * The wall-clock reading and UTC offset in `zone` at `instantMs`. The offset is the difference
 * between the wall clock read as if it were UTC and the instant itself, so it is whatever the
 * zone's rules say (half hours, DST) with no table of ours to go stale.
 *
 * @example
 *   zonedTime(Date.parse('2026-03-08T07:00:00Z'), 'America/New_York').offsetMinutes // -240
 */
export function zonedTime(instantMs: number, zone: string): ZonedTime {
  const wholeSecond = Math.floor(instantMs / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const part of formatterFor(zone).formatToParts(wholeSecond)) parts[part.type] = part.value;
  const era = parts.era === 'BC' || parts.era === 'B' ? -1 : 1;
  const year = era === 1 ? Number(parts.year) : 1 - Number(parts.year);
  const fields = {
    year,
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
  const wallAsUtc = new Date(0);
  wallAsUtc.setUTCFullYear(fields.year, fields.month - 1, fields.day);
  wallAsUtc.setUTCHours(fields.hour, fields.minute, fields.second, 0);
  const offsetMinutes = Math.round((wallAsUtc.getTime() - wholeSecond) / 60_000);
  return { timezone: zone, offsetMinutes, weekday: parts.weekday, ...fields };
}

/**
 * An offset in minutes as `+05:30` / `-04:00` / `+00:00`.
 *
 * @example
 *   formatUtcOffset(330) // '+05:30'
 */
export function formatUtcOffset(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * Whether the zone is on its summer (daylight) offset at the instant: true when the zone has two
 * offsets that year and this is the larger one; false for zones without DST.
 */
export function isDaylightSaving(instantMs: number, zone: string): boolean {
  const year = new Date(instantMs).getUTCFullYear();
  const january = zonedTime(Date.UTC(year, 0, 1), zone).offsetMinutes;
  const july = zonedTime(Date.UTC(year, 6, 1), zone).offsetMinutes;
  if (january === july) return false;
  return zonedTime(instantMs, zone).offsetMinutes === Math.max(january, july);
}

/** `2026-03-08T01:59:00` from a zoned reading. */
export function formatLocalDateTime(time: ZonedTime, separator: 'T' | ' '): string {
  const year = time.year >= 0 ? String(time.year).padStart(4, '0') : `-${String(-time.year).padStart(6, '0')}`;
  return `${year}-${pad(time.month)}-${pad(time.day)}${separator}${pad(time.hour)}:${pad(time.minute)}:${pad(time.second)}`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
