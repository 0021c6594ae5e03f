import { z } from 'zod';

import { defineTool, firstAvailable, ToolError } from '../../kit/index.js';
import type { FallbackChainOptions } from '../fallback-chain.js';
import { parseTweetRef } from '../tweets/tweet-ref.js';
import { tweetSchema, type TweetProvider } from '../tweets/types.js';

export const readTweetInput = z
  .object({
    url: z.string().max(500).optional().describe('A tweet link on x.com, twitter.com, fxtwitter.com or vxtwitter.com (or a bare id)'),
    id: z.string().max(40).optional().describe('The numeric tweet id'),
  })
  // Silently preferring one of two different tweets would answer a question nobody asked.
  .refine((args) => args.url === undefined || args.id === undefined || sameTweet(args.url, args.id), {
    path: ['id'],
    message: 'url and id name different tweets; give one of them',
  });

export const readTweetOutput = tweetSchema.extend({ provider: z.string().describe('The provider that answered') });

/**
 * `read_tweet`: one tweet with author, counts, media and a quoted tweet, from the first
 * provider that answers. A provider saying "not found" does not end the search (FxTwitter answers
 * 404 for tweets that exist): the tweet is `not_found` only when every provider asked said so.
 *
 * @example
 *   readTweetTool([fxtwitter, syndication, xApi], { deadlineMs: 20_000 })
 */
export function readTweetTool(providers: TweetProvider[], { deadlineMs, logger }: FallbackChainOptions) {
  return defineTool({
    name: 'read_tweet',
    description:
      'Read one tweet (post on X) by link or id: author, text, date, likes, retweets, replies, views, media and the quoted tweet.',
    input: readTweetInput,
    output: readTweetOutput,
    async run(args, { signal }) {
      const isNotFound = (err: unknown) => err instanceof ToolError && err.code === 'not_found';
      const request = parseTweetRef(args);
      const { provider, value, failures } = await firstAvailable(providers, { signal, request, deadlineMs, isNotFound });
      if (failures.length > 0) logger?.info({ tool: 'read_tweet', provider, failures }, 'fell back');
      return { ...value, provider };
    },
  });
}

function sameTweet(url: string, id: string): boolean {
  try {
    return parseTweetRef({ url }).id === id.trim();
  } catch {
    return false;
  }
}
