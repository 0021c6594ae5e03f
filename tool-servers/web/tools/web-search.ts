import { z } from 'zod';

import { defineTool, firstAvailable } from '../../kit/index.js';
import type { FallbackChainOptions } from '../fallback-chain.js';
import { searchHitSchema, type SearchProvider } from '../search/types.js';

export const webSearchInput = z.object({
  query: z.string().trim().min(1).max(400).describe('What to search the web for'),
  count: z.number().int().min(1).max(20).default(5).describe('How many results to return (1-20)'),
});

export const webSearchOutput = z.object({
  query: z.string(),
  provider: z.string().describe('The search provider that answered'),
  results: z.array(searchHitSchema),
});

/**
 * `web_search`: ask the configured providers in order; errors, timeouts, 429s and empty result
 * lists fall through to the next one, all within one deadline.
 *
 * @example
 *   webSearchTool([brave, tavily, duckduckgo], { deadlineMs: 20_000 }) // → a ToolDefinition for createServer
 */
export function webSearchTool(providers: SearchProvider[], { deadlineMs, logger }: FallbackChainOptions) {
  return defineTool({
    name: 'web_search',
    description: 'Search the web. Returns titles, URLs and snippets of the top results and names the provider that answered.',
    input: webSearchInput,
    output: webSearchOutput,
    async run({ query, count }, { signal }) {
      const isEmpty = (hits: unknown[]) => hits.length === 0;
      const { provider, value, failures } = await firstAvailable(providers, { signal, request: { query, count }, deadlineMs, isEmpty });
      if (failures.length > 0) logger?.info({ tool: 'web_search', provider, failures }, 'fell back');
      return { query, provider, results: value.slice(0, count) };
    },
  });
}
