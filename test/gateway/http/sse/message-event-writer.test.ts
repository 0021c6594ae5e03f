/**
 * The Messages event writer on a real HTTP server: `event:` and `data:` per event (the type in
 * both), no `[DONE]`, the format's `ping` event (not a comment) when the stream is quiet, and the
 * `error` event's body.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MessageEventWriter } from '../../../../gateway/http/sse/message-event-writer.js';
import { messageErrorBody } from '../../../../gateway/messages/message-errors.js';
import { RateLimited } from '../../../../gateway/errors.js';

let handler: (res: ServerResponse) => Promise<void> | void = () => {};
const server = createServer((_req, res) => void handler(res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
after(() => {
  server.closeAllConnections();
  server.close();
});

/** GET the stream; `onText` sees the text so far as it arrives. */
function get(onText: (text: string) => void = () => {}): Promise<{ headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (piece: string) => {
        text += piece;
        onText(text);
      });
      res.on('end', () => resolve({ headers: res.headers, body: text }));
    })
      .on('error', reject)
      .end();
  });
}

test('events go out as event/data pairs, a quiet stream sends ping events, and message_stop is the end', async () => {
  let pinged!: () => void;
  const ping = new Promise<void>((resolve) => (pinged = resolve));
  handler = async (res) => {
    const events = new MessageEventWriter(res, 20);
    events.begin();
    events.send('message_start', { message: { id: 'msg_1' } });
    // Quiet until the client has seen the keep-alive ping.
    await ping;
    events.send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi\nthere' } });
    events.send('message_stop', {});
    events.end();
  };
  const { headers, body } = await get((text) => text.includes('event: ping') && pinged());
  assert.equal(headers['content-type'], 'text/event-stream');
  const blocks = body.split('\n\n').filter(Boolean);
  assert.ok(!blocks.some((b) => b.startsWith(':')), 'no comments: the format has its ping');
  assert.deepEqual(
    blocks.filter((b) => !b.startsWith('event: ping')),
    [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi\\nthere"}}',
      'event: message_stop\ndata: {"type":"message_stop"}',
    ],
  );
  assert.ok(blocks.includes('event: ping\ndata: {"type":"ping"}'));
  assert.ok(!body.includes('[DONE]'));
});

test('an error after the stream began is the format’s error event', async () => {
  handler = (res) => {
    const events = new MessageEventWriter(res, 10_000);
    events.begin();
    events.ping();
    events.error(messageErrorBody(new RateLimited('Slow down.', 2)));
    events.end();
  };
  const { body } = await get();
  assert.equal(
    body,
    'event: ping\ndata: {"type":"ping"}\n\n' +
      'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"rate_limited: Slow down."}}\n\n',
  );
});
