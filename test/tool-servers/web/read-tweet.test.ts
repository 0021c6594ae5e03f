import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendJson, hang } from '../../fixtures/web/fixture-server.js';
import type { WebClient } from '../../fixtures/web/web-client.js';
import { useProviderFixtures, type Behaviour } from '../../fixtures/web/provider-fixtures.js';
import { parseTweetRef } from '../../../tool-servers/web/tweets/tweet-ref.js';
import { syndicationToken } from '../../../tool-servers/web/tweets/syndication.js';
import { ToolError } from '../../../tool-servers/kit/index.js';

const ID = '1585341984679469056';

// FxTwitter's documented status answer, with a photo, a video and a quoted tweet.
const FX_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    code: 200,
    message: 'OK',
    tweet: {
      url: `https://x.com/elonmusk/status/${ID}`,
      id: ID,
      text: 'Entering Twitter HQ – let that sink in!',
      author: { id: '44196397', name: 'Elon Musk', screen_name: 'elonmusk', avatar_url: 'https://pbs.twimg.com/a.jpg' },
      replies: 140000,
      retweets: 170000,
      likes: 1200000,
      views: null,
      created_at: 'Wed Oct 26 18:16:43 +0000 2022',
      created_timestamp: 1666808203,
      lang: 'en',
      source: 'Twitter for iPhone',
      media: {
        all: [],
        photos: [{ type: 'photo', url: 'https://pbs.twimg.com/media/a.jpg', width: 1200, height: 800 }],
        videos: [{ type: 'video', url: 'https://video.twimg.com/v.mp4', thumbnail_url: 'https://pbs.twimg.com/t.jpg', duration: 12 }],
      },
      quote: {
        url: 'https://x.com/someone/status/1585000000000000000',
        id: '1585000000000000000',
        text: 'quoted words',
        author: { name: 'Some One', screen_name: 'someone' },
        replies: 1,
        retweets: 2,
        likes: 3,
        views: 400,
        created_at: 'Tue Oct 25 10:00:00 +0000 2022',
        created_timestamp: 1666692000,
      },
    },
  });
const FX_NOT_FOUND: Behaviour = (_req, res) => sendJson(res, 404, { code: 404, message: 'NOT_FOUND', tweet: null });
const FX_PRIVATE: Behaviour = (_req, res) => sendJson(res, 401, { code: 401, message: 'PRIVATE_TWEET', tweet: null });
const FAIL_500: Behaviour = (_req, res) => sendJson(res, 500, { code: 500, message: 'API_FAIL' });

const SYND_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    __typename: 'Tweet',
    lang: 'en',
    favorite_count: 1200000,
    created_at: '2022-10-26T18:16:43.000Z',
    display_text_range: [0, 39],
    id_str: ID,
    text: 'Entering Twitter HQ – let that sink in!',
    user: { id_str: '44196397', name: 'Elon Musk', screen_name: 'elonmusk', is_blue_verified: true },
    mediaDetails: [
      { type: 'photo', media_url_https: 'https://pbs.twimg.com/media/a.jpg' },
      {
        type: 'video',
        media_url_https: 'https://pbs.twimg.com/thumb.jpg',
        video_info: {
          variants: [
            { content_type: 'application/x-mpegURL', url: 'https://video.twimg.com/pl.m3u8' },
            { bitrate: 256000, content_type: 'video/mp4', url: 'https://video.twimg.com/low.mp4' },
            { bitrate: 2176000, content_type: 'video/mp4', url: 'https://video.twimg.com/high.mp4' },
          ],
        },
      },
    ],
    conversation_count: 140000,
    news_action_type: 'conversation',
  });
const SYND_TOMBSTONE: Behaviour = (_req, res) =>
  sendJson(res, 200, { __typename: 'TweetTombstone', tombstone: { text: { text: 'This Post was deleted by the Post author.' } } });

const X_OK: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    data: {
      id: ID,
      text: 'Entering Twitter HQ – let that sink in!',
      created_at: '2022-10-26T18:16:43.000Z',
      author_id: '44196397',
      edit_history_tweet_ids: [ID],
      public_metrics: {
        retweet_count: 170000,
        reply_count: 140000,
        like_count: 1200000,
        quote_count: 50000,
        bookmark_count: 9000,
        impression_count: 90000000,
      },
      attachments: { media_keys: ['3_1'] },
    },
    includes: {
      users: [{ id: '44196397', name: 'Elon Musk', username: 'elonmusk' }],
      media: [{ media_key: '3_1', type: 'photo', url: 'https://pbs.twimg.com/media/a.jpg' }],
    },
  });
