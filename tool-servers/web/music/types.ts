import { z } from 'zod';
import type { Provider } from '../../kit/index.js';

export const MUSIC_KINDS = ['track', 'album', 'artist'] as const;
export type MusicKind = (typeof MUSIC_KINDS)[number];

/** One music result as every provider is normalised to. For artists, `title` is the artist's name. */
export const musicHitSchema = z.object({
  title: z.string(),
  artist: z.string(),
  album: z.string().optional(),
  release_date: z.string().optional(),
  duration_ms: z.number().int().optional(),
  preview_url: z.string().optional(),
  url: z.string(),
  artwork_url: z.string().optional(),
});
export type MusicHit = z.input<typeof musicHitSchema>;

export interface MusicRequest {
  query: string;
  kind: MusicKind;
  limit: number;
}

/** A music catalogue. */
export type MusicProvider = Provider<MusicHit[], MusicRequest>;

/** `2005-03-01T08:00:00Z` → `2005-03-01`; partial dates (`2005`, `2005-03`) stay as given. */
export function releaseDate(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  return /^\d{4}-\d{2}-\d{2}T/.test(value) ? value.slice(0, 10) : value;
}
