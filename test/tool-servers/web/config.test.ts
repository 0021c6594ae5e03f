import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWebConfig } from '../../../tool-servers/web/config.js';
import { createWebServer } from '../../../tool-servers/web/server.js';

test('defaults: public provider endpoints, documented order, SearXNG off, 5 MB extract cap', () => {
  const config = parseWebConfig({});
  assert.deepEqual(config.search.order, ['brave', 'tavily', 'searxng', 'duckduckgo']);
  assert.deepEqual(config.tweets.order, ['fxtwitter', 'syndication', 'x']);
  assert.deepEqual(config.music.order, ['itunes', 'deezer', 'musicbrainz']);
  assert.equal(config.search.braveBaseUrl, 'https://api.search.brave.com');
  assert.equal(config.search.searxngBaseUrl, undefined);
  assert.equal(config.tweets.syndicationBaseUrl, 'https://cdn.syndication.twimg.com');
  assert.equal(config.music.musicbrainzBaseUrl, 'https://musicbrainz.org');
  assert.deepEqual(config.extract, { allow: [], maxBytes: 5 * 1024 * 1024, timeoutMs: 15_000 });
  // Four providers at 6 s would still pass the gateway's 30 s tool timeout: the 20 s chain deadline keeps the listing.
  assert.equal(config.providerTimeoutMs, 6000);
  assert.equal(config.fallbackDeadlineMs, 20_000);
});

test('env overrides: order, trailing slashes, allowlist entries, limits; empty values mean unset', () => {
  const config = parseWebConfig({
    WEB_SEARCH_PROVIDERS: ' DuckDuckGo , brave ',
    SEARXNG_BASE_URL: 'http://searx.intranet:8080/',
    BRAVE_API_KEY: '',
    WEB_EXTRACT_ALLOW: '127.0.0.1:8081, Wiki.Intranet:443,[::1]:9000',
    WEB_EXTRACT_MAX_BYTES: '1000',
    WEB_PROVIDER_TIMEOUT_MS: '',
    WEB_FALLBACK_DEADLINE_MS: '9000',
  });
  assert.deepEqual(config.search.order, ['duckduckgo', 'brave']);
  assert.equal(config.search.searxngBaseUrl, 'http://searx.intranet:8080');
  assert.equal(config.search.braveApiKey, undefined);
  assert.deepEqual(config.extract.allow, ['127.0.0.1:8081', 'wiki.intranet:443', '[::1]:9000']);
  assert.equal(config.extract.maxBytes, 1000);
  assert.equal(config.providerTimeoutMs, 6000);
  assert.equal(config.fallbackDeadlineMs, 9000);
});

test('a bad value stops the server with the variable named', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ WEB_SEARCH_PROVIDERS: 'brave,google' }, /^web server: invalid WEB_SEARCH_PROVIDERS\.1: /],
    [{ MUSIC_PROVIDERS: ',' }, /^web server: invalid MUSIC_PROVIDERS: /],
    [{ BRAVE_BASE_URL: 'ftp://brave' }, /^web server: invalid BRAVE_BASE_URL: /],
    [{ WEB_EXTRACT_ALLOW: '127.0.0.1' }, /^web server: invalid WEB_EXTRACT_ALLOW\.0: entries must be host:port$/],
    [{ WEB_EXTRACT_MAX_BYTES: '-5' }, /^web server: invalid WEB_EXTRACT_MAX_BYTES: /],
    [{ WEB_FALLBACK_DEADLINE_MS: '0' }, /^web server: invalid WEB_FALLBACK_DEADLINE_MS: /],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => createWebServer({ env }), { message }, JSON.stringify(env));
  }
});