const X_NOT_FOUND: Behaviour = (_req, res) =>
  sendJson(res, 200, {
    errors: [
      {
        value: ID,
        detail: `Could not find tweet with id: [${ID}].`,
        title: 'Not Found Error',
        resource_type: 'tweet',
        parameter: 'id',
        resource_id: ID,
        type: 'https://api.twitter.com/2/problems/resource-not-found',
      },
    ],
  });
const X_UNAUTHORIZED: Behaviour = (_req, res) =>
  sendJson(res, 401, { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });

const { fixtures, behaviour, connect } = useProviderFixtures({ fxtwitter: FX_OK, syndication: SYND_OK, x: X_OK });

async function start(env: Record<string, string> = {}): Promise<WebClient> {
  return connect({
    FXTWITTER_BASE_URL: fixtures.fxtwitter.url,
    SYNDICATION_BASE_URL: fixtures.syndication.url,
    X_API_BASE_URL: fixtures.x.url,
    X_BEARER_TOKEN: 'x-secret-bearer',
    WEB_PROVIDER_TIMEOUT_MS: '400',
    ...env,
  });
}

test('parseTweetRef accepts x.com, twitter.com, fxtwitter, vxtwitter links and bare ids', () => {
  const cases: Array<[{ url?: string; id?: string }, { id: string; handle?: string }]> = [
    [{ url: `https://x.com/elonmusk/status/${ID}` }, { id: ID, handle: 'elonmusk' }],
    [{ url: `https://twitter.com/elonmusk/status/${ID}?s=20&t=abc` }, { id: ID, handle: 'elonmusk' }],
    [{ url: `https://mobile.twitter.com/elonmusk/status/${ID}/photo/1` }, { id: ID, handle: 'elonmusk' }],
    [{ url: `https://fxtwitter.com/elonmusk/status/${ID}` }, { id: ID, handle: 'elonmusk' }],
    [{ url: `https://vxtwitter.com/elonmusk/status/${ID}` }, { id: ID, handle: 'elonmusk' }],
    [{ url: `x.com/i/web/status/${ID}` }, { id: ID }],
    [{ url: ID }, { id: ID }],
    [{ id: ` ${ID} ` }, { id: ID }],
  ];
  for (const [input, expected] of cases) assert.deepEqual(parseTweetRef(input), expected, JSON.stringify(input));
  const refusals: Array<[{ url?: string; id?: string }, string, string]> = [
    [{}, 'Give either url or id.', 'url'],
    [{ id: 'abc' }, 'id: a tweet id is a number of up to 20 digits', 'id'],
    [
      { url: `https://example.com/elonmusk/status/${ID}` },
      'url: not a tweet link (x.com, twitter.com, fxtwitter.com or vxtwitter.com …/status/<id>)',
      'url',
    ],
    [{ url: 'https://x.com/elonmusk' }, 'url: not a tweet link (x.com, twitter.com, fxtwitter.com or vxtwitter.com …/status/<id>)', 'url'],
    [{ url: 'http://[bad' }, 'url: not a tweet link', 'url'],
  ];
  for (const [input, message, param] of refusals) {
    assert.throws(
      () => parseTweetRef(input),
      (err: unknown) => err instanceof ToolError && err.code === 'invalid_arguments' && err.message === message && err.param === param,
    );
  }
});

