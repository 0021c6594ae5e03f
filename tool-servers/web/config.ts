import { z } from 'zod';
import { envNameList, parseServerEnv, type ServerEnv } from '../kit/index.js';

/**
 * Everything the `web` server reads from its environment, parsed once by createWebServer.
 * Base URLs exist so tests and operators can point a provider at a fixture or a mirror;
 * provider order is config, so an operator can put a paid provider first or drop one.
 */
export const SEARCH_PROVIDERS = ['brave', 'tavily', 'searxng', 'duckduckgo'] as const;
export const TWEET_PROVIDERS = ['fxtwitter', 'syndication', 'x'] as const;
export const MUSIC_PROVIDERS = ['itunes', 'deezer', 'musicbrainz'] as const;

export type SearchProviderName = (typeof SEARCH_PROVIDERS)[number];
export type TweetProviderName = (typeof TWEET_PROVIDERS)[number];
export type MusicProviderName = (typeof MUSIC_PROVIDERS)[number];

export interface WebConfig {
  search: {
    order: SearchProviderName[];
    braveBaseUrl: string;
    braveApiKey?: string;
    tavilyBaseUrl: string;
    tavilyApiKey?: string;
    searxngBaseUrl?: string;
    duckduckgoBaseUrl: string;
  };
  tweets: { order: TweetProviderName[]; fxtwitterBaseUrl: string; syndicationBaseUrl: string; xApiBaseUrl: string; xBearerToken?: string };
  music: {
    order: MusicProviderName[];
    itunesBaseUrl: string;
    deezerBaseUrl: string;
    musicbrainzBaseUrl: string;
    musicbrainzUserAgent: string;
  };
  extract: { allow: string[]; maxBytes: number; timeoutMs: number };
  /** Timeout of one provider request. */
  providerTimeoutMs: number;
  /** Time for a tool's whole chain of providers. */
  fallbackDeadlineMs: number;
  /** Response size cap of one provider request. */
  providerMaxBytes: number;
}

const baseUrl = z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, ''));
const positiveInt = z.coerce.number().int().positive();

export const webEnvSchema = z.object({
  WEB_SEARCH_PROVIDERS: envNameList(SEARCH_PROVIDERS)
    .default([...SEARCH_PROVIDERS])
    .describe('Search providers and their order (comma list)'),
  TWEET_PROVIDERS: envNameList(TWEET_PROVIDERS)
    .default([...TWEET_PROVIDERS])
    .describe('Tweet providers and their order'),
  MUSIC_PROVIDERS: envNameList(MUSIC_PROVIDERS)
    .default([...MUSIC_PROVIDERS])
    .describe('Music catalogues and their order'),
  BRAVE_BASE_URL: baseUrl.default('https://api.search.brave.com').describe('Brave Search API base'),
  BRAVE_API_KEY: z.string().optional().describe('Brave Search key (Brave is skipped without it)'),
  TAVILY_BASE_URL: baseUrl.default('https://api.tavily.com').describe('Tavily API base'),
  TAVILY_API_KEY: z.string().optional().describe('Tavily key (skipped without it)'),
  // No public default: SearXNG is an operator's own instance, skipped until one is configured.
  SEARXNG_BASE_URL: baseUrl.optional().describe('Your SearXNG instance (JSON format enabled); skipped when unset'),
  DUCKDUCKGO_BASE_URL: baseUrl.default('https://html.duckduckgo.com').describe('DuckDuckGo HTML endpoint base (keyless)'),
  FXTWITTER_BASE_URL: baseUrl.default('https://api.fxtwitter.com').describe('FxTwitter API base (keyless)'),
  SYNDICATION_BASE_URL: baseUrl.default('https://cdn.syndication.twimg.com').describe('Tweet embed endpoint base (keyless)'),
  X_API_BASE_URL: baseUrl.default('https://api.x.com').describe('X API v2 base'),
  X_BEARER_TOKEN: z.string().optional().describe('X API v2 bearer token (X is skipped without it)'),
  ITUNES_BASE_URL: baseUrl.default('https://itunes.apple.com').describe('iTunes Search base'),
  DEEZER_BASE_URL: baseUrl.default('https://api.deezer.com').describe('Deezer API base'),
  MUSICBRAINZ_BASE_URL: baseUrl.default('https://musicbrainz.org').describe('MusicBrainz base'),
  // MusicBrainz asks every client to identify itself with a way to reach its operator.
  MUSICBRAINZ_USER_AGENT: z
    .string()
    .default('Switchyard/0.1.0 ( https://github.com/switchyard-gateway/switchyard )')
    .describe('User-Agent MusicBrainz requires; put your own contact in it'),
  WEB_EXTRACT_ALLOW: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/, 'entries must be host:port')))
    .default([])
    .describe('`host:port` entries `web_extract` may read even when private (tests, intranets)'),
  WEB_EXTRACT_MAX_BYTES: positiveInt.default(5 * 1024 * 1024).describe('Largest page `web_extract` downloads'),
  WEB_EXTRACT_TIMEOUT_MS: positiveInt.default(15_000).describe('Time for one `web_extract` fetch, redirects included'),
  // Several providers in a row must finish inside the gateway's 30 s tool timeout, or the client
  // gets a bare 504 instead of what each provider said: 6 s each, 20 s for the whole chain.
  WEB_PROVIDER_TIMEOUT_MS: positiveInt.default(6_000).describe('Timeout of each search/tweet/music provider request'),
  WEB_FALLBACK_DEADLINE_MS: positiveInt
    .default(20_000)
    .describe("Time for a tool's whole chain of providers; keep it under the gateway's tool timeout (30 s)"),
  WEB_PROVIDER_MAX_BYTES: positiveInt.default(2 * 1024 * 1024).describe('Response size cap of each provider request'),
});

