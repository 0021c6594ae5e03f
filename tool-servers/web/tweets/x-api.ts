import { z } from 'zod';
import { httpJson } from '../../kit/index.js';
import type { ProviderHttp } from '../provider-http.js';
import { tweetNotFound } from './not-found.js';
import type { Tweet, TweetProvider } from './types.js';

const xResponse = z.object({
  data: z
    .object({
      id: z.string(),
      text: z.string(),
      created_at: z.string(),
      author_id: z.string().optional(),
      public_metrics: z
        .object({
          retweet_count: z.number().int(),
          reply_count: z.number().int(),
          like_count: z.number().int(),
          impression_count: z.number().int().optional(),
        })
        .optional(),
      attachments: z.object({ media_keys: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
  includes: z
    .object({
      users: z.array(z.object({ id: z.string().optional(), name: z.string(), username: z.string() })).optional(),
      media: z
        .array(z.object({ media_key: z.string(), type: z.string(), url: z.string().optional(), preview_image_url: z.string().optional() }))
        .optional(),
    })
    .optional(),
  errors: z.array(z.object({ title: z.string().optional(), detail: z.string().optional(), type: z.string().optional() })).optional(),
});

/**
 * X API v2 `GET /2/tweets/{id}` with a bearer token; skipped without `X_BEARER_TOKEN`.
 * A missing or protected tweet is a 200 with only `errors` (resource-not-found / not-authorized).
 *
 * @example
 *   await createXApi({ baseUrl: 'https://api.x.com', bearerToken, http }).run(signal, { id: '20' })
 */
export function createXApi(options: { baseUrl: string; bearerToken?: string; http: ProviderHttp }): TweetProvider {
  return {
    name: 'x',
    available: Boolean(options.bearerToken),
    unavailableReason: 'no X_BEARER_TOKEN',
    async run(signal, { id }): Promise<Tweet> {
      const url = new URL(`${options.baseUrl}/2/tweets/${id}`);
      url.searchParams.set('expansions', 'author_id,attachments.media_keys');
      url.searchParams.set('tweet.fields', 'created_at,public_metrics');
      url.searchParams.set('user.fields', 'username,name');
      url.searchParams.set('media.fields', 'type,url,preview_image_url');
      const body = xResponse.parse(
        await httpJson(url, { headers: { authorization: `Bearer ${options.bearerToken ?? ''}` }, signal, ...options.http }),
      );
      if (!body.data) {
        const type = body.errors?.[0]?.type ?? '';
        if (type.endsWith('/resource-not-found')) throw tweetNotFound(id, 'not found');
        if (type.endsWith('/not-authorized-for-resource')) throw tweetNotFound(id, 'private');
        throw new Error('no tweet data');
      }
      const tweet = body.data;
      const author = body.includes?.users?.find((u) => u.id === tweet.author_id) ?? body.includes?.users?.[0];
      const metrics = tweet.public_metrics;
      const mediaByKey = new Map((body.includes?.media ?? []).map((m) => [m.media_key, m]));
      const handle = author?.username ?? 'i';
      return {
        id: tweet.id,
        url: `https://x.com/${handle}/status/${tweet.id}`,
        author: { name: author?.name ?? '', handle },
        text: tweet.text,
        created_at: tweet.created_at,
        likes: metrics?.like_count ?? null,
        retweets: metrics?.retweet_count ?? null,
        replies: metrics?.reply_count ?? null,
        ...(metrics?.impression_count !== undefined ? { views: metrics.impression_count } : {}),
        media: (tweet.attachments?.media_keys ?? []).flatMap((key) => {
          const m = mediaByKey.get(key);
          const mediaUrl = m?.url ?? m?.preview_image_url;
          if (!m || !mediaUrl) return [];
          return [
            {
              type: m.type === 'photo' ? ('photo' as const) : m.type === 'animated_gif' ? ('gif' as const) : ('video' as const),
              url: mediaUrl,
            },
          ];
        }),
      };
    },
  };
}
