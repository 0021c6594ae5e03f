import { z } from 'zod';
import { httpJson, HttpStatusError } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import { tweetNotFound } from './not-found.js';
import type { QuotedTweet, Tweet, TweetProvider } from './types.js';

const mediaDetail = z.object({
  type: z.string(),
  media_url_https: z.string(),
  video_info: z
    .object({ variants: z.array(z.object({ content_type: z.string(), url: z.string(), bitrate: z.number().optional() })) })
    .optional(),
});
const syndicationTweet = z.object({
  __typename: z.string().optional(),
  id_str: z.string(),
  text: z.string(),
  created_at: z.string(),
  user: z.object({ name: z.string(), screen_name: z.string() }),
  favorite_count: z.number().int().optional(),
  conversation_count: z.number().int().optional(),
  retweet_count: z.number().int().optional(),
  mediaDetails: z.array(mediaDetail).optional(),
});
const syndicationResponse = syndicationTweet.extend({ quoted_tweet: syndicationTweet.optional() });

/**
 * The token the embed endpoint expects, derived from the id (formula from the public embed code).
 *
 * @example
 *   syndicationToken('20') // a short base-36 string
 */
export function syndicationToken(id: string): string {
  return ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, '');
}

/**
 * Twitter's keyless embed endpoint `GET /tweet-result?id=&lang=en&token=`. A deleted tweet is a
 * `TweetTombstone`; an unknown one is a 404 (or an empty object).
 *
 * @example
 *   await createSyndication({ baseUrl: 'https://cdn.syndication.twimg.com', http }).run(signal, { id: '20' })
 */
export function createSyndication(options: { baseUrl: string; http: ProviderHttp }): TweetProvider {
  return {
    name: 'syndication',
    available: true,
    async run(signal, { id }): Promise<Tweet> {
      const url = new URL(`${options.baseUrl}/tweet-result`);
      url.searchParams.set('id', id);
      url.searchParams.set('lang', 'en');
      url.searchParams.set('token', syndicationToken(id));
      let body: unknown;
      try {
        body = await httpJson(url, { signal, ...options.http });
      } catch (err) {
        if (err instanceof HttpStatusError && err.status === 404) throw tweetNotFound(id, 'not found');
        throw err;
      }
      const typename = (body as { __typename?: unknown } | null)?.__typename;
      if (typename === 'TweetTombstone') throw tweetNotFound(id, 'deleted or withheld');
      if (body === null || (typeof body === 'object' && Object.keys(body).length === 0)) throw tweetNotFound(id, 'not found');
      const parsed = syndicationResponse.parse(body);
      const { quoted_tweet: quoted, ...tweet } = parsed;
      return { ...toTweet(tweet), ...(quoted ? { quoted: toTweet(quoted) } : {}) };
    },
  };
}

function toTweet(t: z.infer<typeof syndicationTweet>): QuotedTweet {
  return {
    id: t.id_str,
    url: `https://x.com/${t.user.screen_name}/status/${t.id_str}`,
    author: { name: t.user.name, handle: t.user.screen_name },
    text: t.text,
    created_at: t.created_at,
    likes: t.favorite_count ?? null,
    // The embed payload carries no retweet count.
    retweets: t.retweet_count ?? null,
    replies: t.conversation_count ?? null,
    media: (t.mediaDetails ?? []).map((m) => {
      if (m.type === 'photo') return { type: 'photo' as const, url: m.media_url_https };
      const best = (m.video_info?.variants ?? [])
        .filter((v) => v.content_type === 'video/mp4')
        .sort((a, b) => (b.bitrate ?? 0) - (a.bitrate ?? 0))[0];
      return { type: m.type === 'animated_gif' ? ('gif' as const) : ('video' as const), url: best?.url ?? m.media_url_https };
    }),
  };
}
