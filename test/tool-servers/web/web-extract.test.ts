import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startFixture, sendJson, sendText, hang, type Fixture } from '../../fixtures/web/fixture-server.js';
import { connectWebServer, countingConnect, countingLookup, type WebClient } from '../../fixtures/web/web-client.js';

const article = (name: string) => readFileSync(new URL(`../../fixtures/web/articles/${name}`, import.meta.url), 'utf8');

// Bytes, not text: the page is ISO-8859-1 and names it in a <meta> tag.
const latin1Page = readFileSync(new URL('../../fixtures/web/articles/latin1-article.html', import.meta.url));

// Past the 2 MiB HTML parse cap (but under the 5 MB download cap): a comment fills the middle.
const giantPage = `<html><head><title>Giant</title></head><body><article><h1>Giant</h1><p>${'The opening paragraph of a very long page. '.repeat(20)}</p><!--${'x'.repeat(2_200_000)}--><p>TAIL-MARKER past the parse cap</p></article></body></html>`;

let site: Fixture; // allowed by WEB_EXTRACT_ALLOW
let forbidden: Fixture; // a loopback listener on a port NOT in the allowlist
let web: WebClient | undefined;

before(async () => {
  forbidden = await startFixture((_req, res) => sendText(res, 200, 'internal secrets'));
  site = await startFixture((req, res) => {
    const routes: Record<string, () => void> = {
      '/news': () => sendText(res, 200, article('news-article.html')),
      '/blog': () => sendText(res, 200, article('blog-post.html')),
      '/recipe': () => sendText(res, 200, article('recipe-page.html')),
      '/short': () => sendText(res, 200, '<html><head><title>Tiny</title></head><body><nav>Menu</nav><p>Just one line.</p></body></html>'),
      '/latin1': () => res.writeHead(200, { 'content-type': 'text/html; charset=ISO-8859-1' }).end(latin1Page),
      '/latin1-meta': () => res.writeHead(200, { 'content-type': 'text/html' }).end(latin1Page),
      '/giant': () => sendText(res, 200, giantPage),
      '/plain': () => sendText(res, 200, 'line one\nline two\n', 'text/plain; charset=utf-8'),
      '/data.json': () => sendJson(res, 200, { ok: true, items: [1, 2] }),
      '/image.png': () => sendText(res, 200, 'PNG', 'image/png'),
      '/missing': () => sendText(res, 404, 'not here'),
      '/broken': () => sendText(res, 503, 'down'),
      '/huge': () => sendText(res, 200, `<html><body>${'x'.repeat(300_000)}</body></html>`),
      '/slow': hang,
      '/to-news': () => sendText(res, 302, '', 'text/html', { location: '/news' }),
      '/to-forbidden': () => sendText(res, 302, '', 'text/html', { location: `http://127.0.0.1:${forbidden.port}/admin` }),
      '/to-metadata': () => sendText(res, 301, '', 'text/html', { location: 'http://169.254.169.254/latest/meta-data/' }),
      '/to-file': () => sendText(res, 307, '', 'text/html', { location: 'file:///etc/passwd' }),
      '/loop': () => sendText(res, 302, '', 'text/html', { location: `/loop?n=${Number(req.query.get('n') ?? 0) + 1}` }),
    };
    (routes[req.path] ?? (() => sendText(res, 404, 'no route')))();
  });
});

after(async () => {
  await web?.close();
  await site.close();
  await forbidden.close();
});

beforeEach(async () => {
  await web?.close();
  web = undefined;
});

async function start(env: Record<string, string> = {}, table: Record<string, string[]> = {}): Promise<WebClient> {
  web = await connectWebServer(
    { WEB_EXTRACT_ALLOW: `127.0.0.1:${site.port},news.test:${site.port}`, WEB_EXTRACT_TIMEOUT_MS: '2000', ...env },
    { lookup: countingLookup(table), connect: countingConnect() },
  );
  return web;
}

