import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendJson, sendText, hang } from '../../fixtures/web/fixture-server.js';
import type { WebClient } from '../../fixtures/web/web-client.js';
import { useProviderFixtures, type Behaviour } from '../../fixtures/web/provider-fixtures.js';
import { createMinInterval } from '../../../tool-servers/web/music/min-interval.js';

// iTunes answers JSON with content type text/javascript.
const ITUNES_OK: Behaviour = (req, res) => {
  const entity = req.query.get('entity');
  const results =
    entity === 'song'
      ? [
          {
            wrapperType: 'track',
            kind: 'song',
            artistName: 'Jack Johnson',
            collectionName: 'In Between Dreams',
            trackName: 'Better Together',
            trackViewUrl: 'https://music.apple.com/us/album/better-together/1469577723?i=1469577741',
            previewUrl: 'https://audio-ssl.itunes.apple.com/preview.m4a',
            artworkUrl100: 'https://is1-ssl.mzstatic.com/100x100bb.jpg',
            releaseDate: '2005-03-01T08:00:00Z',
            trackTimeMillis: 207679,
          },
        ]
      : entity === 'album'
        ? [
            {
              wrapperType: 'collection',
              collectionType: 'Album',
              artistName: 'Jack Johnson',
              collectionName: 'In Between Dreams',
              collectionViewUrl: 'https://music.apple.com/us/album/1469577723',
              artworkUrl100: 'https://is1-ssl.mzstatic.com/a.jpg',
              releaseDate: '2005-03-01T08:00:00Z',
            },
          ]
        : [
            {
              wrapperType: 'artist',
              artistType: 'Artist',
              artistName: 'Jack Johnson',
              artistLinkUrl: 'https://music.apple.com/us/artist/jack-johnson/909253',
              primaryGenreName: 'Rock',
            },
          ];
  sendJson(res, 200, { resultCount: results.length, results }, 'text/javascript; charset=utf-8');
};
const DEEZER_OK: Behaviour = (req, res) => {
  if (req.path === '/search/artist') {
    sendJson(res, 200, {
      data: [
        {
          id: 13,
          name: 'Eminem',
          link: 'https://www.deezer.com/artist/13',
          picture_medium: 'https://e-cdns-images.dzcdn.net/artist/m.jpg',
          nb_fan: 1,
        },
      ],
      total: 1,
    });
    return;
  }
  if (req.path === '/search/album') {
    sendJson(res, 200, {
      data: [
        {
          id: 7,
          title: 'The Eminem Show',
          link: 'https://www.deezer.com/album/7',
          cover_medium: 'https://e-cdns-images.dzcdn.net/cover/m.jpg',
          artist: { id: 13, name: 'Eminem' },
        },
      ],
      total: 1,
    });
    return;
  }
  sendJson(res, 200, {
    data: [
      {
        id: 916424,
        readable: true,
        title: 'Without Me',
        link: 'https://www.deezer.com/track/916424',
        duration: 290,
        rank: 900000,
        preview: 'https://cdns-preview-c.dzcdn.net/stream/c.mp3',
        artist: { id: 13, name: 'Eminem', link: 'https://www.deezer.com/artist/13' },
        album: { id: 103248, title: 'The Eminem Show', cover_medium: 'https://e-cdns-images.dzcdn.net/images/cover/m.jpg' },
        type: 'track',
      },
    ],
    total: 1,
    next: 'https://api.deezer.com/search?q=eminem&index=1',
  });
};
const DEEZER_QUOTA: Behaviour = (_req, res) =>
  sendJson(res, 200, { error: { type: 'Exception', message: 'Quota limit exceeded', code: 4 } });
