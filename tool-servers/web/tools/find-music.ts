import { z } from 'zod';

import { defineTool, firstAvailable } from '../../kit/index.js';
import type { FallbackChainOptions } from '../fallback-chain.js';
import { MUSIC_KINDS, musicHitSchema, type MusicProvider } from '../music/types.js';

export const findMusicInput = z.object({
  query: z.string().trim().min(1).max(300).describe('Song, album or artist to look for'),
  type: z.enum(MUSIC_KINDS).default('track').describe('What kind of result: track, album or artist'),
  limit: z.number().int().min(1).max(25).default(5).describe('How many results (1-25)'),
});

export const findMusicOutput = z.object({
  provider: z.string().describe('The music catalogue that answered'),
  results: z.array(musicHitSchema),
});

/**
 * `find_music`: search music catalogues in the configured order until one has results.
 *
 * @example
 *   findMusicTool([itunes, deezer, musicbrainz], { deadlineMs: 20_000 })
 */
export function findMusicTool(providers: MusicProvider[], { deadlineMs, logger }: FallbackChainOptions) {
  return defineTool({
    name: 'find_music',
    description: 'Find songs, albums or artists: title, artist, album, release date, duration, a preview clip and a link.',
    input: findMusicInput,
    output: findMusicOutput,
    async run({ query, type, limit }, { signal }) {
      const isEmpty = (hits: unknown[]) => hits.length === 0;
      const request = { query, kind: type, limit };
      const { provider, value, failures } = await firstAvailable(providers, { signal, request, deadlineMs, isEmpty });
      if (failures.length > 0) logger?.info({ tool: 'find_music', provider, failures }, 'fell back');
      return { provider, results: value.slice(0, limit) };
    },
  });
}