test('refused URLs fail with url_not_allowed before any DNS lookup or connection', async () => {
  const client = await start();
  const q = forbidden.port;
  const cases: Array<[string, string]> = [
    [`http://127.0.0.1:${q}/`, '127.0.0.1 is a loopback address.'],
    [`http://localhost:${q}/`, 'localhost is a local-only name.'],
    [`http://[::1]:${q}/`, '[::1] is a loopback address.'],
    [`http://0x7f000001:${q}/`, '127.0.0.1 is a loopback address.'],
    [`http://2130706433:${q}/`, '127.0.0.1 is a loopback address.'],
    [`http://0177.0.0.1:${q}/`, '127.0.0.1 is a loopback address.'],
    [`http://127.1:${q}/`, '127.0.0.1 is a loopback address.'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address.'],
    ['http://172.16.0.1/', '172.16.0.1 is a private address.'],
    ['http://192.168.1.1/', '192.168.1.1 is a private address.'],
    ['http://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT address.'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address.'],
    [`http://[::ffff:127.0.0.1]:${q}/`, '[::ffff:7f00:1] is an IPv4-mapped loopback address.'],
    ['http://[fd00::1]/', '[fd00::1] is a unique local (private) address.'],
    ['http://[fd00:ec2::254]/', '[fd00:ec2::254] is a cloud metadata address.'],
    ['http://[64:ff9b::a9fe:a9fe]/', '[64:ff9b::a9fe:a9fe] is a NAT64 cloud metadata address.'],
    ['http://[2002:a00:1::]/', '[2002:a00:1::] is a 6to4 private address.'],
    [`http://0.0.0.0:${q}/`, '0.0.0.0 is an unspecified address.'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a local-only name.'],
    ['file:///etc/passwd', 'Only http and https URLs can be read, not file.'],
    [`ftp://127.0.0.1:${q}/`, 'Only http and https URLs can be read, not ftp.'],
    ['gopher://127.0.0.1:6379/_INFO', 'Only http and https URLs can be read, not gopher.'],
  ];
  for (const [url, reason] of cases) {
    const outcome = await client.call('web_extract', { url });
    assert.deepEqual(outcome.error, { code: 'url_not_allowed', message: `URL not allowed: ${reason}`, param: 'url' }, url);
  }
  assert.deepEqual(client.lookup.calls, []);
  assert.deepEqual(client.connect.calls, []);
  assert.equal(forbidden.connections(), 0);
});

test('a name that resolves to a private address is refused after one lookup and no connection', async () => {
  const client = await start(
    {},
    {
      'intranet.example': ['10.1.2.3'],
      'mixed.example': ['93.184.215.14', '127.0.0.1'],
      'v6.example': ['fd12::5'],
      'mapped.example': ['::ffff:10.0.0.1'],
    },
  );
  for (const [host, reason] of [
    ['intranet.example', 'a private'],
    ['mixed.example', 'a loopback'],
    ['v6.example', 'a unique local (private)'],
    ['mapped.example', 'an IPv4-mapped private'],
  ]) {
    const outcome = await client.call('web_extract', { url: `https://${host}/page` });
    assert.deepEqual(outcome.error, {
      code: 'url_not_allowed',
      message: `URL not allowed: ${host} resolves to ${reason} address.`,
      param: 'url',
    });
  }
  assert.deepEqual(client.lookup.calls, ['intranet.example', 'mixed.example', 'v6.example', 'mapped.example']);
  assert.deepEqual(client.connect.calls, []);
});

test('the socket goes to the address that was checked, never a second resolution', async () => {
  const client = await start({}, { 'public.example': ['93.184.215.14'] });
  const outcome = await client.call('web_extract', { url: 'http://public.example/' });
  // The counting connector refuses anything but loopback, so this fails, but it shows where undici was sent.
  assert.equal(outcome.error.code, 'upstream_unavailable');
  assert.deepEqual(client.lookup.calls, ['public.example']);
  assert.deepEqual(client.connect.calls, [{ hostname: '93.184.215.14', port: '80' }]);
});

test('an allowlisted host name is fetched at its checked address with its own Host header', async () => {
  const client = await start({}, { 'news.test': ['127.0.0.1'] });
  const before = site.requests.length;
  const outcome = await client.call('web_extract', { url: `http://news.test:${site.port}/news` });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  assert.equal(outcome.result.final_url, `http://news.test:${site.port}/news`);
  assert.equal(site.requests[before].headers.host, `news.test:${site.port}`);
  assert.deepEqual(client.lookup.calls, ['news.test']);
  assert.deepEqual(client.connect.calls, [{ hostname: '127.0.0.1', port: String(site.port) }]);
});

test('when the first checked address cannot be reached the next one is tried (an IPv6 record first on an IPv4-only machine)', async () => {
  // The counting connector refuses everything but 127.0.0.1, as an IPv4-only machine refuses IPv6.
  const client = await start({}, { 'news.test': ['2001:db8::1', '127.0.0.1'] });
  const outcome = await client.call('web_extract', { url: `http://news.test:${site.port}/news` });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  assert.deepEqual(client.connect.calls, [
    { hostname: '2001:db8::1', port: String(site.port) },
    { hostname: '127.0.0.1', port: String(site.port) },
  ]);
});

test('a Latin-1 page is decoded by the charset its header names, or failing that its <meta> tag', async () => {
  const client = await start();
  for (const path of ['/latin1', '/latin1-meta']) {
    const outcome = await client.call('web_extract', { url: `http://127.0.0.1:${site.port}${path}` });
    assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
    assert.equal(outcome.result.title, 'La crème brûlée du café', path);
    assert.match(String(outcome.result.content), /Préparée chaque matin au café de la gare/, path);
    assert.doesNotMatch(String(outcome.result.content), /\uFFFD/, path);
  }
});

test('only the first 2 MiB of HTML are parsed: text past it never reaches the DOM', async () => {
  const client = await start();
  const outcome = await client.call('web_extract', { url: `http://127.0.0.1:${site.port}/giant` });
  assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  assert.match(String(outcome.result.content), /The opening paragraph of a very long page\./);
  assert.doesNotMatch(String(outcome.result.content), /TAIL-MARKER/);
});

test('unknown host names are not_found without a connection', async () => {
  const client = await start();
  const outcome = await client.call('web_extract', { url: 'https://nowhere.example/' });
  assert.deepEqual(outcome.error, { code: 'not_found', message: 'The host nowhere.example could not be resolved.', param: 'url' });
  assert.deepEqual(client.connect.calls, []);
});

test('a redirect to a refused address is refused at the redirect, and the forbidden listener sees nothing', async () => {
  const client = await start();
  for (const [path, reason] of [
    ['/to-forbidden', '127.0.0.1 is a loopback address.'],
    ['/to-metadata', '169.254.169.254 is a cloud metadata address.'],
    ['/to-file', 'Only http and https URLs can be read, not file.'],
  ]) {
    const outcome = await client.call('web_extract', { url: `${site.url}${path}` });
    assert.deepEqual(outcome.error, { code: 'url_not_allowed', message: `URL not allowed: ${reason}`, param: 'url' }, path);
  }
  assert.deepEqual(
    client.connect.calls.map((c) => c.port),
    [String(site.port), String(site.port), String(site.port)],
  );
  assert.equal(forbidden.connections(), 0);
  assert.equal(forbidden.requests.length, 0);
});

test('redirects are followed (and re-checked) up to 5, then refused', async () => {
  const client = await start();
  const ok = await client.call('web_extract', { url: `${site.url}/to-news` });
  assert.equal(ok.result.final_url, `${site.url}/news`);
  const looping = await client.call('web_extract', { url: `${site.url}/loop` });
  assert.deepEqual(looping.error, { code: 'upstream_unavailable', message: 'Too many redirects (more than 5).' });
  assert.equal(site.requests.filter((r) => r.path === '/loop').length >= 6, true);
});

test('news article: title, byline, site name and body; navigation, ads and comments gone', async () => {
  const client = await start();
  const { result } = await client.call('web_extract', { url: `${site.url}/news` });
  assert.equal(result.title, 'City Council Approves Riverside Bike Lanes');
  assert.equal(result.site_name, 'The Millbrook Gazette');
  assert.equal(result.byline, 'Dana Whitfield');
  assert.equal(result.truncated, false);
  const content = String(result.content);
  assert.equal(result.length, content.length);
  assert.match(content, /voted 6–1 on Tuesday night to build protected bike lanes/);
  assert.match(content, /## What the project costs/);
  assert.match(content, /\$4\.2 million/);
  for (const boilerplate of [
    'Subscribe for $1',
    'mattress sale',
    'Refinance now',
    'carguy77',
    'Enjoy the traffic jams',
    'All rights reserved',
    'gtag',
  ]) {
    assert.equal(content.includes(boilerplate), false, boilerplate);
  }
});

test('blog post: code blocks survive as Markdown and the sidebar sponsor and comments do not', async () => {
  const client = await start();
  const { result } = await client.call('web_extract', { url: `${site.url}/blog` });
  assert.equal(result.title, 'Understanding Backpressure in Node.js Streams');
  assert.equal(result.site_name, 'Byte Sized');
  const content = String(result.content);
  assert.match(content, /returning `false` from `write\(\)`/);
  assert.match(content, /```\nimport \{ pipeline \} from 'node:stream\/promises';/);
  for (const boilerplate of ['We use cookies', 'CloudHost', 'Popular posts', 'spambot', 'Share this post', 'Powered by']) {
    assert.equal(content.includes(boilerplate), false, boilerplate);
  }
});

test('recipe page: lists become Markdown lists; ads and reviews are dropped; truncation is marked', async () => {
  const client = await start();
  const full = await client.call('web_extract', { url: `${site.url}/recipe` });
  assert.equal(full.result.title, 'Weeknight Lentil Soup');
  const content = String(full.result.content);
  assert.match(content, /-\s+250 g red lentils, rinsed/);
  assert.match(content, /1\.\s+Warm the olive oil/);
  for (const boilerplate of ['Kitchen knives', 'MealBox', 'Jenna', 'where is the meat', 'Log in'])
    assert.equal(content.includes(boilerplate), false, boilerplate);

  const cut = await client.call('web_extract', { url: `${site.url}/recipe`, max_chars: 200 });
  assert.equal(cut.result.truncated, true);
  assert.equal(cut.result.length, content.length);
  assert.equal(cut.result.content, `${content.slice(0, 200)}\n\n[… truncated: 200 of ${content.length} characters shown]`);
});

test('a page too short to be an article still gives its text, without the navigation', async () => {
  const client = await start();
  const { result } = await client.call('web_extract', { url: `${site.url}/short` });
  assert.equal(result.title, 'Tiny');
  assert.equal(result.content, 'Just one line.');
});

test('plain text and JSON pass through unchanged', async () => {
  const client = await start();
  const plain = await client.call('web_extract', { url: `${site.url}/plain` });
  assert.deepEqual(plain.result, {
    url: `${site.url}/plain`,
    final_url: `${site.url}/plain`,
    title: '',
    content: 'line one\nline two\n',
    length: 18,
    truncated: false,
  });
  const json = await client.call('web_extract', { url: `${site.url}/data.json` });
  assert.equal(json.result.content, '{"ok":true,"items":[1,2]}');
});

test('status, content type, size and time limits', async () => {
  const client = await start({ WEB_EXTRACT_MAX_BYTES: '100000', WEB_EXTRACT_TIMEOUT_MS: '500' });
  assert.deepEqual((await client.call('web_extract', { url: `${site.url}/missing` })).error, {
    code: 'not_found',
    message: 'The page answered HTTP 404.',
    param: 'url',
  });
  assert.deepEqual((await client.call('web_extract', { url: `${site.url}/broken` })).error, {
    code: 'upstream_unavailable',
    message: 'The page answered HTTP 503.',
  });
  assert.deepEqual((await client.call('web_extract', { url: `${site.url}/image.png` })).error, {
    code: 'invalid_arguments',
    message: 'The URL serves image/png, which cannot be read as text.',
    param: 'url',
  });
  assert.deepEqual((await client.call('web_extract', { url: `${site.url}/huge` })).error, {
    code: 'upstream_unavailable',
    message: 'The page is larger than 100000 bytes.',
  });
  assert.deepEqual((await client.call('web_extract', { url: `${site.url}/slow` })).error, {
    code: 'timeout',
    message: 'Fetching the page timed out after 500 ms.',
  });
  assert.deepEqual((await client.call('web_extract', { url: 'not a url' })).error, {
    code: 'invalid_arguments',
    message: 'url: not a valid absolute URL',
    param: 'url',
  });
});

test('a DNS lookup that never answers ends at the deadline with no connection', async () => {
  const stuck = Object.assign(
    async (hostname: string) => {
      stuck.calls.push(hostname);
      return new Promise<never>(() => {});
    },
    { calls: [] as string[] },
  );
  web = await connectWebServer({ WEB_EXTRACT_TIMEOUT_MS: '300' }, { lookup: stuck, connect: countingConnect() });
  const outcome = await web.call('web_extract', { url: 'https://slow-dns.example/' });
  assert.deepEqual(outcome.error, { code: 'timeout', message: 'Resolving the host timed out.' });
  assert.deepEqual(stuck.calls, ['slow-dns.example']);
  assert.deepEqual(web.connect.calls, []);
});

test('a redirect to an unparsable location is a failure, not a crash', async () => {
  const odd = await startFixture((_req, res) => sendText(res, 302, '', 'text/html', { location: 'http://[::1' }));
  try {
    const client = await start({ WEB_EXTRACT_ALLOW: `127.0.0.1:${odd.port}` });
    const outcome = await client.call('web_extract', { url: `${odd.url}/` });
    assert.deepEqual(outcome.error, { code: 'upstream_unavailable', message: 'The page redirected to an invalid URL.' });
  } finally {
    await odd.close();
  }
});