const MB_OK: Behaviour = (req, res) => {
  if (req.path === '/ws/2/artist/') {
    sendJson(res, 200, {
      created: '2024-01-01T00:00:00.000Z',
      count: 1,
      offset: 0,
      artists: [{ id: 'b95ce3ff', type: 'Person', score: 100, name: 'Jack Johnson' }],
    });
    return;
  }
  if (req.path === '/ws/2/release-group/') {
    sendJson(res, 200, {
      count: 1,
      offset: 0,
      'release-groups': [
        {
          id: 'rg1',
          score: 100,
          title: 'In Between Dreams',
          'first-release-date': '2005-02-28',
          'artist-credit': [{ name: 'Jack Johnson' }],
        },
      ],
    });
    return;
  }
  sendJson(res, 200, {
    created: '2024-01-01T00:00:00.000Z',
    count: 1,
    offset: 0,
    recordings: [
      {
        id: 'rec-1',
        score: 100,
        title: 'Better Together',
        length: 207000,
        'first-release-date': '2005',
        'artist-credit': [{ name: 'Jack Johnson', joinphrase: ' feat. ' }, { name: 'Ben Harper' }],
        releases: [{ id: 'rel-1', title: 'In Between Dreams' }],
      },
    ],
  });
};

const { fixtures, behaviour, connect } = useProviderFixtures({ itunes: ITUNES_OK, deezer: DEEZER_OK, musicbrainz: MB_OK });

async function start(env: Record<string, string> = {}): Promise<WebClient> {
  return connect({
    ITUNES_BASE_URL: fixtures.itunes.url,
    DEEZER_BASE_URL: fixtures.deezer.url,
    MUSICBRAINZ_BASE_URL: fixtures.musicbrainz.url,
    MUSICBRAINZ_USER_AGENT: 'SwitchyardTest/1.0 ( ops@switchyard.test )',
    WEB_PROVIDER_TIMEOUT_MS: '400',
    ...env,
  });
}

test('itunes: tracks, albums and artists through the documented entity names', async () => {
  const web = await start();
  const tracks = await web.call('find_music', { query: 'jack johnson', limit: 3 });
  assert.deepEqual(tracks.result, {
    provider: 'itunes',
    results: [
      {
        title: 'Better Together',
        artist: 'Jack Johnson',
        album: 'In Between Dreams',
        release_date: '2005-03-01',
        duration_ms: 207679,
        preview_url: 'https://audio-ssl.itunes.apple.com/preview.m4a',
        url: 'https://music.apple.com/us/album/better-together/1469577723?i=1469577741',
        artwork_url: 'https://is1-ssl.mzstatic.com/100x100bb.jpg',
      },
    ],
  });
  const [request] = fixtures.itunes.requests;
  assert.equal(request.path, '/search');
  assert.deepEqual(Object.fromEntries(request.query), { term: 'jack johnson', media: 'music', entity: 'song', limit: '3' });

  const albums = await web.call('find_music', { query: 'jack johnson', type: 'album' });
  assert.deepEqual(albums.result.results, [
    {
      title: 'In Between Dreams',
      artist: 'Jack Johnson',
      release_date: '2005-03-01',
      url: 'https://music.apple.com/us/album/1469577723',
      artwork_url: 'https://is1-ssl.mzstatic.com/a.jpg',
    },
  ]);
  const artists = await web.call('find_music', { query: 'jack johnson', type: 'artist' });
  assert.deepEqual(artists.result.results, [
    { title: 'Jack Johnson', artist: 'Jack Johnson', url: 'https://music.apple.com/us/artist/jack-johnson/909253' },
  ]);
  assert.deepEqual(
    fixtures.itunes.requests.map((r) => r.query.get('entity')),
    ['song', 'album', 'musicArtist'],
  );
});