test('syndicationToken follows the embed formula: base 36, no dots or zeros', () => {
  const token = syndicationToken(ID);
  assert.equal(token, ((Number(ID) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, ''));
  assert.match(token, /^[1-9a-z]+$/);
});

test('fxtwitter: parses author, counts, media and the quoted tweet', async () => {
  const web = await start();
  const outcome = await web.call('read_tweet', { url: `https://twitter.com/elonmusk/status/${ID}` });
  assert.deepEqual(outcome.result, {
    provider: 'fxtwitter',
    id: ID,
    url: `https://x.com/elonmusk/status/${ID}`,
    author: { name: 'Elon Musk', handle: 'elonmusk' },
    text: 'Entering Twitter HQ – let that sink in!',
    created_at: '2022-10-26T18:16:43.000Z',
    likes: 1200000,
    retweets: 170000,
    replies: 140000,
    media: [
      { type: 'photo', url: 'https://pbs.twimg.com/media/a.jpg' },
      { type: 'video', url: 'https://video.twimg.com/v.mp4' },
    ],
    quoted: {
      id: '1585000000000000000',
      url: 'https://x.com/someone/status/1585000000000000000',
      author: { name: 'Some One', handle: 'someone' },
      text: 'quoted words',
      created_at: '2022-10-25T10:00:00.000Z',
      likes: 3,
      retweets: 2,
      replies: 1,
      views: 400,
      media: [],
    },
  });
  assert.equal(fixtures.fxtwitter.requests[0].path, `/elonmusk/status/${ID}`);
});

test('a fxtwitter 404 (sometimes false) falls through to syndication, which answers', async () => {
  behaviour.fxtwitter = FX_NOT_FOUND;
  const web = await start();
  const outcome = await web.call('read_tweet', { id: ID });
  assert.equal(outcome.result.provider, 'syndication');
  assert.equal(fixtures.fxtwitter.requests[0].path, `/i/status/${ID}`);
});

test("not_found only when every provider asked said so; the last one's reason is given", async () => {
  behaviour.fxtwitter = FX_NOT_FOUND;
  behaviour.syndication = SYND_TOMBSTONE;
  behaviour.x = X_NOT_FOUND;
  const web = await start();
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (not found).`,
  });
  assert.deepEqual([fixtures.fxtwitter.requests.length, fixtures.syndication.requests.length, fixtures.x.requests.length], [1, 1, 1]);
  behaviour.fxtwitter = FX_PRIVATE;
  const keyless = await start({ X_BEARER_TOKEN: '' });
  assert.deepEqual((await keyless.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (deleted or withheld).`,
  });
});

test('a not-found from one provider and a failure from another is upstream_unavailable, not not_found', async () => {
  behaviour.fxtwitter = FX_NOT_FOUND;
  behaviour.syndication = FAIL_500;
  const web = await start({ X_BEARER_TOKEN: '' });
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'upstream_unavailable',
    message: `All providers failed: fxtwitter: Tweet ${ID} is not available (not found).; syndication: HTTP 500; x: skipped (no X_BEARER_TOKEN)`,
  });
});

test('url and id together must name the same tweet; then the link is used (it carries the screen name)', async () => {
  const web = await start();
  const other = await web.call('read_tweet', { url: `https://x.com/elonmusk/status/${ID}`, id: '20' });
  assert.deepEqual(other.error, {
    code: 'invalid_arguments',
    message: 'id: url and id name different tweets; give one of them',
    param: 'id',
  });
  const notALink = await web.call('read_tweet', { url: 'https://example.com/', id: ID });
  assert.equal(notALink.error.code, 'invalid_arguments');
  assert.equal(fixtures.fxtwitter.requests.length, 0);
  const same = await web.call('read_tweet', { url: `https://x.com/elonmusk/status/${ID}`, id: ID });
  assert.equal(same.result.provider, 'fxtwitter');
  assert.equal(fixtures.fxtwitter.requests[0].path, `/elonmusk/status/${ID}`);
});

test('fxtwitter failing (500) falls back to syndication, which sends the token and parses mediaDetails', async () => {
  behaviour.fxtwitter = FAIL_500;
  const web = await start();
  const outcome = await web.call('read_tweet', { url: `https://x.com/elonmusk/status/${ID}` });
  assert.deepEqual(outcome.result, {
    provider: 'syndication',
    id: ID,
    url: `https://x.com/elonmusk/status/${ID}`,
    author: { name: 'Elon Musk', handle: 'elonmusk' },
    text: 'Entering Twitter HQ – let that sink in!',
    created_at: '2022-10-26T18:16:43.000Z',
    likes: 1200000,
    retweets: null,
    replies: 140000,
    media: [
      { type: 'photo', url: 'https://pbs.twimg.com/media/a.jpg' },
      { type: 'video', url: 'https://video.twimg.com/high.mp4' },
    ],
  });
  const [request] = fixtures.syndication.requests;
  assert.equal(request.path, '/tweet-result');
  assert.equal(request.query.get('id'), ID);
  assert.equal(request.query.get('lang'), 'en');
  assert.equal(request.query.get('token'), syndicationToken(ID));
});

