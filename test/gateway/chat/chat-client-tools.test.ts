/**
 * Hybrid tool calling with the official `openai` client: the client's functions next to the
 * gateway's tools, handed back as `tool_calls`, the gateway's rounds spliced back in the
 * continuation, streaming parsed by the client's own stream helper, billing exact per request.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, postChat, startChatGateway, traceOf } from './chat-harness.js';

/** Short enough for the expiry test to wait it out, long enough for every continuation here. */
const KEPT_TTL_MS = 1_500;

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.chat = { keptRoundsTtlMs: KEPT_TTL_MS };
    },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

/** A fresh wallet with a verified key, `credits` and the official client for it. */
async function funded(credits = 100): Promise<{ wallet: string; key: string; client: OpenAI }> {
  const { wallet, key } = await fundedWallet(gateway, credits);
  return { wallet, key, client: openaiFor(gateway, key, wallet) };
}

const readFile: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file on the user machine.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};
const askUser: ChatCompletionTool = {
  type: 'function',
  function: { name: 'ask_user', parameters: { type: 'object', properties: { question: { type: 'string' } } } },
};
const tools = [readFile, askUser];
const user: ChatCompletionMessageParam = { role: 'user', content: 'What does notes.txt say about alpha?' };
/** Every call's usage is 1000 prompt tokens: 1 credit per upstream call, so charges count calls. */
const oneCredit = { usage: { prompt_tokens: 1000, completion_tokens: 0 } };
const CALL_ID = /^call_[A-Za-z0-9]{24}$/;

function charged(response: Response): number {
  return Number(response.headers.get('x-credits-charged'));
}

test('a client-only call comes back as tool_calls with finish_reason "tool_calls"; both tool sets were offered', async () => {
  const { client } = await funded();
  upstream.script({ toolCalls: [{ name: 'read_file', arguments: '{"path":"notes.txt"}' }], ...oneCredit });
  const { data, response } = await client.chat.completions.create({ model: 'conductor', messages: [user], tools }).withResponse();
  const choice = data.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  assert.equal(choice.message.tool_calls!.length, 1);
  const call = choice.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
  assert.match(call.id, CALL_ID); // the upstream's `call_0` is too short to hand out
  assert.deepEqual(call.function, { name: 'read_file', arguments: '{"path":"notes.txt"}' });
  assert.deepEqual(traceOf(data), []);
  assert.equal(charged(response), 1);
  assert.equal(upstream.requests.length, 1);
  const sent = upstream.requests[0].body;
  const names = sent.tools!.map((t) => t.function.name);
  assert.ok(names.includes('echo') && names.includes('read_file') && names.includes('ask_user'));
  assert.deepEqual(
    sent.tools!.find((t) => t.function.name === 'read_file'),
    readFile,
  );
  assert.equal(sent.tool_choice, 'auto');
  assert.equal(sent.parallel_tool_calls, true);
});

