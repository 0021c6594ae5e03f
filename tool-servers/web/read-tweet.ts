import { z } from 'zod';
import { defineTool, firstAvailable } from '../kit/index.js';
import type { FallbackChainOptions } from './fallback-chain.js';
import { parseTweetRef } from './tweets/tweet-ref.js';
import { tweetSchema, type Tweet, type TweetBackend } from './tweets/types.js';

export const readTweetInput = z.object({
  url: z.string().max(500).optional().describe('A tweet link on x.com, twitter.com, fxtwitter.com or vxtwitter.com (or a bare id)'),
  id: z.string().max(40).optional().describe('The numeric tweet id'),
});

export const readTweetOutput = tweetSchema.extend({ provider: z.string().describe('The provider that answered') });

/**
 * `read_tweet`: one tweet with author, counts, media and a quoted tweet, from the first
 * provider that answers. Deleted, private and unknown tweets are `not_found` at once.
 *
 * @example
 *   createReadTweetTool([fxtwitter, syndication, xApi], { deadlineMs: 20_000 })
 */
export function createReadTweetTool(backends: TweetBackend[], { deadlineMs, logger }: FallbackChainOptions) {
  return defineTool({
    name: 'read_tweet',
    description: 'Read one tweet (post on X) by link or id: author, text, date, likes, retweets, replies, views, media and the quoted tweet.',
    input: readTweetInput,
    output: readTweetOutput,
    async run(args, { signal }) {
      const ref = parseTweetRef(args);
      const { provider, value, failures } = await firstAvailable<Tweet>(
        backends.map((backend) => ({
          name: backend.name,
          available: backend.available,
          unavailableReason: backend.unavailableReason,
          run: (providerSignal) => backend.read({ ...ref, signal: providerSignal }),
        })),
        { signal, deadlineMs },
      );
      if (failures.length > 0) logger?.info({ tool: 'read_tweet', provider, failures }, 'fell back');
      return { ...value, provider };
    },
  });
}
