import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sendJson, sendText, hang } from '../../fixtures/web/fixture-server.js';
import type { WebClient } from '../../fixtures/web/web-client.js';
import { useProviderFixtures, type Behaviour } from '../../fixtures/web/provider-fixtures.js';

const ddgPage = readFileSync(new URL('../../fixtures/web/duckduckgo-results.html', import.meta.url), 'utf8');
const ddgEmpty = readFileSync(new URL('../../fixtures/web/duckduckgo-no-results.html', import.meta.url), 'utf8');

// Each fixture answers through a swappable behaviour, so one server per provider serves every test.

const BRAVE_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    type: 'search',
    query: { original: 'koa middleware' },
    web: {
      type: 'search',
      results: [
        {
          title: '<strong>Koa</strong> - next generation web framework',
          url: 'https://koajs.com/',
          description: 'Expressive <strong>middleware</strong> for node.js using ES2017 async functions &amp; more',
          age: 'March 3, 2024',
        },
        { title: 'koa-compose', url: 'https://www.npmjs.com/package/koa-compose', description: 'Compose Koa middleware.' },
      ],
    },
  });
const TAVILY_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    query: 'koa middleware',
    follow_up_questions: null,
    answer: null,
    images: [],
    results: [
      {
        title: 'Koa guide',
        url: 'https://github.com/koajs/koa/blob/master/docs/guide.md',
        content: ' Writing middleware. ',
        score: 0.93,
        raw_content: null,
      },
    ],
    response_time: 1.09,
  });
const SEARXNG_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    query: 'koa middleware',
    number_of_results: 0,
    results: [
      {
        url: 'https://koajs.com/',
        title: 'Koa',
        content: 'Koa <span class="highlight">middleware</span>',
        engine: 'bing',
        publishedDate: '2024-03-03T00:00:00',
      },
      { url: 'https://b.example/', title: 'B', content: null, engine: 'brave', publishedDate: null },
      { url: 'https://c.example/', title: 'C', content: 'third', engine: 'brave' },
    ],
    answers: [],
    suggestions: [],
  });