test('a mixed round runs the gateway call, hands back the client call with the text so far, and the continuation sees every round', async () => {
  const { client, wallet } = await funded();
  upstream.script(
    { text: 'First a check.', toolCalls: [{ name: 'echo', arguments: '{"text":"one"}', id: 'chatcmpl-tool-aaaaaaaaaaaa' }], ...oneCredit },
    {
      text: 'Now the file.',
      toolCalls: [
        { name: 'echo', arguments: '{"text":"two"}', id: 'chatcmpl-tool-bbbbbbbbbbbb' },
        { name: 'read_file', arguments: '{"path":"notes.txt"}', id: 'chatcmpl-tool-cccccccccccc' },
      ],
      ...oneCredit,
    },
  );
  const first = await client.chat.completions.create({ model: 'conductor', messages: [user], tools }).withResponse();
  const message = first.data.choices[0].message;
  assert.equal(first.data.choices[0].finish_reason, 'tool_calls');
  assert.equal(message.content, 'First a check.\n\nNow the file.');
  // A client call always gets the gateway's own id (some upstreams number theirs: they would collide
  // across conversations); the gateway's own calls keep long, unique upstream ids.
  const fileCall = message.tool_calls![0].id;
  assert.match(fileCall, CALL_ID);
  assert.deepEqual(message.tool_calls, [
    { id: fileCall, type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } },
  ]);
  assert.deepEqual(
    traceOf(first.data).map((t) => [t.round, t.tool, t.ok]),
    [
      [1, 'echo', true],
      [2, 'echo', true],
    ],
  );
  assert.equal(charged(first.response), 2);

  upstream.reset();
  upstream.script({ text: 'It says alpha is ready.', ...oneCredit });
  const conversation: ChatCompletionMessageParam[] = [user, message, { role: 'tool', tool_call_id: fileCall, content: 'alpha: ready' }];
  const second = await client.chat.completions.create({ model: 'conductor', messages: conversation, tools }).withResponse();
  assert.equal(second.data.choices[0].message.content, 'It says alpha is ready.');
  assert.equal(second.data.choices[0].finish_reason, 'stop');
  assert.equal(charged(second.response), 1);
  const seen = upstream.requests[0].body.messages.slice(1);
  assert.deepEqual(seen, [
    { role: 'user', content: 'What does notes.txt say about alpha?' },
    {
      role: 'assistant',
      content: 'First a check.',
      tool_calls: [{ id: 'chatcmpl-tool-aaaaaaaaaaaa', type: 'function', function: { name: 'echo', arguments: '{"text":"one"}' } }],
    },
    { role: 'tool', tool_call_id: 'chatcmpl-tool-aaaaaaaaaaaa', content: '{"text":"one"}' },
    {
      role: 'assistant',
      content: 'Now the file.',
      tool_calls: [
        { id: 'chatcmpl-tool-bbbbbbbbbbbb', type: 'function', function: { name: 'echo', arguments: '{"text":"two"}' } },
        { id: fileCall, type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'chatcmpl-tool-bbbbbbbbbbbb', content: '{"text":"two"}' },
    { role: 'tool', tool_call_id: fileCall, content: 'alpha: ready' },
  ]);

  // Another wallet sending the same ids gets nothing spliced: rounds are kept per wallet.
  upstream.reset();
  const other = await funded();
  await other.client.chat.completions.create({ model: 'conductor', messages: conversation, tools });
  assert.equal(upstream.requests[0].body.messages.length, 4);
  // Each request was billed on its own: 2 + 1 for this wallet.
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 97, total_deposited: 100, total_spent: 3 });
});

test('two client calls in parallel come back together; repeated and missing upstream ids are replaced', async () => {
  const { client } = await funded();
  upstream.script({
    toolCalls: [
      { name: 'read_file', arguments: '{"path":"a"}', id: 'same-id-123456' },
      { name: 'ask_user', arguments: '{"question":"which?"}', id: 'same-id-123456' },
    ],
    toolCallStyle: 'whole',
    ...oneCredit,
  });
  const { data: completion, response } = await client.chat.completions
    .create({ model: 'conductor', messages: [user], tools })
    .withResponse();
  assert.equal(charged(response), 1);
  const calls = completion.choices[0].message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
  assert.deepEqual(
    calls.map((c) => c.function.name),
    ['read_file', 'ask_user'],
  );
  for (const call of calls) assert.match(call.id, CALL_ID);
  assert.notEqual(calls[0].id, calls[1].id);
});

