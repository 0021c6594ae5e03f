import { ToolError } from '../../kit/index.js';

export interface TweetRef {
  id: string;
  handle?: string;
}

const TWEET_HOSTS = /^(?:www\.|mobile\.)?(?:x\.com|twitter\.com|fxtwitter\.com|vxtwitter\.com|fixupx\.com|fixvx\.com)$/i;
const STATUS_PATH = /^\/(?:([A-Za-z0-9_]{1,15})\/status(?:es)?|i\/web\/status|i\/status)\/(\d{1,20})(?:\/|$)/;
const BARE_ID = /^\d{1,20}$/;

/**
 * Find the tweet id (and screen name) in a link on x.com, twitter.com, fxtwitter.com or
 * vxtwitter.com, or accept a bare numeric id. Given both, the link wins: it also carries the
 * screen name (read_tweet's input schema has already refused a pair naming different tweets).
 *
 * @example
 *   parseTweetRef('https://x.com/jack/status/20')   // { id: '20', handle: 'jack' }
 *   parseTweetRef('20')                              // { id: '20' }
 */
export function parseTweetRef(input: { url?: string; id?: string }): TweetRef {
  const text = (input.url ?? '').trim();
  if (text === '') {
    if (input.id === undefined) throw new ToolError('invalid_arguments', 'Give either url or id.', { param: 'url' });
    const id = input.id.trim();
    if (!BARE_ID.test(id)) throw new ToolError('invalid_arguments', 'id: a tweet id is a number of up to 20 digits', { param: 'id' });
    return { id };
  }
  if (BARE_ID.test(text)) return { id: text };
  let url: URL;
  try {
    url = new URL(/^https?:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw new ToolError('invalid_arguments', 'url: not a tweet link', { param: 'url' });
  }
  const match = TWEET_HOSTS.test(url.hostname) ? STATUS_PATH.exec(url.pathname) : null;
  if (!match)
    throw new ToolError('invalid_arguments', 'url: not a tweet link (x.com, twitter.com, fxtwitter.com or vxtwitter.com …/status/<id>)', {
      param: 'url',
    });
  return { id: match[2], ...(match[1] ? { handle: match[1] } : {}) };
}