const DDG_OK: Behaviour = (_req, res) => sendText(res, 200, ddgPage);
const BRAVE_RATE_LIMITED: Behaviour = (_req, res) =>
  sendJson(res, 429, {
    type: 'ErrorResponse',
    error: { id: 'x', status: 429, code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.' },
  });
const SERVER_ERROR: Behaviour = (_req, res) => sendJson(res, 500, { detail: 'Internal error' });

const { fixtures, behaviour, connect } = useProviderFixtures({
  brave: BRAVE_OK,
  tavily: TAVILY_OK,
  searxng: SEARXNG_OK,
  duckduckgo: DDG_OK,
});

async function start(env: Record<string, string> = {}): Promise<WebClient> {
  return connect({
    BRAVE_BASE_URL: fixtures.brave.url,
    BRAVE_API_KEY: 'brave-secret-key',
    TAVILY_BASE_URL: fixtures.tavily.url,
    TAVILY_API_KEY: 'tvly-secret-key',
    SEARXNG_BASE_URL: fixtures.searxng.url,
    DUCKDUCKGO_BASE_URL: fixtures.duckduckgo.url,
    WEB_PROVIDER_TIMEOUT_MS: '400',
    ...env,
  });
}

test('brave: sends the key header and count, and strips markup from titles and snippets', async () => {
  const web = await start();
  const outcome = await web.call('web_search', { query: 'koa middleware', count: 2 });
  assert.equal(outcome.ok, true);
  assert.deepEqual(outcome.result, {
    query: 'koa middleware',
    provider: 'brave',
    results: [
      {
        title: 'Koa - next generation web framework',
        url: 'https://koajs.com/',
        snippet: 'Expressive middleware for node.js using ES2017 async functions & more',
        published: 'March 3, 2024',
      },
      { title: 'koa-compose', url: 'https://www.npmjs.com/package/koa-compose', snippet: 'Compose Koa middleware.' },
    ],
  });
  const [request] = fixtures.brave.requests;
  assert.equal(request.path, '/res/v1/web/search');
  assert.equal(request.query.get('q'), 'koa middleware');
  assert.equal(request.query.get('count'), '2');
  assert.equal(request.headers['x-subscription-token'], 'brave-secret-key');
  assert.equal(request.headers.accept, 'application/json');
});

test('tavily: posts the documented body with the bearer key', async () => {
  const web = await start({ WEB_SEARCH_PROVIDERS: 'tavily' });
  const outcome = await web.call('web_search', { query: 'koa middleware', count: 3 });
  assert.deepEqual(outcome.result, {
    query: 'koa middleware',
    provider: 'tavily',
    results: [{ title: 'Koa guide', url: 'https://github.com/koajs/koa/blob/master/docs/guide.md', snippet: 'Writing middleware.' }],
  });
  const [request] = fixtures.tavily.requests;
  assert.equal(request.method, 'POST');
  assert.equal(request.path, '/search');
  assert.equal(request.headers.authorization, 'Bearer tvly-secret-key');
  assert.deepEqual(JSON.parse(request.body), { query: 'koa middleware', max_results: 3, search_depth: 'basic' });
});

test('searxng: asks for JSON and keeps only the first `count` results', async () => {
  const web = await start({ WEB_SEARCH_PROVIDERS: 'searxng' });
  const outcome = await web.call('web_search', { query: 'koa middleware', count: 2 });
  assert.deepEqual(outcome.result, {
    query: 'koa middleware',
    provider: 'searxng',
    results: [
      { title: 'Koa', url: 'https://koajs.com/', snippet: 'Koa middleware', published: '2024-03-03T00:00:00' },
      { title: 'B', url: 'https://b.example/', snippet: '' },
    ],
  });
  assert.equal(fixtures.searxng.requests[0].query.get('format'), 'json');
});

test('duckduckgo: parses the HTML page, unwraps redirect links and skips ads', async () => {
  const web = await start({ WEB_SEARCH_PROVIDERS: 'duckduckgo' });
  const outcome = await web.call('web_search', { query: 'koa middleware', count: 5 });
  assert.deepEqual(outcome.result, {
    query: 'koa middleware',
    provider: 'duckduckgo',
    results: [
      {
        title: 'Koa - next generation web framework for node.js',
        url: 'https://koajs.com/#application',
        snippet: 'Koa middleware cascades in a more traditional way as you may be used to with similar tools.',
      },
      {
        title: 'koa/docs/guide.md at master · koajs/koa · GitHub',
        url: 'https://github.com/koajs/koa/blob/master/docs/guide.md',
        snippet: 'Writing Middleware. Koa middleware are simple functions which return a MiddlewareFunction with signature (ctx, next).',
      },
      {
        title: 'koa-compose - npm',
        url: 'https://www.npmjs.com/package/koa-compose',
        snippet: 'Compose middleware. Latest version: 4.2.0.',
      },
    ],
  });
  const [request] = fixtures.duckduckgo.requests;
  assert.equal(request.path, '/html/');
  assert.equal(request.query.get('q'), 'koa middleware');
  assert.match(request.headers['user-agent'] ?? '', /^Mozilla\/5\.0/);
});

test('fallback: 429 from brave, 500 from tavily, then searxng answers', async () => {
  behaviour.brave = BRAVE_RATE_LIMITED;
  behaviour.tavily = SERVER_ERROR;
  const web = await start();
  const outcome = await web.call('web_search', { query: 'koa middleware' });
  assert.equal(outcome.result.provider, 'searxng');
  assert.equal(fixtures.brave.requests.length, 1);
  assert.equal(fixtures.tavily.requests.length, 1);
});

test('fallback: a provider that times out is left for the next one', async () => {
  behaviour.brave = hang;
  const web = await start({ WEB_SEARCH_PROVIDERS: 'brave,duckduckgo' });
  const outcome = await web.call('web_search', { query: 'koa middleware' });
  assert.equal(outcome.result.provider, 'duckduckgo');
});

test('fallback: empty results fall through (brave without a web block, searxng with none)', async () => {
  behaviour.brave = (_req, res) => sendJson(res, 200, { type: 'search', query: { original: 'zzqxv' } });
  behaviour.searxng = (_req, res) => sendJson(res, 200, { query: 'zzqxv', results: [] });
  const web = await start({ WEB_SEARCH_PROVIDERS: 'brave,searxng,duckduckgo' });
  const outcome = await web.call('web_search', { query: 'zzqxv' });
  assert.equal(outcome.result.provider, 'duckduckgo');
});

test('a provider without its key is skipped without a request', async () => {
  const web = await start({ BRAVE_API_KEY: '', TAVILY_API_KEY: '' });
  const outcome = await web.call('web_search', { query: 'koa middleware' });
  assert.equal(outcome.result.provider, 'searxng');
  assert.equal(fixtures.brave.requests.length, 0);
  assert.equal(fixtures.tavily.requests.length, 0);
});

test('total failure lists what each provider said, without keys or URLs', async () => {
  behaviour.tavily = SERVER_ERROR;
  behaviour.duckduckgo = hang;
  const web = await start({ BRAVE_API_KEY: '', SEARXNG_BASE_URL: '', WEB_PROVIDER_TIMEOUT_MS: '300' });
  const outcome = await web.call('web_search', { query: 'koa middleware' });
  assert.equal(outcome.ok, false);
  assert.deepEqual(outcome.error, {
    code: 'upstream_unavailable',
    message:
      'All providers failed: brave: skipped (no BRAVE_API_KEY); tavily: HTTP 500; searxng: skipped (no SEARXNG_BASE_URL); duckduckgo: timed out after 300 ms',
  });
  assert.doesNotMatch(outcome.error.message, /tvly-secret-key|127\.0\.0\.1/);
});

test('one deadline bounds the whole chain: a hung provider is stopped there and the rest are listed as not asked', async () => {
  behaviour.brave = hang;
  behaviour.tavily = hang;
  const web = await start({ WEB_PROVIDER_TIMEOUT_MS: '300', WEB_FALLBACK_DEADLINE_MS: '450' });
  const started = Date.now();
  const outcome = await web.call('web_search', { query: 'koa middleware' });
  assert.ok(Date.now() - started < 1000, 'the chain ended at its deadline, not after four provider timeouts');
  assert.deepEqual(outcome.error, {
    code: 'upstream_unavailable',
    message:
      'All providers failed: brave: timed out after 300 ms; tavily: stopped at the 450 ms deadline; searxng: not asked (the 450 ms deadline had passed); duckduckgo: not asked (the 450 ms deadline had passed)',
  });
  assert.equal(fixtures.searxng.requests.length, 0);
});

test('searxng 403 (JSON disabled) and a duckduckgo challenge page (202) count as failures', async () => {
  behaviour.searxng = (_req, res) => sendText(res, 403, '<html><body>403 Forbidden</body></html>');
  behaviour.duckduckgo = (_req, res) => sendText(res, 202, '<html><body><form id="challenge-form"></form></body></html>');
  const web = await start({ WEB_SEARCH_PROVIDERS: 'searxng,duckduckgo' });
  const outcome = await web.call('web_search', { query: 'koa' });
  assert.deepEqual(outcome.error, {
    code: 'upstream_unavailable',
    message: 'All providers failed: searxng: HTTP 403; duckduckgo: HTTP 202',
  });
});

test('every provider answering "nothing found" is not_found', async () => {
  behaviour.duckduckgo = (_req, res) => sendText(res, 200, ddgEmpty);
  behaviour.tavily = (_req, res) => sendJson(res, 200, { query: 'zzqxv', results: [], response_time: 0.2 });
  const web = await start({ WEB_SEARCH_PROVIDERS: 'tavily,duckduckgo' });
  const outcome = await web.call('web_search', { query: 'zzqxv' });
  assert.deepEqual(outcome.error, { code: 'not_found', message: 'No results. tavily: no results; duckduckgo: no results' });
});

test('a malformed provider answer is a failure, not a crash', async () => {
  behaviour.brave = (_req, res) => sendJson(res, 200, { web: { results: [{ title: 1 }] } });
  const web = await start({ WEB_SEARCH_PROVIDERS: 'brave,duckduckgo' });
  const outcome = await web.call('web_search', { query: 'koa' });
  assert.equal(outcome.result.provider, 'duckduckgo');
});

test('invalid arguments name the field', async () => {
  const web = await start();
  const outcome = await web.call('web_search', { query: 'koa', count: 50 });
  assert.equal(outcome.error.code, 'invalid_arguments');
  assert.equal(outcome.error.param, 'count');
});
