import { z } from 'zod';
import { httpJson, ToolError } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import type { MusicProvider, MusicHit, MusicKind } from './types.js';

const PATH: Record<MusicKind, string> = { track: '/search', album: '/search/album', artist: '/search/artist' };

const deezerItem = z.object({
  title: z.string().optional(),
  name: z.string().optional(),
  link: z.string(),
  duration: z.number().optional(),
  preview: z.string().optional(),
  cover_medium: z.string().optional(),
  picture_medium: z.string().optional(),
  artist: z.object({ name: z.string() }).optional(),
  album: z.object({ title: z.string(), cover_medium: z.string().optional() }).optional(),
});
const deezerResponse = z.union([
  z.object({ error: z.object({ type: z.string().optional(), message: z.string().optional(), code: z.number().optional() }) }),
  z.object({ data: z.array(deezerItem), total: z.number().optional() }),
]);

/**
 * Deezer search `GET /search`, `/search/album`, `/search/artist` (keyless). Deezer reports
 * errors (quota, bad parameter) as HTTP 200 with an `error` object, which counts as a failure.
 *
 * @example
 *   await createDeezer({ baseUrl: 'https://api.deezer.com', http }).run(signal, { query: 'eminem', kind: 'track', limit: 5 })
 */
export function createDeezer(options: { baseUrl: string; http: ProviderHttp }): MusicProvider {
  return {
    name: 'deezer',
    available: true,
    async run(signal, { query, kind, limit }): Promise<MusicHit[]> {
      const url = new URL(`${options.baseUrl}${PATH[kind]}`);
      url.searchParams.set('q', query);
      url.searchParams.set('limit', String(limit));
      const body = deezerResponse.parse(await httpJson(url, { signal, ...options.http }));
      if ('error' in body) {
        throw new ToolError(
          'upstream_unavailable',
          `error ${body.error.code ?? '?'} (${body.error.message ?? body.error.type ?? 'unknown'})`,
        );
      }
      return body.data.map((item): MusicHit => {
        if (kind === 'artist') {
          const name = item.name ?? '';
          return { title: name, artist: name, url: item.link, ...(item.picture_medium ? { artwork_url: item.picture_medium } : {}) };
        }
        const artwork = kind === 'album' ? item.cover_medium : item.album?.cover_medium;
        return {
          title: item.title ?? '',
          artist: item.artist?.name ?? '',
          ...(kind === 'track' && item.album ? { album: item.album.title } : {}),
          ...(item.duration !== undefined && kind === 'track' ? { duration_ms: Math.round(item.duration * 1000) } : {}),
          ...(item.preview ? { preview_url: item.preview } : {}),
          url: item.link,
          ...(artwork ? { artwork_url: artwork } : {}),
        };
      });
    },
  };
}
