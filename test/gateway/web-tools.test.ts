import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestGateway, walletHeaders, type TestGateway, executeTool } from '../helpers/gateway.js';
import { runnableEnv } from './tools/fixture-servers.js';
import { startFixture, sendJson, sendText, type Fixture } from '../fixtures/web/fixture-server.js';
import { deadProviderEnv } from '../fixtures/web/web-client.js';

// The built web server (dist/, so run `npm run build` first) behind the real gateway; every
// provider and the page to extract live on one 127.0.0.1 fixture, told apart by path prefix.
describe('web tools through the gateway', () => {
  let gateway: TestGateway;
  let providers: Fixture;
  let forbidden: Fixture;

  const execute = (tool: string, args: Record<string, unknown>) => executeTool(gateway, tool, args);

  before(async () => {
    const article = readFileSync(new URL('../fixtures/web/articles/news-article.html', import.meta.url), 'utf8');
    forbidden = await startFixture((_req, res) => sendText(res, 200, 'internal'));
    providers = await startFixture((req, res) => {
      if (req.path === '/brave/res/v1/web/search') {
        sendJson(res, 200, {
          web: { results: [{ title: 'Koa', url: 'https://koajs.com/', description: 'next generation web framework' }] },
        });
      } else if (req.path === '/fx/i/status/20') {
        sendJson(res, 200, {
          code: 200,
          message: 'OK',
          tweet: {
            id: '20',
            url: 'https://x.com/jack/status/20',
            text: 'just setting up my twttr',
            author: { name: 'jack', screen_name: 'jack' },
            replies: 1,
            retweets: 2,
            likes: 3,
            views: null,
            created_at: 'Tue Mar 21 20:50:14 +0000 2006',
            created_timestamp: 1142974214,
          },
        });
      } else if (req.path === '/itunes/search') {
        sendJson(
          res,
          200,
          {
            resultCount: 1,
            results: [{ trackName: 'Better Together', artistName: 'Jack Johnson', trackViewUrl: 'https://music.apple.com/t/1' }],
          },
          'text/javascript; charset=utf-8',
        );
      } else if (req.path === '/site/news') {
        sendText(res, 200, article);
      } else {
        sendText(res, 404, 'no route');
      }
    });
    const passThrough = runnableEnv();
    gateway = await startTestGateway({
      config: (json) => {
        json.freeMode = true;
        json.mcpServers = {
          web: {
            command: process.execPath,
            args: ['dist/tool-servers/web/main.js'],
            env: {
              ...deadProviderEnv(),
              WEB_SEARCH_PROVIDERS: 'brave,duckduckgo',
              BRAVE_BASE_URL: `${providers.url}/brave`,
              // Through the host's ${VAR} expansion, as the shipped config does it.
              BRAVE_API_KEY: '${TEST_BRAVE_KEY}',
              TAVILY_API_KEY: '${TAVILY_API_KEY}',
              FXTWITTER_BASE_URL: `${providers.url}/fx`,
              ITUNES_BASE_URL: `${providers.url}/itunes`,
              WEB_EXTRACT_ALLOW: `127.0.0.1:${providers.port}`,
              WEB_PROVIDER_TIMEOUT_MS: '2000',
              WEB_EXTRACT_TIMEOUT_MS: '3000',
            },
          },
        };
      },
      env: { ...passThrough, FREE_MODE: 'true', TEST_BRAVE_KEY: 'brave-test-key' },
    });
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([providers?.close(), forbidden?.close()]);
  });

  test('GET /v1/tools lists the four web tools', async () => {
    const response = await fetch(`${gateway.url}/v1/tools`, { headers: walletHeaders() });
    assert.equal(response.status, 200);
    const { tools } = (await response.json()) as { tools: Array<{ name: string; server?: string; params: string[] }> };
    assert.deepEqual(
      tools.filter((t) => t.server === 'web').map((t) => [t.name, t.params]),
      [
        ['web_search', ['query', 'count']],
        ['web_extract', ['url', 'max_chars']],
        ['read_tweet', ['url', 'id']],
        ['find_music', ['query', 'type', 'limit']],
      ],
    );
  });

  test('web_search runs and names its provider (key expanded from the gateway env)', async () => {
    const { status, body } = await execute('web_search', { query: 'koa' });
    assert.equal(status, 200);
    assert.deepEqual(body, {
      ok: true,
      tool: 'web_search',
      result: {
        query: 'koa',
        provider: 'brave',
        results: [{ title: 'Koa', url: 'https://koajs.com/', snippet: 'next generation web framework' }],
      },
    });
    assert.equal(providers.requests.find((r) => r.path.startsWith('/brave'))?.headers['x-subscription-token'], 'brave-test-key');
  });

  test('web_extract reads an allowed page', async () => {
    const { status, body } = await execute('web_extract', { url: `${providers.url}/site/news`, max_chars: 500 });
    assert.equal(status, 200);
    const result = body.result as Record<string, unknown>;
    assert.equal(result.title, 'City Council Approves Riverside Bike Lanes');
    assert.equal(result.truncated, true);
    assert.match(String(result.content), /protected bike lanes/);
  });

  test('web_extract of a refused address is 400 url_not_allowed and nothing is contacted', async () => {
    for (const url of [
      `http://127.0.0.1:${forbidden.port}/`,
      'http://169.254.169.254/latest/meta-data/',
      `http://[::ffff:127.0.0.1]:${forbidden.port}/`,
    ]) {
      const { status, body } = await execute('web_extract', { url });
      assert.equal(status, 400, url);
      assert.equal(body.ok, false);
      assert.equal(body.tool, 'web_extract');
      const error = body.error as Record<string, unknown>;
      assert.equal(error.code, 'url_not_allowed');
      assert.equal(error.param, 'url');
      assert.match(String(error.message), /^URL not allowed: /);
    }
    assert.equal(forbidden.connections(), 0);
  });

  test('read_tweet runs', async () => {
    const { status, body } = await execute('read_tweet', { id: '20' });
    assert.equal(status, 200);
    assert.deepEqual(body.result, {
      provider: 'fxtwitter',
      id: '20',
      url: 'https://x.com/jack/status/20',
      author: { name: 'jack', handle: 'jack' },
      text: 'just setting up my twttr',
      created_at: '2006-03-21T20:50:14.000Z',
      likes: 3,
      retweets: 2,
      replies: 1,
      media: [],
    });
  });

  test('find_music runs', async () => {
    const { status, body } = await execute('find_music', { query: 'better together', limit: 1 });
    assert.equal(status, 200);
    assert.deepEqual(body.result, {
      provider: 'itunes',
      results: [{ title: 'Better Together', artist: 'Jack Johnson', url: 'https://music.apple.com/t/1' }],
    });
  });
});