test('deezer: tracks (duration in seconds), albums and artists', async () => {
  const web = await start({ MUSIC_PROVIDERS: 'deezer' });
  const tracks = await web.call('find_music', { query: 'eminem', limit: 10 });
  assert.deepEqual(tracks.result, {
    provider: 'deezer',
    results: [
      {
        title: 'Without Me',
        artist: 'Eminem',
        album: 'The Eminem Show',
        duration_ms: 290000,
        preview_url: 'https://cdns-preview-c.dzcdn.net/stream/c.mp3',
        url: 'https://www.deezer.com/track/916424',
        artwork_url: 'https://e-cdns-images.dzcdn.net/images/cover/m.jpg',
      },
    ],
  });
  assert.deepEqual(Object.fromEntries(fixtures.deezer.requests[0].query), { q: 'eminem', limit: '10' });
  const albums = await web.call('find_music', { query: 'eminem', type: 'album' });
  assert.deepEqual(albums.result.results, [
    {
      title: 'The Eminem Show',
      artist: 'Eminem',
      url: 'https://www.deezer.com/album/7',
      artwork_url: 'https://e-cdns-images.dzcdn.net/cover/m.jpg',
    },
  ]);
  const artists = await web.call('find_music', { query: 'eminem', type: 'artist' });
  assert.deepEqual(artists.result.results, [
    {
      title: 'Eminem',
      artist: 'Eminem',
      url: 'https://www.deezer.com/artist/13',
      artwork_url: 'https://e-cdns-images.dzcdn.net/artist/m.jpg',
    },
  ]);
  assert.deepEqual(
    fixtures.deezer.requests.map((r) => r.path),
    ['/search', '/search/album', '/search/artist'],
  );
});

test('musicbrainz: descriptive User-Agent, artist credits with join phrases, public links', async () => {
  const web = await start({ MUSIC_PROVIDERS: 'musicbrainz' });
  const tracks = await web.call('find_music', { query: 'better together', limit: 5 });
  assert.deepEqual(tracks.result, {
    provider: 'musicbrainz',
    results: [
      {
        title: 'Better Together',
        artist: 'Jack Johnson feat. Ben Harper',
        album: 'In Between Dreams',
        release_date: '2005',
        duration_ms: 207000,
        url: 'https://musicbrainz.org/recording/rec-1',
      },
    ],
  });
  const [request] = fixtures.musicbrainz.requests;
  assert.equal(request.path, '/ws/2/recording/');
  assert.deepEqual(Object.fromEntries(request.query), { query: 'better together', fmt: 'json', limit: '5' });
  assert.equal(request.headers['user-agent'], 'SwitchyardTest/1.0 ( ops@switchyard.test )');
});

test('musicbrainz: albums are release groups, artists link to the artist page, one request per second', async () => {
  // A provider timeout above the 1 s interval, so the second call may queue for its turn.
  const web = await start({ MUSIC_PROVIDERS: 'musicbrainz', WEB_PROVIDER_TIMEOUT_MS: '2000' });
  const albums = await web.call('find_music', { query: 'in between dreams', type: 'album' });
  assert.deepEqual(albums.result.results, [
    { title: 'In Between Dreams', artist: 'Jack Johnson', release_date: '2005-02-28', url: 'https://musicbrainz.org/release-group/rg1' },
  ]);
  const artists = await web.call('find_music', { query: 'jack johnson', type: 'artist' });
  assert.deepEqual(artists.result.results, [
    { title: 'Jack Johnson', artist: 'Jack Johnson', url: 'https://musicbrainz.org/artist/b95ce3ff' },
  ]);
  const [first, second] = fixtures.musicbrainz.requests;
  assert.equal(second.path, '/ws/2/artist/');
  // A lower bound only: waiting longer on a busy machine is fine, sooner is not.
  assert.ok(second.at - first.at >= 950, `second request came ${second.at - first.at} ms after the first`);
});

test('deezer errors sent as 200 with an error object fall through; the listing says what deezer said', async () => {
  behaviour.itunes = (_req, res) => sendText(res, 403, 'Forbidden', 'text/html');
  behaviour.deezer = DEEZER_QUOTA;
  // Two musicbrainz calls in a row: the provider timeout must allow queueing for the second turn.
  const web = await start({ WEB_PROVIDER_TIMEOUT_MS: '2000' });
  const outcome = await web.call('find_music', { query: 'better together' });
  assert.equal(outcome.result.provider, 'musicbrainz');

  behaviour.musicbrainz = (_req, res) =>
    sendJson(res, 503, {
      error:
        'Your requests are exceeding the allowable rate limit. Please see https://wiki.musicbrainz.org/XMLWebService for more information.',
    });
  const failed = await web.call('find_music', { query: 'better together' });
  assert.deepEqual(failed.error, {
    code: 'upstream_unavailable',
    message: 'All providers failed: itunes: HTTP 403; deezer: error 4 (Quota limit exceeded); musicbrainz: HTTP 503',
  });
});

