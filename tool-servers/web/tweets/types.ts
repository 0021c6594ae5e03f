import { z } from 'zod';
import type { Provider } from '../../kit/index.js';

const tweetCore = z.object({
  id: z.string(),
  url: z.string(),
  author: z.object({ name: z.string(), handle: z.string() }),
  text: z.string(),
  created_at: z.string().describe('ISO 8601'),
  // A count the provider does not report is null, never a made-up 0.
  likes: z.number().int().nullable().describe('null when the provider does not report it'),
  retweets: z.number().int().nullable().describe('null when the provider does not report it'),
  replies: z.number().int().nullable().describe('null when the provider does not report it'),
  views: z.number().int().optional(),
  media: z.array(z.object({ type: z.enum(['photo', 'video', 'gif']), url: z.string() })),
});

/** A tweet as every provider is normalised to; a quoted tweet is one level deep. */
export const tweetSchema = tweetCore.extend({ quoted: tweetCore.optional() });
export type Tweet = z.input<typeof tweetSchema>;
export type QuotedTweet = z.input<typeof tweetCore>;

export interface TweetRequest {
  id: string;
  /** Screen name from the link, when there was one (FxTwitter wants some name in the path). */
  handle?: string;
}

/** A tweet provider. Throws ToolError `not_found` for deleted, private or unknown tweets. */
export type TweetProvider = Provider<Tweet, TweetRequest>;
