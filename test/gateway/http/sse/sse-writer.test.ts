/**
 * The SSE writer on a real HTTP server: headers at begin(), keep-alive comments only after
 * silence and never after the end, a draining shutdown's `connection: close` kept, and drain.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { SseWriter } from '../../../../gateway/http/sse/sse-writer.js';

const identity = { id: 'chatcmpl-1', created: 1, model: 'm' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let handler: (res: ServerResponse) => Promise<void> | void = () => {};
const server = createServer((_req, res) => void handler(res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
after(() => {
  server.closeAllConnections();
  server.close();
});

/** GET the server; resolves with the headers as soon as they arrive, and the whole body later. */
function get(): Promise<{ headers: Record<string, string | string[] | undefined>; body: Promise<string> }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (piece: string) => (text += piece));
      resolve({ headers: res.headers, body: new Promise((done) => res.on('end', () => done(text))) });
    })
      .on('error', reject)
      .end();
  });
}

test('begin() sends the headers at once; a keep-alive comment follows each quiet period, none after the end', async () => {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  handler = async (res) => {
    const sse = new SseWriter(res, identity, 40);
    sse.begin();
    await sleep(100); // ~2 keep-alives
    sse.content('hi');
    await sleep(20); // content just went out: no keep-alive yet
    sse.finish({ finishReason: 'stop', toolTrace: [] });
    sse.done();
    finish();
  };
  const { headers, body } = await get();
  assert.equal(headers['content-type'], 'text/event-stream');
  assert.equal(headers['cache-control'], 'no-cache');
  assert.equal(headers['x-accel-buffering'], 'no');
  const text = await body;
  await finished;
  const blocks = text.split('\n\n').filter(Boolean);
  const keepAlives = blocks.filter((b) => b === ': keepalive');
  assert.ok(keepAlives.length >= 1 && keepAlives.length <= 3, text);
  assert.ok(blocks.indexOf(': keepalive') < blocks.findIndex((b) => b.includes('"content":"hi"')));
  assert.equal(blocks.at(-1), 'data: [DONE]');
  assert.equal(blocks.filter((b) => b.startsWith('data:')).length, 3);
});

test('stop() ends the keep-alives on a path that never reaches done()', async () => {
  handler = async (res) => {
    const sse = new SseWriter(res, identity, 20);
    sse.begin();
    sse.stop();
    await sleep(100);
    res.end('data: [DONE]\n\n');
  };
  const { body } = await get();
  assert.equal(await body, 'data: [DONE]\n\n');
});

test('a draining shutdown’s connection: close is not overridden', async () => {
  handler = (res) => {
    res.setHeader('Connection', 'close');
    const sse = new SseWriter(res, identity, 10_000);
    sse.begin();
    sse.done();
  };
  const { headers, body } = await get();
  await body;
  assert.equal(headers.connection, 'close');
});

test('drained() is pending while the client reads nothing and settles when it reads again', async () => {
  let outcome!: (value: { pending: boolean; same: boolean; settled: Promise<void> }) => void;
  const result = new Promise<{ pending: boolean; same: boolean; settled: Promise<void> }>((resolve) => (outcome = resolve));
  handler = async (res) => {
    const sse = new SseWriter(res, identity, 10_000);
    sse.begin();
    assert.equal(sse.drained(), undefined);
    const piece = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 1000 && !res.writableNeedDrain; i++) sse.content(piece);
    const wait = sse.drained();
    outcome({ pending: wait !== undefined, same: wait === sse.drained(), settled: wait!.then(() => sse.done()) });
  };
  const socket = connect(port, '127.0.0.1');
  socket.pause(); // reads nothing: the server's buffers fill
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const { pending, same, settled } = await result;
  assert.equal(pending, true);
  assert.equal(same, true);
  socket.resume();
  socket.on('data', () => {});
  await settled;
  socket.destroy();
});
