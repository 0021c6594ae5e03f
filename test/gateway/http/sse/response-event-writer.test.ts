/**
 * The Responses event writer on a real HTTP server: `event:` and `data:` per event with the
 * sequence numbered from 0, no `[DONE]`, keep-alives in quiet periods, and backpressure (drained()
 * pending while the client reads nothing).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { ResponseEventWriter } from '../../../../gateway/http/sse/response-event-writer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let handler: (res: ServerResponse) => Promise<void> | void = () => {};
const server = createServer((_req, res) => void handler(res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
after(() => {
  server.closeAllConnections();
  server.close();
});

function get(): Promise<{ headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ headers: res.headers, body: text }));
    })
      .on('error', reject)
      .end();
  });
}

test('events go out as event/data pairs numbered from 0, keep-alives between, and the end is the end', async () => {
  handler = async (res) => {
    const events = new ResponseEventWriter(res, 30);
    events.begin();
    events.send('response.created', { response: { id: 'resp_1' } });
    await sleep(80);
    events.send('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'hi\nthere', logprobs: [] });
    events.send('response.completed', { response: { id: 'resp_1' } });
    events.end();
  };
  const { headers, body } = await get();
  assert.equal(headers['content-type'], 'text/event-stream');
  const blocks = body.split('\n\n').filter(Boolean);
  assert.ok(blocks.includes(': keepalive'), body);
  const events = blocks.filter((b) => b.startsWith('event: '));
  assert.deepEqual(events, [
    'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1"},"sequence_number":0}',
    'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi\\nthere","logprobs":[],"sequence_number":1}',
    'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_1"},"sequence_number":2}',
  ]);
  assert.ok(!body.includes('[DONE]'));
});

test('drained() is pending while the client reads nothing and settles when it reads again', async () => {
  let outcome!: (value: { pending: boolean; settled: Promise<void> }) => void;
  const result = new Promise<{ pending: boolean; settled: Promise<void> }>((resolve) => (outcome = resolve));
  handler = async (res) => {
    const events = new ResponseEventWriter(res, 10_000);
    events.begin();
    assert.equal(events.drained(), undefined);
    const delta = 'x'.repeat(64 * 1024);
    for (let i = 0; i < 1000 && !res.writableNeedDrain; i++) events.send('response.output_text.delta', { delta });
    const wait = events.drained();
    outcome({ pending: wait !== undefined, settled: wait!.then(() => events.end()) });
  };
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const { pending, settled } = await result;
  assert.equal(pending, true);
  socket.resume();
  socket.on('data', () => {});
  await settled;
  socket.destroy();
});
