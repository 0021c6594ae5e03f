/**
 * The upstream client against raw HTTP servers on 127.0.0.1 that control every byte and every
 * network chunk: decoding (a byte-order mark, characters split across chunks, malformed UTF-8),
 * the response-size cap and pausing while the client cannot take more.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { UpstreamClient } from '../../../gateway/chat/upstream-client.js';
import { ChatAbort } from '../../../gateway/chat/chat-abort.js';
import { parseConfig, type ModelConfig } from '../../../gateway/config.js';

const agent = new Agent();
const servers: Server[] = [];
after(async () => {
  for (const server of servers) server.close();
  await agent.close();
});

/** A server whose chat route is `reply`; resolves with a client for it. */
async function upstreamWith(reply: (res: ServerResponse) => Promise<void> | void, maxResponseBytes?: number): Promise<UpstreamClient> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => void reply(res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const config = parseConfig({ models: [{ id: 'm', alias: 'mm', upstream: { baseUrl, model: 'x', timeoutMs: 5000 } }] }, {});
  const model: ModelConfig = config.models[0];
  return new UpstreamClient({ modelId: model.id, deployment: model.upstreams[0], dispatcher: agent, maxResponseBytes });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Write `parts` as separate network chunks (a pause between writes keeps them apart). */
async function writeApart(res: ServerResponse, parts: Buffer[], contentType = 'text/event-stream'): Promise<void> {
  res.writeHead(200, { 'content-type': contentType });
  for (const part of parts) {
    res.write(part);
    await sleep(15);
  }
  res.end();
}

function event(content: string): string {
  return `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

async function collect(client: UpstreamClient): Promise<string[]> {
  const data: string[] = [];
  await client.streamChat(
    { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
    { abort: new ChatAbort(), onData: (d) => data.push(d) },
  );
  return data;
}

test('a byte-order mark split across chunks is dropped, and multi-byte characters split across chunks stay whole', async () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(event('h€llo 😀') + event('ü'))]);
  const euro = bytes.indexOf(Buffer.from('€'));
  const emoji = bytes.indexOf(Buffer.from('😀'));
  const cuts = [1, euro + 1, euro + 2, emoji + 1, emoji + 3, bytes.length];
  const parts = cuts.map((cut, i) => bytes.subarray(i === 0 ? 0 : cuts[i - 1], cut));
  const client = await upstreamWith((res) => writeApart(res, parts));
  const data = await collect(client);
  assert.deepEqual(
    data.map((d) => JSON.parse(d).choices[0].delta.content),
    ['h€llo 😀', 'ü'],
  );

  // A JSON answer (a server that ignores `stream: true`) with a BOM and a split character.
  const json = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(JSON.stringify({ choices: [{ index: 0, message: { content: '€' } }] })),
  ]);
  const at = json.indexOf(Buffer.from('€')) + 1;
  const jsonClient = await upstreamWith((res) =>
    writeApart(res, [json.subarray(0, 2), json.subarray(2, at), json.subarray(at)], 'application/json'),
  );
  const [whole] = await collect(jsonClient);
  assert.equal(JSON.parse(whole).choices[0].message.content, '€');
});

test('malformed UTF-8 from the upstream becomes U+FFFD, never a crash', async () => {
  const head = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"a');
  const tail = Buffer.from('b"}}]}\n\n');
  // A lone continuation byte, an invalid byte, and a three-byte sequence cut short.
  const client = await upstreamWith((res) => writeApart(res, [head, Buffer.from([0x80, 0xff, 0xe2, 0x82]), tail]));
  const data = await collect(client);
  assert.equal(JSON.parse(data[0]).choices[0].delta.content, 'a\ufffd\ufffd\ufffdb');
});

test('a response body past the cap fails the call with 502 upstream_error "response too large", streamed or JSON', async () => {
  const streamed = await upstreamWith(
    (res) => writeApart(res, [Buffer.from(event('x'.repeat(600))), Buffer.from(event('y'.repeat(600)))]),
    1000,
  );
  const seen: string[] = [];
  await assert.rejects(streamed.streamChat({ messages: [], max_tokens: 1 }, { abort: new ChatAbort(), onData: (d) => seen.push(d) }), {
    status: 502,
    code: 'upstream_error',
    message: 'The upstream for model "m" failed: response too large (over 1000 bytes).',
  });
  assert.equal(seen.length, 1);
  // A line that never ends would otherwise sit in the parser's buffer without bound.
  const endless = await upstreamWith(
    (res) => writeApart(res, [Buffer.from(`data: ${'z'.repeat(800)}`), Buffer.from('z'.repeat(800))]),
    1000,
  );
  await assert.rejects(collect(endless), { code: 'upstream_error', message: /response too large/ });
  const json = await upstreamWith(
    (res) =>
      writeApart(
        res,
        [Buffer.from(`{"choices":[{"index":0,"message":{"content":"${'j'.repeat(700)}`), Buffer.from(`${'j'.repeat(700)}"}}]}`)],
        'application/json',
      ),
    1000,
  );
  await assert.rejects(collect(json), { code: 'upstream_error', message: /response too large/ });
});

test('a throwing onData (an in-stream error) ends the call with that error and drops the connection', async () => {
  let closed!: () => void;
  const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
  const client = await upstreamWith(async (res) => {
    res.on('close', closed);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"error":{"message":"boom"}}\n\n');
    // The rest would come much later: the gateway must not wait for it.
  });
  const failure = new Error('in-stream error');
  await assert.rejects(
    client.streamChat(
      { messages: [], max_tokens: 1 },
      {
        abort: new ChatAbort(),
        onData: () => {
          throw failure;
        },
      },
    ),
    failure,
  );
  await connectionClosed;
});

test('while the client cannot take more (drained() pending), the upstream is not read', async () => {
  const client = await upstreamWith((res) =>
    writeApart(
      res,
      [event('1'), event('2'), event('3')].map((e) => Buffer.from(e)),
    ),
  );
  const seen: string[] = [];
  let release!: () => void;
  const full = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  const call = client.streamChat(
    { messages: [], max_tokens: 1 },
    {
      abort: new ChatAbort(),
      onData: (d) => seen.push(JSON.parse(d).choices[0].delta.content),
      drained: () => (asked++ === 0 ? full : undefined),
    },
  );
  await sleep(120); // every chunk has been sent by now
  assert.deepEqual(seen, ['1']);
  release();
  await call;
  assert.deepEqual(seen, ['1', '2', '3']);
});

test('an `error:` SSE field (llama.cpp before its server-context rewrite) fails the call with 502 and its message', async () => {
  const client = await upstreamWith((res) =>
    writeApart(res, [
      Buffer.from(event('Il est')),
      Buffer.from('error: {"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}\n\n'),
      Buffer.from('data: [DONE]\n\n'),
    ]),
  );
  await assert.rejects(collect(client), {
    status: 502,
    code: 'upstream_error',
    message: 'The upstream for model "m" failed: it sent an error in the stream: the request exceeds the available context size.',
  });
});

test('onDone is told of data: [DONE], which never reaches onData; tools go out with parallel_tool_calls', async () => {
  let body = '';
  const server = createServer((req, res) => {
    req.on('data', (piece) => (body += String(piece)));
    req.on('end', () => void writeApart(res, [Buffer.from(event('a')), Buffer.from('data: [DONE]\n\n')]));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const config = parseConfig({ models: [{ id: 'm', alias: 'mm', upstream: { baseUrl, model: 'x', timeoutMs: 5000 } }] }, {});
  const client = new UpstreamClient({ modelId: 'm', deployment: config.models[0].upstreams[0], dispatcher: agent });
  const seen: string[] = [];
  let done = 0;
  const tools = [{ type: 'function' as const, function: { name: 'get_time', description: 'd', parameters: { type: 'object' } } }];
  await client.streamChat(
    { messages: [], max_tokens: 1, tools, tool_choice: 'auto' },
    { abort: new ChatAbort(), onData: (d) => seen.push(d), onDone: () => done++ },
  );
  assert.deepEqual([seen.length, done], [1, 1]);
  const sent = JSON.parse(body) as { parallel_tool_calls?: boolean; tools: unknown[] };
  assert.deepEqual([sent.parallel_tool_calls, sent.tools], [true, tools]);
});

test('a JSON call sends stream: false without stream_options, asks for JSON, and hands over the whole body once; no first-token timeout cuts it', async () => {
  let body = '';
  let accept: string | undefined;
  const completion = {
    choices: [{ index: 0, message: { role: 'assistant', content: 'Il est 14 h 05 à Paris ☕.' }, finish_reason: 'stop' }],
  };
  const bytes = Buffer.from(JSON.stringify(completion));
  const server = createServer((req, res) => {
    accept = req.headers.accept;
    req.on('data', (piece) => (body += String(piece)));
    // Two network chunks, the cut inside "à": nothing arrives before the first; a 1 ms first-token timeout would fire.
    const cut = bytes.indexOf(Buffer.from('à')) + 1;
    req.on('end', () => void writeApart(res, [bytes.subarray(0, cut), bytes.subarray(cut)], 'application/json'));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const config = parseConfig({ models: [{ id: 'm', alias: 'mm', upstream: { baseUrl, model: 'x', timeoutMs: 5000 } }] }, {});
  const client = new UpstreamClient({ modelId: 'm', deployment: config.models[0].upstreams[0], dispatcher: agent });
  const wholes: string[] = [];
  let done = 0;
  // A description with non-ASCII characters: the tool offer goes out as cached UTF-8 bytes.
  const tools = [
    { type: 'function' as const, function: { name: 'get_time', description: 'Time — anywhere…', parameters: { type: 'object' } } },
  ];
  await client.streamChat(
    { messages: [{ role: 'user', content: 'Quelle heure est-il à Paris ?' }], max_tokens: 1, tools, tool_choice: 'auto' },
    {
      abort: new ChatAbort(),
      json: true,
      firstTokenTimeoutMs: 1,
      onData: () => assert.fail('a JSON body is no SSE event'),
      onCompletion: (whole) => wholes.push(whole),
      onDone: () => done++,
    },
  );
  assert.deepEqual(wholes, [JSON.stringify(completion)]);
  assert.equal(done, 1);
  assert.equal(accept, 'application/json');
  const sent = JSON.parse(body) as Record<string, unknown>;
  assert.equal(sent.stream, false);
  assert.equal('stream_options' in sent, false);
  assert.deepEqual(sent.tools, tools);
  assert.deepEqual(sent.messages, [{ role: 'user', content: 'Quelle heure est-il à Paris ?' }]);
});
