import { test, before, after, beforeEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { apiKeyFor, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, postChat, startChatGateway, traceOf } from './chat-harness.js';
import { fixtureServer, waitFor } from '../tools/fixture-servers.js';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
let key: string;
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-stream-'));
const cancelLog = join(scratch, 'cancelled.log');
const startLog = join(scratch, 'started.log');
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({ upstream, slowEnv: { SLOW_CANCEL_LOG: cancelLog, SLOW_START_LOG: startLog } });
  key = await apiKeyFor(gateway);
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

const ask = { model: 'conductor', messages: [{ role: 'user' as const, content: 'Tell me.' }] };

/**
 * Issue 11: a disconnect stops the upstream call and the tool calls at once. The tests wait for the
 * fixtures to see it happen; how fast it happens belongs to a benchmark, not a timed assertion.
 */
function lines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** POST a streaming chat with fetch and return the response (body unread). */
function streamRaw(body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key),
    body: JSON.stringify({ ...ask, stream: true, ...body }),
    signal,
  });
}

/** Split an SSE body into its events: data payloads and comment lines. */
function events(text: string): Array<{ data?: string; comment?: string }> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => (block.startsWith(': ') ? { comment: block.slice(2) } : { data: block.replace(/^data: /, '') }));
}

const script = (): Turn[] => [
  { text: ['Checking', ' first.'], reasoning: 'hmm', toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] },
  { text: ['<think>plan', '</think>\n\nThe ', 'answer', ' is <b>42</b>.'] },
];

test('streamed deltas join to exactly the content a non-streaming request returns for the same script', async () => {
  const client = openaiFor(gateway, key);
  upstream.script(...script());
  const whole = await client.chat.completions.create(ask);
  upstream.script(...script());
  const stream = await client.chat.completions.create({ ...ask, stream: true });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const joined = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(whole.choices[0].message.content, 'Checking first.\n\nThe answer is <b>42</b>.');
  assert.equal(joined, whole.choices[0].message.content);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  assert.equal(chunks[0].model, 'svc-32b-conductor');
  assert.match(chunks[0].id, /^chatcmpl-\d+$/);
  assert.ok(chunks.every((c) => c.id === chunks[0].id));
  const last = chunks.at(-1)!;
  assert.equal(last.choices[0].finish_reason, 'stop');
  assert.deepEqual(
    traceOf(last).map((t) => [t.round, t.tool, t.ok]),
    [[1, 'echo', true]],
  );
  assert.equal((last as unknown as { credits?: unknown }).credits, undefined); // free mode
});

test('SSE headers, the role first, tool comments while tools run, the finish chunk, then [DONE]', async () => {
  upstream.script(
    {
      toolCalls: [
        { name: 'echo', arguments: '{"text":"y"}' },
        { name: 'sleep', arguments: '{"ms":1}' },
      ],
    },
    { text: 'Done.' },
  );
  const res = await streamRaw({});
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assert.equal(res.headers.get('cache-control'), 'no-cache');
  assert.equal(res.headers.get('x-accel-buffering'), 'no');
  const list = events(await res.text());
  assert.deepEqual(list.slice(0, 2), [{ comment: 'tool echo' }, { comment: 'tool sleep' }]);
  const data = list.filter((e) => e.data !== undefined).map((e) => e.data!);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'Done.' });
  assert.equal(chunks[1].choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks[1].choices[0].delta, {});
  assert.equal(chunks[1].tool_trace.length, 2);
  assert.equal(chunks.length, 2); // no usage chunk unless asked
});

test('stream_options.include_usage adds a usage chunk with no choices, summed over every call', async () => {
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"z"}' }], usage: { prompt_tokens: 100, completion_tokens: 7 } },
    { text: 'Z.', usage: { prompt_tokens: 150, completion_tokens: 3 } },
  );
  const stream = await openaiFor(gateway, key).chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const last = chunks.at(-1)!;
  assert.deepEqual(last.choices, []);
  assert.deepEqual(last.usage, { prompt_tokens: 250, completion_tokens: 10, total_tokens: 260 });
  // A streaming client's calls stream from the upstream, asking for its usage.
  for (const { body } of upstream.requests) {
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
  }
});

test('deltas are relayed before the upstream has finished', async () => {
  upstream.script({ text: ['Hello', ' world', '!'], holdLast: true });
  const stream = await openaiFor(gateway, key).chat.completions.create({ ...ask, stream: true, tool_choice: 'none' });
  const seen: string[] = [];
  for await (const chunk of stream) {
    const text = chunk.choices[0]?.delta?.content;
    if (text) seen.push(text);
    if (seen.length === 2 && text) {
      // The fixture is holding its last chunk: what we have came through while it still streams.
      await upstream.held();
      assert.equal(upstream.requests[0].finished, false);
      upstream.release();
    }
  }
  assert.deepEqual(seen, ['Hello', ' world', '!']);
});