/**
 * Read the web server's settings from `env`; a bad value throws naming the variable (an empty one
 * means unset: the tool host may forward `${VAR}` of an unset variable as "").
 *
 * @example
 *   const config = parseWebConfig({ BRAVE_API_KEY: 'k', WEB_SEARCH_PROVIDERS: 'brave,duckduckgo' })
 */
export function parseWebConfig(env: ServerEnv): WebConfig {
  const e = parseServerEnv('web server', webEnvSchema, env);
  return {
    search: {
      order: e.WEB_SEARCH_PROVIDERS,
      braveBaseUrl: e.BRAVE_BASE_URL,
      braveApiKey: e.BRAVE_API_KEY,
      tavilyBaseUrl: e.TAVILY_BASE_URL,
      tavilyApiKey: e.TAVILY_API_KEY,
      searxngBaseUrl: e.SEARXNG_BASE_URL,
      duckduckgoBaseUrl: e.DUCKDUCKGO_BASE_URL,
    },
    tweets: {
      order: e.TWEET_PROVIDERS,
      fxtwitterBaseUrl: e.FXTWITTER_BASE_URL,
      syndicationBaseUrl: e.SYNDICATION_BASE_URL,
      xApiBaseUrl: e.X_API_BASE_URL,
      xBearerToken: e.X_BEARER_TOKEN,
    },
    music: {
      order: e.MUSIC_PROVIDERS,
      itunesBaseUrl: e.ITUNES_BASE_URL,
      deezerBaseUrl: e.DEEZER_BASE_URL,
      musicbrainzBaseUrl: e.MUSICBRAINZ_BASE_URL,
      musicbrainzUserAgent: e.MUSICBRAINZ_USER_AGENT,
    },
    extract: { allow: e.WEB_EXTRACT_ALLOW, maxBytes: e.WEB_EXTRACT_MAX_BYTES, timeoutMs: e.WEB_EXTRACT_TIMEOUT_MS },
    providerTimeoutMs: e.WEB_PROVIDER_TIMEOUT_MS,
    fallbackDeadlineMs: e.WEB_FALLBACK_DEADLINE_MS,
    providerMaxBytes: e.WEB_PROVIDER_MAX_BYTES,
  };
}