test('syndication: a tombstone (deleted), a 404 and an empty object are not_found', async () => {
  const web = await start({ TWEET_PROVIDERS: 'syndication' });
  behaviour.syndication = SYND_TOMBSTONE;
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (deleted or withheld).`,
  });
  behaviour.syndication = (_req, res) => sendJson(res, 404, {});
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (not found).`,
  });
  behaviour.syndication = (_req, res) => sendJson(res, 200, {});
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (not found).`,
  });
});

test('x api: bearer token, expansions, metrics and media', async () => {
  behaviour.fxtwitter = hang;
  behaviour.syndication = (_req, res) => sendJson(res, 429, { errors: [{ code: 88, message: 'Rate limit exceeded' }] });
  const web = await start();
  const outcome = await web.call('read_tweet', { id: ID });
  assert.deepEqual(outcome.result, {
    provider: 'x',
    id: ID,
    url: `https://x.com/elonmusk/status/${ID}`,
    author: { name: 'Elon Musk', handle: 'elonmusk' },
    text: 'Entering Twitter HQ – let that sink in!',
    created_at: '2022-10-26T18:16:43.000Z',
    likes: 1200000,
    retweets: 170000,
    replies: 140000,
    views: 90000000,
    media: [{ type: 'photo', url: 'https://pbs.twimg.com/media/a.jpg' }],
  });
  const [request] = fixtures.x.requests;
  assert.equal(request.path, `/2/tweets/${ID}`);
  assert.equal(request.headers.authorization, 'Bearer x-secret-bearer');
  assert.equal(request.query.get('expansions'), 'author_id,attachments.media_keys');
  assert.equal(request.query.get('tweet.fields'), 'created_at,public_metrics');
  assert.equal(request.query.get('user.fields'), 'username,name');
});

test('x api without public_metrics: likes, retweets and replies are all null, not a made-up 0', async () => {
  behaviour.x = (_req, res) =>
    sendJson(res, 200, {
      data: { id: ID, text: 'no metrics', created_at: '2022-10-26T18:16:43.000Z', author_id: '44196397' },
      includes: { users: [{ id: '44196397', name: 'Elon Musk', username: 'elonmusk' }] },
    });
  const web = await start({ TWEET_PROVIDERS: 'x' });
  const { result } = await web.call('read_tweet', { id: ID });
  assert.deepEqual([result.likes, result.retweets, result.replies], [null, null, null]);
  assert.equal('views' in result, false);
});

test('x api: resource-not-found and not-authorized errors are not_found', async () => {
  const web = await start({ TWEET_PROVIDERS: 'x' });
  behaviour.x = X_NOT_FOUND;
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (not found).`,
  });
  behaviour.x = (_req, res) =>
    sendJson(res, 200, {
      errors: [
        {
          title: 'Authorization Error',
          detail: 'Sorry, you are not authorized to see the Tweet',
          type: 'https://api.twitter.com/2/problems/not-authorized-for-resource',
        },
      ],
    });
  assert.deepEqual((await web.call('read_tweet', { id: ID })).error, {
    code: 'not_found',
    message: `Tweet ${ID} is not available (private).`,
  });
});

test('without X_BEARER_TOKEN the X API is skipped; total failure lists every provider without secrets', async () => {
  behaviour.fxtwitter = FAIL_500;
  behaviour.syndication = hang;
  const web = await start({ X_BEARER_TOKEN: '', WEB_PROVIDER_TIMEOUT_MS: '300' });
  const outcome = await web.call('read_tweet', { id: ID });
  assert.deepEqual(outcome.error, {
    code: 'upstream_unavailable',
    message: 'All providers failed: fxtwitter: HTTP 500; syndication: timed out after 300 ms; x: skipped (no X_BEARER_TOKEN)',
  });
  assert.equal(fixtures.x.requests.length, 0);
});

test('a rejected bearer token (401) is a provider failure, and the token never appears in the error', async () => {
  behaviour.x = X_UNAUTHORIZED;
  const web = await start({ TWEET_PROVIDERS: 'x' });
  const outcome = await web.call('read_tweet', { id: ID });
  assert.deepEqual(outcome.error, { code: 'upstream_unavailable', message: 'All providers failed: x: HTTP 401' });
});
