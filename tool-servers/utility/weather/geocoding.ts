import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { asUpstreamError } from '../upstream-error.js';

/** A place found by name. */
export interface Place {
  name: string;
  country?: string;
  countryCode?: string;
  /** First-level region (state, province). */
  admin1?: string;
  latitude: number;
  longitude: number;
  /** IANA zone, e.g. "Europe/Berlin". */
  timezone?: string;
}

export interface GeocodingOptions {
  baseUrl: string;
  timeoutMs: number;
  signal: AbortSignal;
}

// `{"results":[{id, name, latitude, longitude, elevation, country_code, country, admin1, timezone, population}]}`; no match → no `results`.
const searchSchema = z.object({
  results: z
    .array(
      z.object({
        name: z.string(),
        latitude: z.number(),
        longitude: z.number(),
        country: z.string().optional(),
        country_code: z.string().optional(),
        admin1: z.string().optional(),
        timezone: z.string().optional(),
      }),
    )
    .optional(),
});

/**
 * The best match for a place name from Open-Meteo geocoding (keyless), or undefined when there
 * is none. Provider failures become `upstream_unavailable` / `timeout` ToolErrors.
 *
 * @example
 *   await geocodePlace('Berlin', { baseUrl: 'https://geocoding-api.open-meteo.com', timeoutMs: 5000, signal })
 *   // { name: 'Berlin', country: 'Germany', latitude: 52.52437, longitude: 13.41053, timezone: 'Europe/Berlin', … }
 */
export async function geocodePlace(name: string, options: GeocodingOptions): Promise<Place | undefined> {
  const url = new URL(`${options.baseUrl}/v1/search`);
  url.search = new URLSearchParams({ name, count: '1', language: 'en', format: 'json' }).toString();
  try {
    const body = searchSchema.parse(await httpJson(url, { timeoutMs: options.timeoutMs, maxBytes: 256 * 1024, signal: options.signal }));
    const best = body.results?.[0];
    if (!best) return undefined;
    return {
      name: best.name,
      country: best.country,
      countryCode: best.country_code,
      admin1: best.admin1,
      latitude: best.latitude,
      longitude: best.longitude,
      timezone: best.timezone,
    };
  } catch (err) {
    throw asUpstreamError('Open-Meteo geocoding', err);
  }
}
