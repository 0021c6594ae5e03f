import { z } from 'zod';
import { defineTool, ToolError } from '../../kit/index.js';
import { describeWeatherCode } from '../wmo-codes.js';
import { geocodePlace } from '../weather/geocoding.js';
import { fetchForecast } from '../weather/open-meteo.js';

export const getWeatherInput = z.object({
  location: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Place name such as "Berlin", "Austin, Texas" or "Paris, FR"; a region or country after a comma picks among places of the same name.',
    ),
  latitude: z.number().min(-90).max(90).optional().describe('With `longitude`, instead of `location`.'),
  longitude: z.number().min(-180).max(180).optional().describe('With `latitude`, instead of `location`.'),
  units: z.enum(['metric', 'imperial']).default('metric').describe('metric (°C, km/h) or imperial (°F, mph).'),
  days: z.number().int().min(0).max(16).default(3).describe('Days of daily forecast, 0 for current conditions only.'),
});

export const getWeatherOutput = z.object({
  location: z.object({
    name: z.string(),
    country: z.string().optional(),
    region: z.string().optional(),
    latitude: z.number(),
    longitude: z.number(),
    timezone: z.string(),
  }),
  units: z.object({ temperature: z.string(), wind_speed: z.string(), humidity: z.string() }),
  current: z.object({
    time: z.string(),
    temperature: z.number(),
    apparent_temperature: z.number(),
    humidity: z.number(),
    wind_speed: z.number(),
    weather_code: z.number(),
    description: z.string(),
  }),
  daily: z
    .array(
      z.object({
        date: z.string(),
        min: z.number().nullable(),
        max: z.number().nullable(),
        weather_code: z.number().nullable(),
        description: z.string().nullable(),
      }),
    )
    .optional(),
  provider: z.string(),
});

export interface WeatherDeps {
  forecastBaseUrl: string;
  geocodingBaseUrl: string;
  timeoutMs: number;
}

/**
 * `get_weather`: a place name is geocoded first (Open-Meteo geocoding), then the forecast is
 * read for its coordinates. WMO codes come back with words.
 *
 * @example
 *   getWeatherTool({ forecastBaseUrl: 'https://api.open-meteo.com', geocodingBaseUrl: 'https://geocoding-api.open-meteo.com', timeoutMs: 5000 })
 */
export function getWeatherTool(deps: WeatherDeps) {
  return defineTool({
    name: 'get_weather',
    description:
      'Current weather and a daily forecast for a place name or latitude/longitude (Open-Meteo): temperature, feels-like, humidity, wind, conditions in words. units: metric or imperial.',
    input: getWeatherInput,
    output: getWeatherOutput,
    async run(args, { signal }) {
      const hasCoordinates = args.latitude !== undefined || args.longitude !== undefined;
      if (args.location !== undefined && hasCoordinates) {
        throw new ToolError('invalid_arguments', 'Pass either `location` or `latitude` + `longitude`, not both.', { param: 'location' });
      }
      if (args.location === undefined && !hasCoordinates) {
        throw new ToolError('invalid_arguments', 'Pass `location` (a place name) or `latitude` + `longitude`.', { param: 'location' });
      }
      if (hasCoordinates && (args.latitude === undefined || args.longitude === undefined)) {
        const missing = args.latitude === undefined ? 'latitude' : 'longitude';
        throw new ToolError(
          'invalid_arguments',
          `\`${missing}\` is required with \`${missing === 'latitude' ? 'longitude' : 'latitude'}\`.`,
          { param: missing },
        );
      }

      let place: { name: string; country?: string; region?: string; latitude: number; longitude: number } | undefined;
      if (args.location !== undefined) {
        const found = await geocodePlace(args.location, { baseUrl: deps.geocodingBaseUrl, timeoutMs: deps.timeoutMs, signal });
        if (!found) throw new ToolError('not_found', `No place called "${args.location}" was found.`, { param: 'location' });
        place = { name: found.name, country: found.country, region: found.admin1, latitude: found.latitude, longitude: found.longitude };
      }
      const latitude = place?.latitude ?? (args.latitude as number);
      const longitude = place?.longitude ?? (args.longitude as number);
      const forecast = await fetchForecast(latitude, longitude, {
        baseUrl: deps.forecastBaseUrl,
        timeoutMs: deps.timeoutMs,
        signal,
        units: args.units,
        days: args.days,
      });
      const daily = forecast.daily?.time.map((date, i) => {
        const code = forecast.daily?.weather_code[i] ?? null;
        return {
          date,
          min: forecast.daily?.temperature_2m_min[i] ?? null,
          max: forecast.daily?.temperature_2m_max[i] ?? null,
          weather_code: code,
          description: code === null ? null : describeWeatherCode(code),
        };
      });
      return {
        location: {
          name: place?.name ?? `${latitude}, ${longitude}`,
          ...(place?.country ? { country: place.country } : {}),
          ...(place?.region ? { region: place.region } : {}),
          latitude: place?.latitude ?? forecast.latitude,
          longitude: place?.longitude ?? forecast.longitude,
          timezone: forecast.timezone,
        },
        units: {
          temperature: forecast.current_units.temperature_2m,
          wind_speed: forecast.current_units.wind_speed_10m,
          humidity: forecast.current_units.relative_humidity_2m ?? '%',
        },
        current: {
          time: forecast.current.time,
          temperature: forecast.current.temperature_2m,
          apparent_temperature: forecast.current.apparent_temperature,
          humidity: forecast.current.relative_humidity_2m,
          wind_speed: forecast.current.wind_speed_10m,
          weather_code: forecast.current.weather_code,
          description: describeWeatherCode(forecast.current.weather_code),
        },
        ...(daily && args.days > 0 ? { daily } : {}),
        provider: 'Open-Meteo',
      };
    },
  });
}
