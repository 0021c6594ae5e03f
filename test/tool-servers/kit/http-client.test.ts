import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpFailure, HttpStatusError, httpJson, httpRequest } from '../../../tool-servers/kit/index.js';

let server: Server;
let base: string;
const seen: Array<{ method?: string; headers: Record<string, unknown>; body: string }> = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method, headers: req.headers, body });
      if (req.url === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      else if (req.url === '/not-json') res.writeHead(200).end('<html>');
      else if (req.url === '/latin1')
        res.writeHead(200, { 'content-type': 'text/plain; charset="ISO-8859-1"' }).end(Buffer.from('Café crème', 'latin1'));
      else if (req.url === '/sjis')
        res.writeHead(200, { 'content-type': 'text/plain; charset=Shift_JIS' }).end(Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]));
      else if (req.url === '/unknown-charset') res.writeHead(200, { 'content-type': 'text/plain; charset=x-no-such' }).end('naïve');
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(10_000));
      else if (req.url === '/status') res.writeHead(429).end('slow down');
      else if (req.url === '/hang') setTimeout(() => res.end('late'), 5000).unref();
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('httpJson parses a 2xx JSON body and sends JSON bodies with a user agent', async () => {
  assert.deepEqual(await httpJson(`${base}/json`, { body: { q: 1 } }), { ok: true });
  const last = seen.at(-1)!;
  assert.equal(last.method, 'POST');
  assert.equal(last.headers['content-type'], 'application/json');
  assert.equal(last.headers.accept, 'application/json');
  assert.match(String(last.headers['user-agent']), /^Switchyard\//);
  assert.equal(last.body, '{"q":1}');
});

test('a non-2xx status is an HttpStatusError keeping the body', async () => {
  await assert.rejects(httpJson(`${base}/status`), (err: unknown) => {
    assert.ok(err instanceof HttpStatusError);
    assert.deepEqual([err.status, err.body, err.message], [429, 'slow down', 'HTTP 429']);
    return true;
  });
});

test('a body that is not JSON is an HttpFailure', async () => {
  await assert.rejects(httpJson(`${base}/not-json`), { name: 'HttpFailure', message: 'response is not valid JSON' });
});

test('a body over the size cap fails with too_large', async () => {
  await assert.rejects(httpRequest(`${base}/big`, { maxBytes: 1000 }), (err: unknown) => {
    assert.ok(err instanceof HttpFailure);
    assert.deepEqual([err.kind, err.message], ['too_large', 'response larger than 1000 bytes']);
    return true;
  });
  assert.equal((await httpRequest(`${base}/big`, { maxBytes: 20_000 })).text.length, 10_000);
});

test('a slow server fails with timeout; the caller signal fails with aborted', async () => {
  await assert.rejects(httpRequest(`${base}/hang`, { timeoutMs: 200 }), {
    name: 'HttpFailure',
    kind: 'timeout',
    message: 'timed out after 200 ms',
  });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(httpRequest(`${base}/hang`, { signal: controller.signal, timeoutMs: 5000 }), {
    name: 'HttpFailure',
    kind: 'aborted',
  });
});

test('a refused connection is a network failure without the URL in the message', async () => {
  await assert.rejects(httpRequest('http://127.0.0.1:9/secret-key-in-path'), (err: unknown) => {
    assert.ok(err instanceof HttpFailure);
    assert.equal(err.kind, 'network');
    assert.doesNotMatch(err.message, /secret-key/);
    return true;
  });
});

test('the body is decoded in the charset the content-type names; an unknown one is read as UTF-8', async () => {
  assert.equal((await httpRequest(`${base}/latin1`)).text, 'Café crème');
  assert.equal((await httpRequest(`${base}/sjis`)).text, '日本語');
  const unknown = await httpRequest(`${base}/unknown-charset`);
  assert.equal(unknown.text, 'naïve');
  assert.deepEqual(unknown.bytes, Buffer.from('naïve', 'utf8'));
});
