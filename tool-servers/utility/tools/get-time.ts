import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { geocodePlace } from '../weather/geocoding.js';
import { canonicalTimeZone, formatLocalDateTime, formatUtcOffset, isDaylightSaving, zonedTime } from '../time/zone-time.js';

export const getTimeInput = z.object({
  timezone: z.string().trim().min(1).max(64).optional().describe('IANA time zone such as "Europe/Berlin" or "America/New_York".'),
  location: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Place name such as "Tokyo" or "Portland, Oregon" (a region or country after a comma picks among places of the same name); its time zone is looked up.',
    ),
  at: z
    .string()
    .trim()
    .regex(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/,
      'must be an ISO 8601 instant with Z or an offset, e.g. "2026-03-08T07:00:00Z"',
    )
    .optional()
    .describe('Instant to convert instead of now, e.g. "2026-03-08T07:00:00Z".'),
});

export const getTimeOutput = z.object({
  timezone: z.string(),
  iso: z.string(),
  local_time: z.string(),
  utc_offset: z.string(),
  unix: z.number().int(),
  day_of_week: z.string(),
  is_dst: z.boolean(),
  location: z
    .object({
      name: z.string(),
      country: z.string().optional(),
      region: z.string().optional(),
      latitude: z.number(),
      longitude: z.number(),
    })
    .optional(),
});

export interface TimeDeps {
  geocodingBaseUrl: string;
  timeoutMs: number;
  /** The clock; tests pass a fixed one. */
  now: () => number;
}

const HOW_TO_NAME_A_ZONE =
  'Name an IANA time zone as Area/City, e.g. "Europe/Berlin", "America/New_York" or "Asia/Kolkata" (or "UTC"), or pass `location` with a place name.';

/**
 * `get_time`: the time in an IANA zone (computed locally with Intl, no network), in the zone of
 * a named place (geocoded), or in UTC when neither is given.
 *
 * @example
 *   getTimeTool({ geocodingBaseUrl: 'https://geocoding-api.open-meteo.com', timeoutMs: 5000, now: Date.now })
 */
export function getTimeTool(deps: TimeDeps) {
  return defineTool({
    name: 'get_time',
    description:
      'Current date and time in an IANA time zone (e.g. "Asia/Tokyo") or at a named place, with the UTC offset (e.g. "+05:30") and whether DST is in effect. With neither, UTC. Optional `at` converts a given instant instead of now.',
    input: getTimeInput,
    output: getTimeOutput,
    async run(args, { signal }) {
      if (args.timezone !== undefined && args.location !== undefined) {
        throw new ToolError('invalid_arguments', 'Pass either `timezone` or `location`, not both.', { param: 'location' });
      }
      const instantMs = args.at !== undefined ? Date.parse(args.at) : deps.now();
      if (!Number.isFinite(instantMs)) {
        throw new ToolError('invalid_arguments', `at: "${args.at}" is not a real date and time.`, { param: 'at' });
      }

      let zone = 'UTC';
      let location: z.infer<typeof getTimeOutput>['location'];
      if (args.timezone !== undefined) {
        const canonical = canonicalTimeZone(args.timezone);
        if (!canonical)
          throw new ToolError('invalid_arguments', `Unknown time zone "${args.timezone}". ${HOW_TO_NAME_A_ZONE}`, { param: 'timezone' });
        zone = canonical;
      } else if (args.location !== undefined) {
        const place = await geocodePlace(args.location, { baseUrl: deps.geocodingBaseUrl, timeoutMs: deps.timeoutMs, signal });
        if (!place) throw new ToolError('not_found', `No place called "${args.location}" was found.`, { param: 'location' });
        const canonical = place.timezone ? canonicalTimeZone(place.timezone) : undefined;
        if (!canonical) throw new ToolError('not_found', `No time zone is known for "${place.name}".`, { param: 'location' });
        zone = canonical;
        location = {
          name: place.name,
          ...(place.country ? { country: place.country } : {}),
          ...(place.admin1 ? { region: place.admin1 } : {}),
          latitude: place.latitude,
          longitude: place.longitude,
        };
      }

      const time = zonedTime(instantMs, zone);
      const offset = formatUtcOffset(time.offsetMinutes);
      return {
        timezone: zone,
        iso: `${formatLocalDateTime(time, 'T')}${offset}`,
        local_time: formatLocalDateTime(time, ' '),
        utc_offset: offset,
        unix: Math.floor(instantMs / 1000),
        day_of_week: time.weekday,
        is_dst: isDaylightSaving(instantMs, zone),
        ...(location ? { location } : {}),
      };
    },
  });
}
