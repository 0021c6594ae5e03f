import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { asUpstreamError } from '../upstream-error.js';
import { parsePlaceQuery, pickPlace } from './place-query.js';

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
  population?: number;
}

// Enough same-named places for a qualifier to choose from: Open-Meteo lists many Dovers and Parises.
const CANDIDATES = 10;

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
        population: z.number().optional(),
      }),
    )
    .optional(),
});

/**
 * The place a name means, from Open-Meteo geocoding (keyless), or undefined when there is none.
 * Open-Meteo matches the bare name only, so "Austin, Texas" is searched as "Austin" and the
 * qualifiers after the comma choose among the results (see pickPlace); without qualifiers the
 * most populous place of that name wins. Provider failures become `upstream_unavailable` /
 * `timeout` ToolErrors.
 *
 * @example
 *   await geocodePlace('Austin, TX', { baseUrl: 'https://geocoding-api.open-meteo.com', timeoutMs: 5000, signal })
 *   // { name: 'Austin', country: 'United States', admin1: 'Texas', latitude: 30.26715, longitude: -97.74306, timezone: 'America/Chicago', … }
 */
export async function geocodePlace(text: string, options: GeocodingOptions): Promise<Place | undefined> {
  const { name, qualifiers } = parsePlaceQuery(text);
  if (!name) return undefined;
  const url = new URL(`${options.baseUrl}/v1/search`);
  url.search = new URLSearchParams({ name, count: String(CANDIDATES), language: 'en', format: 'json' }).toString();
  try {
    const body = searchSchema.parse(await httpJson(url, { timeoutMs: options.timeoutMs, maxBytes: 256 * 1024, signal: options.signal }));
    const places: Place[] = (body.results ?? []).map((r) => ({
      name: r.name,
      country: r.country,
      countryCode: r.country_code,
      admin1: r.admin1,
      latitude: r.latitude,
      longitude: r.longitude,
      timezone: r.timezone,
      population: r.population,
    }));
    return pickPlace(places, qualifiers);
  } catch (err) {
    throw asUpstreamError('Open-Meteo geocoding', err);
  }
}