test('an error after the stream began is a final chunk with error and finish_reason "error", then [DONE]', async () => {
  upstream.script(
    { text: 'Looking.', toolCalls: [{ name: 'echo', arguments: '{"text":"q"}' }] },
    { status: 400, body: { error: { message: 'context too long' } } },
  );
  const res = await streamRaw({});
  assert.equal(res.status, 200);
  const data = events(await res.text())
    .filter((e) => e.data)
    .map((e) => e.data!);
  assert.equal(data.at(-1), '[DONE]');
  const final = JSON.parse(data.at(-2)!);
  assert.equal(final.choices[0].finish_reason, 'error');
  assert.deepEqual(final.error, {
    message: 'The upstream for model "svc-32b-conductor" rejected the request (HTTP 400): context too long',
    type: 'invalid_request_error',
    code: 'upstream_invalid_request',
    param: null,
  });
  assert.equal(JSON.parse(data[0]).choices[0].delta.content, 'Looking.');
});

test("errors decided before the stream begins are plain HTTP errors, the first upstream call's refusal included", async () => {
  const unknown = await streamRaw({ model: 'nope' });
  assert.equal(unknown.status, 404);
  assert.equal(((await unknown.json()) as { error: { code: string } }).error.code, 'model_not_found');
  // The stream begins only once the upstream has accepted the first call, so its 4xx (context
  // too long) is still an honest HTTP 400, as without streaming.
  upstream.script({ status: 400, body: { error: { message: 'too long' } } });
  const rejected = await streamRaw({});
  assert.equal(rejected.status, 400);
  assert.match(rejected.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await rejected.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'upstream_invalid_request');
  assert.match(body.error.message, /too long/);
});

test('a client that disconnects mid-stream aborts the upstream call at once, and the gateway carries on', async () => {
  upstream.script({ text: ['first', ' never'], holdLast: true });
  const controller = new AbortController();
  const res = await streamRaw({ tool_choice: 'none' }, controller.signal);
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  assert.match(new TextDecoder().decode(value), /"content":"first"/);
  await upstream.held();
  controller.abort();
  const aborted = await upstream.abortedRequest();
  assert.equal(aborted, upstream.requests[0]);
  // The fixture holds its last chunk until released, so only the gateway's abort can have closed it.
  upstream.release();

  upstream.script({ text: 'Still here.' });
  const after = await postChat(gateway, { ...ask, tool_choice: 'none' }, authHeaders(key));
  assert.equal(after.status, 200);
  assert.equal(after.body.choices[0].message.content, 'Still here.');
});

test('a client that disconnects while tools run cancels the tool calls at the MCP server', async () => {
  upstream.script({
    toolCalls: [
      { name: 'sleep', arguments: '{"ms":20000,"tag":"s1"}' },
      { name: 'sleep', arguments: '{"ms":20000,"tag":"s2"}' },
    ],
  });
  const controller = new AbortController();
  const res = await streamRaw({}, controller.signal);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(': tool sleep')) text += new TextDecoder().decode((await reader.read()).value);
  await waitFor('both calls at the server', () => ['started s1', 'started s2'].every((line) => lines(startLog).includes(line)));
  controller.abort();
  await waitFor('both tool calls cancelled', () => lines(cancelLog).length === 2, 5000);
  assert.deepEqual(lines(cancelLog).sort(), ['cancelled s1', 'cancelled s2']);
  assert.equal(upstream.requests.length, 1); // no further round
});

test('a non-streaming client that disconnects aborts the upstream call too', async () => {
  upstream.script({ text: 'slow', delayMs: 5000 });
  const controller = new AbortController();
  const pending = fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key),
    body: JSON.stringify({ ...ask, tool_choice: 'none' }),
    signal: controller.signal,
  }).catch((err: Error) => err);
  await waitFor('the upstream call', () => upstream.requests.length === 1, 5000);
  controller.abort();
  assert.equal(((await pending) as Error).name, 'AbortError');
  await upstream.abortedRequest();
  await waitFor('the request log line', () => gateway.logs.some((l) => l.status === 499), 5000);
});

test('a streaming client that disconnects mid-answer is logged as 499, once', async () => {
  upstream.script({ text: ['Started', ' never finished'], holdLast: true });
  const controller = new AbortController();
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...authHeaders(key), 'x-request-id': 'stream-gone-1' },
    body: JSON.stringify({ ...ask, tool_choice: 'none', stream: true }),
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('Started')) text += new TextDecoder().decode((await reader.read()).value);
  await upstream.held();
  controller.abort();
  await upstream.abortedRequest();
  upstream.release();
  await waitFor('the request log line', () => gateway.logs.some((l) => l.reqId === 'stream-gone-1' && l.msg === 'request'), 5000);
  const lines = gateway.logs.filter((l) => l.reqId === 'stream-gone-1' && l.msg === 'request');
  assert.deepEqual(
    lines.map((l) => l.status),
    [499],
  );
});

