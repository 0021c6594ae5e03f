import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { asUpstreamError } from '../upstream-error.js';

export type Units = 'metric' | 'imperial';

export interface ForecastOptions {
  baseUrl: string;
  timeoutMs: number;
  signal: AbortSignal;
  units: Units;
  /** Days of daily forecast, 0 for none. */
  days: number;
}

const CURRENT_FIELDS = 'temperature_2m,apparent_temperature,relative_humidity_2m,wind_speed_10m,weather_code';
const DAILY_FIELDS = 'temperature_2m_max,temperature_2m_min,weather_code';

const forecastSchema = z.object({
  latitude: z.number(),
  longitude: z.number(),
  timezone: z.string(),
  utc_offset_seconds: z.number().optional(),
  current_units: z.object({ temperature_2m: z.string(), wind_speed_10m: z.string(), relative_humidity_2m: z.string().optional() }),
  current: z.object({
    time: z.string(),
    temperature_2m: z.number(),
    apparent_temperature: z.number(),
    relative_humidity_2m: z.number(),
    wind_speed_10m: z.number(),
    weather_code: z.number().int(),
  }),
  daily: z
    .object({
      time: z.array(z.string()),
      temperature_2m_max: z.array(z.number().nullable()),
      temperature_2m_min: z.array(z.number().nullable()),
      weather_code: z.array(z.number().int().nullable()),
    })
    .optional(),
});

export type Forecast = z.infer<typeof forecastSchema>;

/**
 * Current conditions and a daily forecast from Open-Meteo `/v1/forecast` (keyless), in the
 * place's own time zone (`timezone=auto`). Imperial units ask Open-Meteo for °F and mph.
 *
 * @example
 *   await fetchForecast(52.52, 13.41, { baseUrl: 'https://api.open-meteo.com', timeoutMs: 5000, signal, units: 'metric', days: 3 })
 */
export async function fetchForecast(latitude: number, longitude: number, options: ForecastOptions): Promise<Forecast> {
  const params = new URLSearchParams({
    latitude: String(latitude),
    longitude: String(longitude),
    current: CURRENT_FIELDS,
    timezone: 'auto',
  });
  if (options.days > 0) {
    params.set('daily', DAILY_FIELDS);
    params.set('forecast_days', String(options.days));
  }
  if (options.units === 'imperial') {
    params.set('temperature_unit', 'fahrenheit');
    params.set('wind_speed_unit', 'mph');
  }
  const url = new URL(`${options.baseUrl}/v1/forecast`);
  url.search = params.toString();
  try {
    return forecastSchema.parse(await httpJson(url, { timeoutMs: options.timeoutMs, maxBytes: 512 * 1024, signal: options.signal }));
  } catch (err) {
    throw asUpstreamError('Open-Meteo forecast', err);
  }
}
