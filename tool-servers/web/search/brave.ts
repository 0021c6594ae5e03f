import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { htmlToPlainText } from '../plain-text.js';
import type { ProviderHttp } from '../provider-http.js';
import type { SearchProvider, SearchHit } from './types.js';

const braveResponse = z.object({
  web: z
    .object({
      results: z.array(
        z.object({
          title: z.string(),
          url: z.string(),
          description: z.string().default(''),
          age: z.string().optional(),
          page_age: z.string().optional(),
        }),
      ),
    })
    .optional(),
});

/**
 * Brave Search API (`GET /res/v1/web/search`, key in `X-Subscription-Token`).
 *
 * @example
 *   const brave = createBraveSearch({ baseUrl: 'https://api.search.brave.com', apiKey, http })
 *   await brave.run(signal, { query: 'koa', count: 5 })
 */
export function createBraveSearch(options: { baseUrl: string; apiKey?: string; http: ProviderHttp }): SearchProvider {
  return {
    name: 'brave',
    available: Boolean(options.apiKey),
    unavailableReason: 'no BRAVE_API_KEY',
    async run(signal, { query, count }): Promise<SearchHit[]> {
      const url = new URL(`${options.baseUrl}/res/v1/web/search`);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(count));
      const body = braveResponse.parse(
        await httpJson(url, {
          headers: { accept: 'application/json', 'x-subscription-token': options.apiKey ?? '' },
          signal,
          ...options.http,
        }),
      );
      // A query that matches nothing comes back without a `web` block.
      return (body.web?.results ?? []).map((r) => ({
        title: htmlToPlainText(r.title),
        url: r.url,
        snippet: htmlToPlainText(r.description),
        ...((r.age ?? r.page_age) ? { published: r.age ?? r.page_age } : {}),
      }));
    },
  };
}