const cudaError = { object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', code: 500 };
const cudaMessage = 'The upstream for model "svc-32b-conductor" failed: it sent an error in the stream: CUDA out of memory.';

test('an error inside the upstream stream fails the chat: 502 upstream_error without a stream, an error chunk within one', async () => {
  upstream.script({ streamError: cudaError });
  const whole = await postChat(gateway, { ...ask, tool_choice: 'none' }, authHeaders(key));
  assert.equal(whole.status, 502);
  assert.deepEqual(whole.body.error, { message: cudaMessage, type: 'upstream_error', code: 'upstream_error', param: null });

  // Streamed: what was shown stays; the text the failed call still held back ('<thi', maybe a
  // tag) is not flushed before the error chunk.
  upstream.script({ text: ['Partly', ' <thi'], streamError: cudaError });
  const res = await streamRaw({ tool_choice: 'none' });
  assert.equal(res.status, 200);
  const data = events(await res.text())
    .filter((e) => e.data)
    .map((e) => e.data!);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  assert.deepEqual(
    chunks.slice(0, -1).map((c) => c.choices[0].delta.content),
    ['Partly', ' '],
  );
  assert.equal(chunks.at(-1).choices[0].finish_reason, 'error');
  assert.equal(chunks.at(-1).error.message, cudaMessage);
});

test('a model whose template opens <think> in the prompt: its reasoning is dropped, streamed or not, once it showed a bare </think>', async () => {
  const client = openaiFor(gateway, key);
  // The first call of this model shows its bare </think> before any visible text: dropped at once.
  upstream.script({ text: ['\n', 'Let me plan.</think>', '\n\nFirst answer.'] });
  const first = await client.chat.completions.create({ ...ask, model: 'operator', tool_choice: 'none' });
  assert.equal(first.choices[0].message.content, 'First answer.');
  // From now on its calls hold text until the reasoning ends, so reasoning in many chunks is gone too.
  const r1 = (): Turn => ({ text: ['Okay, the user', ' asks something.', '\nI will answer.</thi', 'nk>\n\nThe ', 'answer.'] });
  upstream.script(r1());
  const whole = await client.chat.completions.create({ ...ask, model: 'operator', tool_choice: 'none' });
  upstream.script(r1());
  const stream = await client.chat.completions.create({ ...ask, model: 'operator', tool_choice: 'none', stream: true });
  let joined = '';
  for await (const chunk of stream) joined += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(whole.choices[0].message.content, 'The answer.');
  assert.equal(joined, 'The answer.');
});

describe('keep-alive: headers once accepted, a comment after every quiet period', () => {
  let quiet: TestGateway;
  let quietKey: string;
  before(async () => {
    quiet = await startChatGateway({
      upstream,
      config: (json) => {
        (json.chat as Record<string, unknown> | undefined) ?? (json.chat = {});
        (json.chat as Record<string, unknown>).keepAliveMs = 50;
        json.mcpServers = { slow: fixtureServer('slow') };
      },
    });
    quietKey = await apiKeyFor(quiet);
  });
  after(() => quiet?.stop());

  const post = (body: Record<string, unknown>) =>
    fetch(`${quiet.url}/v1/chat/completions`, {
      method: 'POST',
      headers: authHeaders(quietKey),
      body: JSON.stringify({ ...ask, stream: true, ...body }),
    });

  /** The comments that came before the first data event. */
  const commentsBeforeData = (text: string) => {
    const list = events(text);
    return list
      .slice(
        0,
        list.findIndex((e) => e.data !== undefined),
      )
      .map((e) => e.comment);
  };

  test('the status line comes once the upstream accepts, before it has answered, and keep-alives while it is silent', async () => {
    // The upstream sends its headers and first chunk at once, then is silent 300 ms between chunks.
    upstream.script({ text: 'Late.', chunkDelayMs: 300 });
    const res = await post({ tool_choice: 'none' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    assert.notEqual(upstream.requests[0]?.finished, true, 'headers arrived while the upstream had not answered');
    const comments = commentsBeforeData(await res.text());
    assert.ok(comments.length >= 3 && comments.every((c) => c === 'keepalive'), JSON.stringify(comments));
  });

  test('keep-alives while the model only reasons, and while a tool runs', async () => {
    upstream.script({ reasoning: ['a', 'b', 'c', 'd', 'e', 'f'], text: 'Thought.', chunkDelayMs: 40 });
    const reasoning = commentsBeforeData(await (await post({ tool_choice: 'none' })).text());
    assert.ok(reasoning.filter((c) => c === 'keepalive').length >= 2, JSON.stringify(reasoning));

    upstream.script({ toolCalls: [{ name: 'sleep', arguments: '{"ms":300}' }] }, { text: 'Slept.' });
    const tools = commentsBeforeData(await (await post({})).text());
    assert.equal(tools[0], 'tool sleep');
    assert.ok(tools.slice(1).filter((c) => c === 'keepalive').length >= 3, JSON.stringify(tools));
  });
});
