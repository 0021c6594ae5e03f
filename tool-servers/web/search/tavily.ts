import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import type { SearchProvider, SearchHit } from './types.js';

const tavilyResponse = z.object({
  results: z.array(
    z.object({ title: z.string(), url: z.string(), content: z.string().default(''), published_date: z.string().optional() }),
  ),
});

/**
 * Tavily (`POST /search`, bearer key `tvly-…`).
 *
 * @example
 *   const tavily = createTavilySearch({ baseUrl: 'https://api.tavily.com', apiKey, http })
 */
export function createTavilySearch(options: { baseUrl: string; apiKey?: string; http: ProviderHttp }): SearchProvider {
  return {
    name: 'tavily',
    available: Boolean(options.apiKey),
    unavailableReason: 'no TAVILY_API_KEY',
    async run(signal, { query, count }): Promise<SearchHit[]> {
      const body = tavilyResponse.parse(
        await httpJson(`${options.baseUrl}/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey ?? ''}` },
          body: { query, max_results: count, search_depth: 'basic' },
          signal,
          ...options.http,
        }),
      );
      return body.results.map((r) => ({
        title: r.title,
        url: r.url,
        snippet: r.content.trim(),
        ...(r.published_date ? { published: r.published_date } : {}),
      }));
    },
  };
}
