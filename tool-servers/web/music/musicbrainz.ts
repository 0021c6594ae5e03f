import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import { createMinInterval } from './min-interval.js';
import { releaseDate, type MusicProvider, type MusicHit, type MusicKind } from './types.js';

const ENTITY: Record<MusicKind, string> = { track: 'recording', album: 'release-group', artist: 'artist' };
// Results link to the public site even when the API is a mirror.
const SITE = 'https://musicbrainz.org';

const artistCredit = z.array(z.object({ name: z.string(), joinphrase: z.string().optional() })).optional();
const recording = z.object({
  id: z.string(),
  title: z.string(),
  length: z.number().nullish(),
  'first-release-date': z.string().optional(),
  'artist-credit': artistCredit,
  releases: z.array(z.object({ title: z.string() })).optional(),
});
const releaseGroup = z.object({
  id: z.string(),
  title: z.string(),
  'first-release-date': z.string().optional(),
  'artist-credit': artistCredit,
});
const artist = z.object({ id: z.string(), name: z.string() });
const musicbrainzResponse = z.object({
  recordings: z.array(recording).optional(),
  'release-groups': z.array(releaseGroup).optional(),
  artists: z.array(artist).optional(),
});

/** MusicBrainz's own limit: one request per second per client. */
export const MUSICBRAINZ_INTERVAL_MS = 1000;

/**
 * MusicBrainz search `GET /ws/2/{recording|release-group|artist}/?query=&fmt=json&limit=` with a
 * descriptive User-Agent, paced to one request per second by an in-process limiter. A caller is
 * queued no longer than the provider timeout; past that it is refused as rate limited, so the
 * fallback chain moves on instead of waiting.
 *
 * @example
 *   createMusicBrainz({ baseUrl: 'https://musicbrainz.org', userAgent: 'MyApp/1.0 ( ops@example.com )', http })
 */
export function createMusicBrainz(options: { baseUrl: string; userAgent: string; http: ProviderHttp; intervalMs?: number }): MusicProvider {
  const pace = createMinInterval(options.intervalMs ?? MUSICBRAINZ_INTERVAL_MS, { maxWaitMs: options.http.timeoutMs });
  return {
    name: 'musicbrainz',
    available: true,
    async run(signal, { query, kind, limit }): Promise<MusicHit[]> {
      const url = new URL(`${options.baseUrl}/ws/2/${ENTITY[kind]}/`);
      url.searchParams.set('query', query);
      url.searchParams.set('fmt', 'json');
      url.searchParams.set('limit', String(limit));
      await pace(signal);
      const body = musicbrainzResponse.parse(
        await httpJson(url, { headers: { 'user-agent': options.userAgent }, signal, ...options.http }),
      );
      if (kind === 'artist') return (body.artists ?? []).map((a) => ({ title: a.name, artist: a.name, url: `${SITE}/artist/${a.id}` }));
      if (kind === 'album') {
        return (body['release-groups'] ?? []).map((g) => ({
          title: g.title,
          artist: credit(g['artist-credit']),
          ...(g['first-release-date'] ? { release_date: releaseDate(g['first-release-date']) } : {}),
          url: `${SITE}/release-group/${g.id}`,
        }));
      }
      return (body.recordings ?? []).map((r) => ({
        title: r.title,
        artist: credit(r['artist-credit']),
        ...(r.releases?.[0] ? { album: r.releases[0].title } : {}),
        ...(r['first-release-date'] ? { release_date: releaseDate(r['first-release-date']) } : {}),
        ...(typeof r.length === 'number' ? { duration_ms: Math.round(r.length) } : {}),
        url: `${SITE}/recording/${r.id}`,
      }));
    },
  };
}

/** "Artist A feat. Artist B" from MusicBrainz's credit list and its join phrases. */
function credit(credits: z.infer<typeof artistCredit>): string {
  return (credits ?? [])
    .map((c) => `${c.name}${c.joinphrase ?? ''}`)
    .join('')
    .trim();
}