test('the kept rounds expire: the continuation (streamed) still works with the conversation as sent, and a log line says so', async () => {
  const { client, wallet } = await funded();
  upstream.script({
    toolCalls: [
      { name: 'echo', arguments: '{"text":"x"}' },
      { name: 'read_file', arguments: '{"path":"n"}' },
    ],
    ...oneCredit,
  });
  const first = await client.chat.completions.create({ model: 'conductor', messages: [user], tools });
  const message = first.choices[0].message;
  await new Promise((resolve) => setTimeout(resolve, KEPT_TTL_MS + 100));
  upstream.reset();
  upstream.script({ text: 'Done.', ...oneCredit });
  const callId = message.tool_calls![0].id;
  const second = await streamed(client, {
    model: 'conductor',
    messages: [user, message, { role: 'tool', tool_call_id: callId, content: 'n: empty' }],
    tools,
  });
  assert.equal(second.final.choices[0].message.content, 'Done.');
  assert.deepEqual((await gateway.ledger.balance(wallet)).total_spent, 2);
  const seen = upstream.requests[0].body.messages.slice(1);
  assert.deepEqual(
    seen.map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  assert.deepEqual(
    seen[1].tool_calls!.map((c) => (c as { id: string }).id),
    [callId],
  );
  const line = gateway.logs.find((l) => (l.callIds as string[] | undefined)?.includes(callId));
  assert.match(String(line?.msg), /^no kept gateway rounds for these tool calls \(expired/);
});

test('a client function named like a gateway tool is refused with 400 tool_name_conflict, before any upstream call', async () => {
  const { key, wallet } = await funded();
  const res = await postChat(
    gateway,
    { messages: [user], tools: [{ type: 'function', function: { name: 'echo', parameters: { type: 'object' } } }] },
    authHeaders(key, wallet),
  );
  assert.equal(res.status, 400);
  assert.deepEqual(res.body.error, {
    message: 'The function "echo" has the name of one of the gateway\'s tools: rename it.',
    type: 'invalid_request_error',
    param: 'tools',
    code: 'tool_name_conflict',
  });
  const streaming = await postChat(
    gateway,
    { messages: [user], stream: true, tools: [{ type: 'function', function: { name: 'echo' } }] },
    authHeaders(key, wallet),
  );
  assert.equal(streaming.status, 400);
  assert.equal(streaming.body.error.code, 'tool_name_conflict');
  assert.equal(upstream.requests.length, 0);
  assert.deepEqual((await gateway.ledger.balance(wallet)).total_spent, 0);
});

test('the legacy functions parameter stays refused, and tool_choice must name one of the client functions', async () => {
  const { key, wallet } = await funded();
  const functions = await postChat(gateway, { messages: [user], functions: [{ name: 'mine' }] }, authHeaders(key, wallet));
  assert.equal(functions.status, 400);
  assert.equal(functions.body.error.code, 'unsupported_parameter');
  assert.match(functions.body.error.message, /send your functions as "tools" entries of type "function"/);
  const unnamed = await postChat(
    gateway,
    { messages: [user], tools, tool_choice: { type: 'function', function: { name: 'echo' } } },
    authHeaders(key, wallet),
  );
  assert.equal(unnamed.status, 400);
  assert.equal(unnamed.body.error.param, 'tool_choice');
  assert.equal(upstream.requests.length, 0);
});

/** Stream with the client's own helper and return what it assembled. */
async function streamed(client: OpenAI, body: Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'stream'>) {
  const stream = client.chat.completions.stream({ ...body, stream: true });
  const contentDeltas: string[] = [];
  stream.on('content.delta', ({ delta }) => contentDeltas.push(delta));
  const argumentDeltas: string[] = [];
  stream.on('tool_calls.function.arguments.delta', ({ arguments_delta: delta }) => argumentDeltas.push(delta));
  const final: ChatCompletion = await stream.finalChatCompletion();
  return { final, contentDeltas, argumentDeltas };
}

test('streaming: a mixed round streams its text, then the client call as tool_calls deltas after the gateway call ran', async () => {
  const { client, wallet } = await funded();
  const longArgs = JSON.stringify({ path: 'x'.repeat(600) });
  upstream.script({
    text: ['Checking ', 'first.'],
    toolCalls: [
      { name: 'echo', arguments: '{"text":"s"}' },
      { name: 'read_file', arguments: longArgs },
    ],
    ...oneCredit,
  });
  const { final, contentDeltas, argumentDeltas } = await streamed(client, { model: 'conductor', messages: [user], tools });
  assert.deepEqual(contentDeltas, ['Checking ', 'first.']);
  const choice = final.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, 'Checking first.');
  const calls = choice.message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
  assert.equal(calls.length, 1);
  assert.match(calls[0].id, CALL_ID);
  assert.deepEqual(calls[0].function, { name: 'read_file', arguments: longArgs });
  assert.ok(argumentDeltas.length >= 3, 'long arguments arrive in fragments');
  assert.deepEqual(
    traceOf(final).map((t) => t.tool),
    ['echo'],
  );

  upstream.reset();
  upstream.script({ text: 'All read.', ...oneCredit });
  const next = await streamed(client, {
    model: 'conductor',
    messages: [user, choice.message as ChatCompletionMessageParam, { role: 'tool', tool_call_id: calls[0].id, content: 'file text' }],
    tools,
  });
  assert.equal(next.final.choices[0].message.content, 'All read.');
  const seen = upstream.requests[0].body.messages.slice(1);
  assert.deepEqual(
    seen.map((m) => [m.role, m.tool_call_id ?? null]),
    [
      ['user', null],
      ['assistant', null],
      ['tool', (seen[1].tool_calls![0] as { id: string }).id],
      ['tool', calls[0].id],
    ],
  );
  assert.equal(seen[1].tool_calls!.length, 2);
  assert.equal(seen[2].content, '{"text":"s"}');
  assert.deepEqual((final as unknown as { credits: { charged: number } }).credits.charged, 1);
  assert.deepEqual((await gateway.ledger.balance(wallet)).total_spent, 2);
});

test('streaming: a client-only call and two parallel client calls, parsed by the stream helper', async () => {
  const { client } = await funded();
  upstream.script({ toolCalls: [{ name: 'ask_user', arguments: '{"question":"ok?"}' }], ...oneCredit });
  const only = await streamed(client, { model: 'conductor', messages: [user], tools });
  assert.equal(only.final.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(
    (only.final.choices[0].message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[]).map((c) => c.function),
    [{ name: 'ask_user', arguments: '{"question":"ok?"}' }],
  );
  upstream.script({
    toolCalls: [
      { name: 'read_file', arguments: '{"path":"a"}' },
      { name: 'read_file', arguments: '{"path":"b"}' },
    ],
    ...oneCredit,
  });
  const both = await streamed(client, { model: 'conductor', messages: [user], tools });
  const calls = both.final.choices[0].message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
  assert.deepEqual(
    calls.map((c) => c.function.arguments),
    ['{"path":"a"}', '{"path":"b"}'],
  );
  assert.notEqual(calls[0].id, calls[1].id);
});

test('tool_choice "required" goes upstream on every round until a client function is called; gateway tools run meanwhile', async () => {
  const { client } = await funded();
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"first"}' }], ...oneCredit },
    { toolCalls: [{ name: 'read_file', arguments: '{"path":"p"}' }], ...oneCredit },
  );
  const completion = await client.chat.completions.create({ model: 'conductor', messages: [user], tools, tool_choice: 'required' });
  assert.equal(completion.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(
    upstream.requests.map((r) => r.body.tool_choice),
    ['required', 'required'],
  );
  assert.deepEqual(
    traceOf(completion).map((t) => t.tool),
    ['echo'],
  );
});

test('a named tool_choice is sent upstream as is; tool_choice "none" turns every tool off', async () => {
  const { client } = await funded();
  const named = { type: 'function' as const, function: { name: 'ask_user' } };
  upstream.script({ toolCalls: [{ name: 'ask_user', arguments: '{}' }], ...oneCredit }, { text: 'No tools.', ...oneCredit });
  const first = await client.chat.completions.create({ model: 'conductor', messages: [user], tools, tool_choice: named });
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  assert.deepEqual(upstream.requests[0].body.tool_choice, named);
  const second = await client.chat.completions.create({ model: 'conductor', messages: [user], tools, tool_choice: 'none' });
  assert.equal(second.choices[0].message.content, 'No tools.');
  assert.equal(upstream.requests[1].body.tools, undefined);
  assert.equal(upstream.requests[1].body.tool_choice, undefined);
});

test('parallel_tool_calls false goes upstream, and the client receives one call even when the model wrote two', async () => {
  const { client } = await funded();
  upstream.script({
    toolCalls: [
      { name: 'echo', arguments: '{"text":"g"}' },
      { name: 'read_file', arguments: '{"path":"a"}' },
      { name: 'read_file', arguments: '{"path":"b"}' },
    ],
    ...oneCredit,
  });
  const completion = await client.chat.completions.create({ model: 'conductor', messages: [user], tools, parallel_tool_calls: false });
  assert.equal(upstream.requests[0].body.parallel_tool_calls, false);
  const message = completion.choices[0].message;
  const calls = message.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
  assert.deepEqual(
    calls.map((c) => c.function.arguments),
    ['{"path":"a"}'],
  );
  // The dropped call is gone from the kept round too: the model never sees a call without a result.
  upstream.reset();
  await client.chat.completions.create({
    model: 'conductor',
    messages: [user, message, { role: 'tool', tool_call_id: calls[0].id, content: 'a' }],
    tools,
  });
  const seen = upstream.requests[0].body.messages.slice(2);
  assert.deepEqual(
    seen.map((m) => m.role),
    ['assistant', 'tool', 'tool'],
  );
  assert.deepEqual(
    seen[0].tool_calls!.map((c) => (c as { function: { name: string } }).function.name),
    ['echo', 'read_file'],
  );
});

test('the round cap holds with tool_choice "required": after 8 gateway rounds the last call goes out with "none"', async () => {
  const { client } = await funded();
  for (let i = 1; i <= 8; i++) upstream.script({ toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }], ...oneCredit });
  upstream.script({ text: 'Enough.', ...oneCredit });
  const { data, response } = await client.chat.completions
    .create({ model: 'conductor', messages: [user], tools, tool_choice: 'required' })
    .withResponse();
  assert.equal(data.choices[0].finish_reason, 'stop');
  assert.equal(data.choices[0].message.content, 'Enough.');
  assert.deepEqual(
    upstream.requests.map((r) => r.body.tool_choice),
    [...Array(8).fill('required'), 'none'],
  );
  assert.equal(traceOf(data).length, 8);
  assert.equal(charged(response), 9);
});
