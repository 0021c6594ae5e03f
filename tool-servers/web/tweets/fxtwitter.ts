import { z } from 'zod';
import { httpJson, HttpStatusError } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import { tweetNotFound } from './not-found.js';
import type { QuotedTweet, Tweet, TweetProvider } from './types.js';

const fxTweet = z.object({
  id: z.string(),
  url: z.string(),
  text: z.string(),
  author: z.object({ name: z.string(), screen_name: z.string() }),
  replies: z.number().int().nullish(),
  retweets: z.number().int().nullish(),
  likes: z.number().int().nullish(),
  views: z.number().int().nullish(),
  created_at: z.string(),
  created_timestamp: z.number().optional(),
  media: z
    .object({
      photos: z.array(z.object({ url: z.string() })).optional(),
      videos: z.array(z.object({ url: z.string(), type: z.string().optional() })).optional(),
    })
    .nullish(),
});
const fxResponse = z.object({
  code: z.number(),
  message: z.string(),
  tweet: fxTweet.extend({ quote: fxTweet.nullish() }).nullish(),
});
const fxError = z.object({ code: z.number(), message: z.string() });

/**
 * FxTwitter's keyless API: `GET /{screen_name}/status/{id}`. 404 `NOT_FOUND` and
 * 401 `PRIVATE_TWEET` are its "cannot be shown" answers; FxTwitter also answers 404 for some
 * tweets that exist, so read_tweet still asks the next provider.
 *
 * @example
 *   await createFxTwitter({ baseUrl: 'https://api.fxtwitter.com', http }).run(signal, { id: '20' })
 */
export function createFxTwitter(options: { baseUrl: string; http: ProviderHttp }): TweetProvider {
  return {
    name: 'fxtwitter',
    available: true,
    async run(signal, { id, handle }): Promise<Tweet> {
      let body: unknown;
      try {
        body = await httpJson(`${options.baseUrl}/${handle ?? 'i'}/status/${id}`, { signal, ...options.http });
      } catch (err) {
        if (err instanceof HttpStatusError && (err.status === 404 || err.status === 401)) {
          const said = fxError.safeParse(safeJson(err.body));
          const message = said.success ? said.data.message : '';
          if (err.status === 404 || message === 'PRIVATE_TWEET')
            throw tweetNotFound(id, message === 'PRIVATE_TWEET' ? 'private' : 'not found');
        }
        throw err;
      }
      const parsed = fxResponse.parse(body);
      if (!parsed.tweet) throw tweetNotFound(id, 'not found');
      const { quote, ...tweet } = parsed.tweet;
      return { ...toTweet(tweet), ...(quote ? { quoted: toTweet(quote) } : {}) };
    },
  };
}

function toTweet(t: z.infer<typeof fxTweet>): QuotedTweet {
  const created = t.created_timestamp !== undefined ? new Date(t.created_timestamp * 1000) : new Date(t.created_at);
  return {
    id: t.id,
    url: t.url,
    author: { name: t.author.name, handle: t.author.screen_name },
    text: t.text,
    created_at: Number.isNaN(created.getTime()) ? t.created_at : created.toISOString(),
    likes: t.likes ?? null,
    retweets: t.retweets ?? null,
    replies: t.replies ?? null,
    ...(typeof t.views === 'number' ? { views: t.views } : {}),
    media: [
      ...(t.media?.photos ?? []).map((p) => ({ type: 'photo' as const, url: p.url })),
      ...(t.media?.videos ?? []).map((v) => ({ type: v.type === 'gif' ? ('gif' as const) : ('video' as const), url: v.url })),
    ],
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
