import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { createServer, type Logger } from '../kit/index.js';
import { parseWebConfig, type MusicProviderName, type SearchProviderName, type TweetProviderName } from './config.js';
import type { ProviderHttp } from './provider-http.js';
import type { FallbackChainOptions } from './fallback-chain.js';
import { webSearchTool } from './tools/web-search.js';
import { webExtractTool } from './tools/web-extract.js';
import { readTweetTool } from './tools/read-tweet.js';
import { findMusicTool } from './tools/find-music.js';
import { createBraveSearch } from './search/brave.js';
import { createTavilySearch } from './search/tavily.js';
import { createSearxngSearch } from './search/searxng.js';
import { createDuckDuckGoSearch } from './search/duckduckgo.js';
import { createFxTwitter } from './tweets/fxtwitter.js';
import { createSyndication } from './tweets/syndication.js';
import { createXApi } from './tweets/x-api.js';
import { createItunes } from './music/itunes.js';
import { createDeezer } from './music/deezer.js';
import { createMusicBrainz } from './music/musicbrainz.js';
import type { SearchProvider } from './search/types.js';
import type { TweetProvider } from './tweets/types.js';
import type { MusicProvider } from './music/types.js';
import type { LookupFn } from './extract/ssrf-guard.js';
import type { ConnectFn } from './extract/guarded-fetch.js';

export interface WebServerOptions {
  env: Record<string, string | undefined>;
  logger?: Logger;
  /** Test seams for web_extract: DNS resolution and socket opening. */
  lookup?: LookupFn;
  connect?: ConnectFn;
}

/**
 * The `web` tool server: web_search, web_extract, read_tweet and find_music, each falling back
 * across the providers its env names, in that order. Throws on a bad env value, naming it.
 *
 * @example
 *   const server = createWebServer({ env: { BRAVE_API_KEY: 'k' }, logger })
 */
export function createWebServer(options: WebServerOptions): Server {
  const config = parseWebConfig(options.env);
  const http: ProviderHttp = { timeoutMs: config.providerTimeoutMs, maxBytes: config.providerMaxBytes };
  const chain: FallbackChainOptions = { deadlineMs: config.fallbackDeadlineMs, logger: options.logger };

  const searchProviders: Record<SearchProviderName, () => SearchProvider> = {
    brave: () => createBraveSearch({ baseUrl: config.search.braveBaseUrl, apiKey: config.search.braveApiKey, http }),
    tavily: () => createTavilySearch({ baseUrl: config.search.tavilyBaseUrl, apiKey: config.search.tavilyApiKey, http }),
    searxng: () => createSearxngSearch({ baseUrl: config.search.searxngBaseUrl, http }),
    duckduckgo: () => createDuckDuckGoSearch({ baseUrl: config.search.duckduckgoBaseUrl, http }),
  };
  const tweetProviders: Record<TweetProviderName, () => TweetProvider> = {
    fxtwitter: () => createFxTwitter({ baseUrl: config.tweets.fxtwitterBaseUrl, http }),
    syndication: () => createSyndication({ baseUrl: config.tweets.syndicationBaseUrl, http }),
    x: () => createXApi({ baseUrl: config.tweets.xApiBaseUrl, bearerToken: config.tweets.xBearerToken, http }),
  };
  const musicProviders: Record<MusicProviderName, () => MusicProvider> = {
    itunes: () => createItunes({ baseUrl: config.music.itunesBaseUrl, http }),
    deezer: () => createDeezer({ baseUrl: config.music.deezerBaseUrl, http }),
    musicbrainz: () => createMusicBrainz({ baseUrl: config.music.musicbrainzBaseUrl, userAgent: config.music.musicbrainzUserAgent, http }),
  };

  return createServer({
    name: 'switchyard-web',
    version: '0.1.0',
    logger: options.logger,
    tools: [
      webSearchTool(
        config.search.order.map((name) => searchProviders[name]()),
        chain,
      ),
      webExtractTool({ ...config.extract, lookup: options.lookup, connect: options.connect }),
      readTweetTool(
        config.tweets.order.map((name) => tweetProviders[name]()),
        chain,
      ),
      findMusicTool(
        config.music.order.map((name) => musicProviders[name]()),
        chain,
      ),
    ],
  });
}
