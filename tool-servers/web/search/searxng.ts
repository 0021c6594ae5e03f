import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import { htmlToPlainText } from '../plain-text.js';
import type { ProviderHttp } from '../provider-http.js';
import type { SearchProvider, SearchHit } from './types.js';

const searxngResponse = z.object({
  results: z.array(
    z.object({ url: z.string(), title: z.string().default(''), content: z.string().nullish(), publishedDate: z.string().nullish() }),
  ),
});

/**
 * An operator's SearXNG instance through its JSON API (`GET /search?format=json`; an instance
 * without JSON enabled answers 403). Skipped unless `SEARXNG_BASE_URL` is set.
 *
 * @example
 *   const searx = createSearxngSearch({ baseUrl: 'http://searx.intranet:8080', http })
 */
export function createSearxngSearch(options: { baseUrl?: string; http: ProviderHttp }): SearchProvider {
  return {
    name: 'searxng',
    available: Boolean(options.baseUrl),
    unavailableReason: 'no SEARXNG_BASE_URL',
    async run(signal, { query, count }): Promise<SearchHit[]> {
      const url = new URL(`${options.baseUrl}/search`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      const body = searxngResponse.parse(await httpJson(url, { signal, ...options.http }));
      // SearXNG has no count parameter: it returns a page, we keep the first `count`.
      return body.results.slice(0, count).map((r) => ({
        title: htmlToPlainText(r.title),
        url: r.url,
        snippet: htmlToPlainText(r.content ?? ''),
        ...(r.publishedDate ? { published: r.publishedDate } : {}),
      }));
    },
  };
}
