import { z } from 'zod';
import type { Provider } from '../../kit/index.js';

/** One search hit as every provider is normalised to. */
export const searchHitSchema = z.object({
  title: z.string(),
  url: z.string(),
  snippet: z.string(),
  published: z.string().optional().describe('Publication date or age as the provider states it'),
});
export type SearchHit = z.infer<typeof searchHitSchema>;

export interface SearchRequest {
  query: string;
  count: number;
}

/** A web search provider: skipped when `available` is false (its key or URL is not configured). */
export type SearchProvider = Provider<SearchHit[], SearchRequest>;
