import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import { releaseDate, type MusicProvider, type MusicHit, type MusicKind } from './types.js';

const ENTITY: Record<MusicKind, string> = { track: 'song', album: 'album', artist: 'musicArtist' };

const itunesResult = z.object({
  wrapperType: z.string().optional(),
  trackName: z.string().optional(),
  artistName: z.string().optional(),
  collectionName: z.string().optional(),
  releaseDate: z.string().optional(),
  trackTimeMillis: z.number().optional(),
  previewUrl: z.string().optional(),
  trackViewUrl: z.string().optional(),
  collectionViewUrl: z.string().optional(),
  artistLinkUrl: z.string().optional(),
  artworkUrl100: z.string().optional(),
});
const itunesResponse = z.object({ resultCount: z.number().optional(), results: z.array(itunesResult) });

/**
 * iTunes Search `GET /search?term=&media=music&entity=song|album|musicArtist&limit=` (keyless;
 * JSON served as `text/javascript`).
 *
 * @example
 *   await createItunes({ baseUrl: 'https://itunes.apple.com', http }).run(signal, { query: 'jack johnson', kind: 'track', limit: 5 })
 */
export function createItunes(options: { baseUrl: string; http: ProviderHttp }): MusicProvider {
  return {
    name: 'itunes',
    available: true,
    async run(signal, { query, kind, limit }): Promise<MusicHit[]> {
      const url = new URL(`${options.baseUrl}/search`);
      url.searchParams.set('term', query);
      url.searchParams.set('media', 'music');
      url.searchParams.set('entity', ENTITY[kind]);
      url.searchParams.set('limit', String(limit));
      const body = itunesResponse.parse(await httpJson(url, { signal, ...options.http }));
      return body.results.flatMap((r): MusicHit[] => {
        const artist = r.artistName ?? '';
        if (kind === 'artist') return r.artistLinkUrl ? [{ title: artist, artist, url: r.artistLinkUrl }] : [];
        const title = kind === 'album' ? r.collectionName : r.trackName;
        const link = kind === 'album' ? r.collectionViewUrl : (r.trackViewUrl ?? r.collectionViewUrl);
        if (!title || !link) return [];
        return [
          {
            title,
            artist,
            ...(kind === 'track' && r.collectionName ? { album: r.collectionName } : {}),
            ...(releaseDate(r.releaseDate) ? { release_date: releaseDate(r.releaseDate) } : {}),
            ...(r.trackTimeMillis !== undefined ? { duration_ms: Math.round(r.trackTimeMillis) } : {}),
            ...(r.previewUrl ? { preview_url: r.previewUrl } : {}),
            url: link,
            ...(r.artworkUrl100 ? { artwork_url: r.artworkUrl100 } : {}),
          },
        ];
      });
    },
  };
}