test('empty catalogues and timeouts fall through in the configured order', async () => {
  behaviour.deezer = (_req, res) => sendJson(res, 200, { data: [], total: 0 });
  behaviour.itunes = hang;
  const web = await start({ MUSIC_PROVIDERS: 'deezer,itunes,musicbrainz' });
  const outcome = await web.call('find_music', { query: 'better together' });
  assert.equal(outcome.result.provider, 'musicbrainz');
  assert.equal(fixtures.deezer.requests.length, 1);
  assert.equal(fixtures.itunes.requests.length, 1);
});

test('nothing anywhere is not_found', async () => {
  behaviour.itunes = (_req, res) => sendJson(res, 200, { resultCount: 0, results: [] }, 'text/javascript; charset=utf-8');
  behaviour.deezer = (_req, res) => sendJson(res, 200, { data: [], total: 0 });
  const web = await start({ MUSIC_PROVIDERS: 'itunes,deezer' });
  const outcome = await web.call('find_music', { query: 'zzqxv' });
  assert.deepEqual(outcome.error, { code: 'not_found', message: 'No results. itunes: no results; deezer: no results' });
});

test('createMinInterval spaces calls and lets a cancelled waiter go', async () => {
  const pace = createMinInterval(200);
  const started = Date.now();
  await pace(new AbortController().signal);
  await pace(new AbortController().signal);
  assert.ok(Date.now() - started >= 190);
  const controller = new AbortController();
  const waiting = pace(controller.signal);
  controller.abort(new Error('gone'));
  await assert.rejects(waiting, /gone/);
});

test('createMinInterval: a cancelled waiter gives its turn back to those behind it', async () => {
  const pace = createMinInterval(200);
  const started = Date.now();
  await pace(new AbortController().signal);
  const quitter = new AbortController();
  const first = pace(quitter.signal); // turn at ~200 ms
  const second = pace(new AbortController().signal); // turn at ~400 ms, ~200 ms once the first quits
  quitter.abort(new Error('gone'));
  await assert.rejects(first, /gone/);
  await second;
  const waited = Date.now() - started;
  assert.ok(waited >= 190 && waited < 350, `the second waiter got the freed turn after ${waited} ms`);
});

test('createMinInterval: a turn further away than maxWaitMs is refused at once, and books nothing', async () => {
  const pace = createMinInterval(200, { maxWaitMs: 300 });
  await pace(new AbortController().signal);
  const queued = pace(new AbortController().signal); // 200 ms away: fine
  const started = Date.now();
  // Two intervals on (400 ms, less the few ms already gone): past maxWaitMs, so refused.
  await assert.rejects(pace(new AbortController().signal), (err: Error & { code?: string }) => {
    assert.equal(err.name, 'ToolError');
    assert.equal(err.code, 'upstream_unavailable');
    const match = /^rate limited \(the next free slot is (\d+) ms away\)$/.exec(err.message);
    assert.ok(match && Number(match[1]) > 300 && Number(match[1]) <= 400, err.message);
    return true;
  });
  assert.ok(Date.now() - started < 50);
  await queued;
  // The refusal did not push the schedule: the next turn is one interval on, not two.
  const next = Date.now();
  await pace(new AbortController().signal);
  assert.ok(Date.now() - next < 260);
});

test('a burst on musicbrainz is refused as rate limited past the provider timeout and falls through', async () => {
  const web = await start({ MUSIC_PROVIDERS: 'musicbrainz,itunes' });
  const [first, second] = await Promise.all([
    web.call('find_music', { query: 'better together' }),
    web.call('find_music', { query: 'better together' }),
  ]);
  assert.equal(first.result.provider, 'musicbrainz');
  assert.equal(second.result.provider, 'itunes');
  assert.equal(fixtures.musicbrainz.requests.length, 1);
});
