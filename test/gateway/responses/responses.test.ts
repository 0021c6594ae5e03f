/**
 * POST/GET/DELETE /v1/responses driven with the official `openai` client (`responses.create`,
 * `responses.stream`, `responses.retrieve`, `responses.delete`) against the scripted upstream and
 * the fixture MCP servers, with credits on: plain answers, gateway tool runs as `mcp_call` items,
 * the streamed event order, stored responses and `previous_response_id`, wallet isolation, billing.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, apiKeyFor, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.limits = { chatConcurrencyPerWallet: 1 };
    },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

/** A fresh wallet with a verified key, `credits`, and the client for it. */
async function fundedClient(credits = 100) {
  const { wallet, key } = await fundedWallet(gateway, credits);
  return { wallet, key, client: openaiFor(gateway, key, wallet) };
}

/** POST a raw body (for refusals the typed client would not send). */
async function postResponses(body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${gateway.url}/v1/responses`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

async function apiErrorOf(work: Promise<unknown>): Promise<APIError> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof APIError, `expected an APIError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

test('a plain answer is a completed response with one message item, usage and the exact charge', async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script({ text: ['Hello', ' there.'], usage: { prompt_tokens: 1200, completion_tokens: 300 } });
  const { data: response, response: raw } = await client.responses
    .create({ model: 'conductor', input: 'Say hello.', instructions: 'Be brief.', max_output_tokens: 1000 })
    .withResponse();
  assert.match(response.id, /^resp_[0-9a-f]{48}$/);
  assert.equal(response.object, 'response');
  assert.equal(response.status, 'completed');
  assert.equal(response.model, 'svc-32b-conductor');
  assert.equal(response.output_text, 'Hello there.');
  assert.equal(response.output.length, 1);
  const [message] = response.output;
  assert.equal(message.type, 'message');
  assert.ok(message.type === 'message');
  assert.match(message.id, /^msg_/);
  assert.equal(message.status, 'completed');
  assert.deepEqual(message.content, [{ type: 'output_text', text: 'Hello there.', annotations: [], logprobs: [] }]);
  assert.deepEqual(response.usage, {
    input_tokens: 1200,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 1500,
  });
  assert.equal(response.instructions, 'Be brief.');
  assert.equal(response.max_output_tokens, 1000);
  // ceil((1200 + 2 × 300) / 1000) = 2 (within the hold for a 1000-token call)
  assert.equal(raw.headers.get('x-credits-charged'), '2');
  assert.equal(raw.headers.get('x-credits-remaining'), '98');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 98);
  const sent = upstream.requests[0].body;
  assert.deepEqual(
    sent.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['system', 'Be brief.'],
      ['user', 'Say hello.'],
    ],
  );
  assert.equal(sent.messages[0].role, 'system', 'the gateway preamble comes first');
  assert.equal(sent.max_tokens, 1000);
});

test('reasoning never reaches the text', async () => {
  const { client } = await fundedClient();
  upstream.script({ reasoning: 'Let me think about it.', text: '<think>hidden</think>Visible.' });
  const response = await client.responses.create({ model: 'conductor', input: 'Hi' });
  assert.equal(response.output_text, 'Visible.');
});

test('a gateway tool round is an mcp_call item before the answer; a failed run carries its error', async () => {
  const { client } = await fundedClient();
  upstream.script(
    {
      text: 'Checking.',
      toolCalls: [
        { id: 'call_aaaaaaa1', name: 'echo', arguments: '{"text":"hi"}' },
        { id: 'call_bbbbbbb1', name: 'echo_fail', arguments: '{"code":"not_found","message":"no such thing"}' },
      ],
    },
    { text: 'It said hi.' },
  );
  const response = await client.responses.create({ model: 'conductor', input: 'Echo hi.' });
  assert.deepEqual(
    response.output.map((item) => item.type),
    ['message', 'mcp_call', 'mcp_call', 'message'],
  );
  const [first, ok, failed, answer] = response.output;
  assert.ok(first.type === 'message' && answer.type === 'message');
  assert.equal(first.content[0].type === 'output_text' && first.content[0].text, 'Checking.');
  assert.equal(answer.content[0].type === 'output_text' && answer.content[0].text, 'It said hi.');
  assert.ok(ok.type === 'mcp_call' && failed.type === 'mcp_call');
  assert.match(ok.id, /^mcp_/);
  assert.deepEqual(
    { server_label: ok.server_label, name: ok.name, arguments: ok.arguments, output: ok.output, error: ok.error, status: ok.status },
    { server_label: 'echo', name: 'echo', arguments: '{"text":"hi"}', output: '{"text":"hi"}', error: null, status: 'completed' },
  );
  assert.equal(failed.status, 'failed');
  assert.equal(failed.output, null);
  assert.equal(failed.error, 'no such thing');
  assert.equal(response.output_text, 'Checking.It said hi.');
  // The model read both results in its second call.
  const second = upstream.requests[1].body.messages;
  assert.deepEqual(
    second.filter((m) => m.role === 'tool').map((m) => m.tool_call_id),
    ['call_aaaaaaa1', 'call_bbbbbbb1'],
  );
});

test('streamed: the documented events in order, numbered from 0, parsed by responses.stream', async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script(
    {
      toolCalls: [{ id: 'call_sssssss1', name: 'echo', arguments: '{"text":"yo"}' }],
      usage: { prompt_tokens: 900, completion_tokens: 100 },
    },
    { text: ['Done', ' now.'], usage: { prompt_tokens: 1000, completion_tokens: 50 } },
  );
  const stream = client.responses.stream({ model: 'conductor', input: 'Echo yo.' });
  const events: ResponseStreamEvent[] = [];
  const deltas: string[] = [];
  stream.on('event', (event) => events.push(event));
  stream.on('response.output_text.delta', (event) => deltas.push(event.snapshot));
  const final = await stream.finalResponse();
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.in_progress',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assert.deepEqual(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
  );
  assert.deepEqual(deltas, ['Done', 'Done now.']);
  assert.equal(final.status, 'completed');
  assert.equal(final.output_text, 'Done now.');
  const created = events[0];
  assert.ok(created.type === 'response.created');
  assert.equal(created.response.status, 'in_progress');
  assert.deepEqual(created.response.output, []);
  const call = final.output[0];
  assert.ok(call.type === 'mcp_call');
  assert.equal(call.output, '{"text":"yo"}');
  assert.equal(call.status, 'completed');
  // The stored copy is what the stream built (the client's parse adds `parsed` to its own copy).
  const stored = await client.responses.retrieve(final.id);
  const completed = events.at(-1);
  assert.ok(completed?.type === 'response.completed');
  assert.deepEqual(stored.output, completed.response.output);
  assert.deepEqual(stored.usage, final.usage);
  assert.equal(stored.output_text, 'Done now.');
  // Billed exactly: ceil((1900 + 2 × 150) / 1000) = 3, reported on the last event.
  assert.deepEqual((completed.response as unknown as { credits: unknown }).credits, { charged: 3, remaining: 97 });
  assert.equal((await gateway.ledger.balance(wallet)).credits, 97);
});

test('previous_response_id continues with the earlier input, tool runs and answer; instructions are not carried', async () => {
  const { client } = await fundedClient();
  upstream.script(
    { toolCalls: [{ id: 'call_ppppppp1', name: 'echo', arguments: '{"text":"42"}' }] },
    { text: 'It is 42.' },
    { text: 'You asked for 42.' },
  );
  const first = await client.responses.create({ model: 'conductor', input: 'Echo 42.', instructions: 'First only.' });
  const second = await client.responses.create({ model: 'conductor', input: 'What did I ask?', previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  assert.equal(second.output_text, 'You asked for 42.');
  const sent = upstream.requests[2].body.messages.slice(1);
  assert.deepEqual(
    sent.map((m) => [m.role, m.content, m.tool_call_id ?? (m.tool_calls ? 'calls' : undefined)]),
    [
      ['user', 'Echo 42.', undefined],
      ['assistant', null, 'calls'],
      ['tool', '{"text":"42"}', 'call_ppppppp1'],
      ['assistant', 'It is 42.', undefined],
      ['user', 'What did I ask?', undefined],
    ],
  );
  // A third turn carries all of it again.
  upstream.script({ text: 'Still 42.' });
  await client.responses.create({ model: 'conductor', input: 'And now?', previous_response_id: second.id });
  assert.equal(upstream.requests[3].body.messages.length, 1 + 7);
});

test('another wallet cannot read, continue or delete a response; its owner can delete it', async () => {
  const alice = await fundedClient();
  const bob = await fundedClient();
  upstream.script({ text: 'Secret.' });
  const response = await alice.client.responses.create({ model: 'conductor', input: 'Tell me a secret.' });

  const read = await apiErrorOf(bob.client.responses.retrieve(response.id));
  assert.equal(read.status, 404);
  assert.deepEqual(read.error, {
    message: `Response with id '${response.id}' not found.`,
    type: 'not_found_error',
    code: 'response_not_found',
    param: null,
  });
  const continued = await apiErrorOf(
    bob.client.responses.create({ model: 'conductor', input: 'Go on.', previous_response_id: response.id }),
  );
  assert.equal(continued.status, 404);
  assert.equal(continued.param, 'previous_response_id');
  assert.equal(upstream.requests.length, 1, 'nothing reached the model for Bob');
  assert.equal((await apiErrorOf(bob.client.responses.delete(response.id))).status, 404);

  assert.equal((await alice.client.responses.retrieve(response.id)).output_text, 'Secret.');
  const res = await fetch(`${gateway.url}/v1/responses/${response.id}`, {
    method: 'DELETE',
    headers: authHeaders(alice.key, alice.wallet),
  });
  assert.deepEqual(await res.json(), { id: response.id, object: 'response', deleted: true });
  assert.equal((await apiErrorOf(alice.client.responses.retrieve(response.id))).status, 404);
});

test('store: false answers without keeping the response', async () => {
  const { client } = await fundedClient();
  upstream.script({ text: 'Gone.' });
  const response = await client.responses.create({ model: 'conductor', input: 'Hi', store: false });
  assert.equal(response.output_text, 'Gone.');
  assert.equal((await apiErrorOf(client.responses.retrieve(response.id))).status, 404);
});

test('input items: messages with text parts, and earlier mcp_call items echoed back', async () => {
  const { client } = await fundedClient();
  upstream.script({ text: 'Fine.' });
  await client.responses.create({
    model: 'conductor',
    input: [
      { role: 'developer', content: 'Use short answers.' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Echo ' },
          { type: 'input_text', text: 'x.' },
        ],
      },
      { type: 'mcp_call', id: 'mcp_1', server_label: 'echo', name: 'echo', arguments: '{"text":"x"}', output: '{"text":"x"}' },
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'It said x.', annotations: [] }],
      },
      { role: 'user', content: 'Thanks.' },
    ],
  });
  const sent = upstream.requests[0].body.messages.slice(1);
  assert.deepEqual(
    sent.map((m) => [m.role, m.content]),
    [
      ['system', 'Use short answers.'],
      ['user', 'Echo x.'],
      ['assistant', null],
      ['tool', '{"text":"x"}'],
      ['assistant', 'It said x.'],
      ['user', 'Thanks.'],
    ],
  );
});

test('refusals name the field: other tool types and choices, unknown items and parts, empty input', async () => {
  const { key, wallet } = await fundedClient();
  const headers = authHeaders(key, wallet);
  const cases: Array<[unknown, string, string]> = [
    [{ input: 'x', tools: [{ type: 'web_search' }] }, 'tools[0].type', 'unsupported_parameter'],
    [{ input: 'x', tool_choice: 'required' }, 'tool_choice', 'unsupported_parameter'],
    [{ input: 'x', tool_choice: { type: 'mcp', server_label: 'echo' } }, 'tool_choice', 'unsupported_parameter'],
    [{ input: 'x', tools: [{ type: 'function', name: 'bad name' }] }, 'tools[0].name', 'invalid_request'],
    [{ input: 'x', tools: [{ type: 'function', name: 'echo' }] }, 'tools', 'tool_name_conflict'],
    [{ input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id', 'invalid_request'],
    [{ input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata', 'invalid_request'],
    [{ input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, 'input[0].type', 'unsupported_parameter'],
    [
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] },
      'input[0].content[0].type',
      'unsupported_parameter',
    ],
    [{ input: '' }, 'input', 'invalid_request'],
    [{ input: 'x', temperature: 3 }, 'temperature', 'invalid_request'],
  ];
  for (const [body, param, code] of cases) {
    const res = await postResponses({ model: 'conductor', ...(body as object) }, headers);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.param, param, JSON.stringify(res.body));
    assert.equal(res.body.error.code, code);
    assert.equal(res.body.error.type, 'invalid_request_error');
  }
  assert.equal(upstream.requests.length, 0);
});

test('an empty wallet gets 402 before any upstream call, streaming or not', async () => {
  const { key, wallet } = await fundedClient(0);
  for (const stream of [false, true]) {
    const res = await postResponses({ model: 'conductor', input: 'Hi', stream }, authHeaders(key, wallet));
    assert.equal(res.status, 402);
    assert.equal(res.body.error.code, 'insufficient_credits');
  }
  assert.equal(upstream.requests.length, 0);
});

test('a failure after the stream began is response.failed then error; the partial work is billed', async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script({ text: 'Part', streamError: { message: 'out of memory' }, usage: { prompt_tokens: 10, completion_tokens: 5 } });
  const stream = client.responses.stream({ model: 'conductor', input: 'Hi' });
  const events: ResponseStreamEvent[] = [];
  stream.on('event', (event) => events.push(event));
  // The official client raises the error event to the caller.
  await assert.rejects(stream.finalResponse(), (err: { code?: string; message?: string }) => err.code === 'upstream_error');
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.failed',
      'error',
    ],
  );
  const [failed, error] = events.slice(-2);
  assert.ok(failed.type === 'response.failed' && error.type === 'error');
  assert.equal(failed.response.status, 'failed');
  assert.equal(failed.response.error?.code, 'server_error');
  assert.match(error.message, /out of memory/);
  const message = failed.response.output[0];
  assert.ok(message.type === 'message');
  assert.equal(message.status, 'incomplete');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 99, 'what the upstream did is charged (the minimum)');
  assert.equal((await apiErrorOf(client.responses.retrieve(failed.response.id))).status, 404, 'a failed response is not stored');
});

test('chat completions and responses share the per-wallet concurrency cap', async () => {
  const { key, wallet, client } = await fundedClient();
  upstream.script({ text: ['Slow', ' answer.'], holdLast: true });
  const chat = fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await upstream.held();
  const refused = await apiErrorOf(client.responses.create({ model: 'conductor', input: 'Me too.' }));
  assert.equal(refused.status, 429);
  assert.equal(refused.code, 'rate_limited');
  upstream.release();
  assert.equal((await chat).status, 200);
});

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: null,
};

test('a client function round trip: function_call item beside the gateway run, then function_call_output with previous_response_id', async () => {
  const { client } = await fundedClient();
  upstream.script(
    {
      toolCalls: [
        { id: 'call_gateway1', name: 'echo', arguments: '{"text":"Paris"}' },
        { id: 'call_client01', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
    },
    { text: 'It is sunny in Paris.' },
  );
  const first = await client.responses.create({ model: 'conductor', input: 'Weather in Paris?', tools: [weather] });
  assert.equal(first.status, 'completed');
  assert.deepEqual(
    first.output.map((item) => item.type),
    ['mcp_call', 'function_call'],
  );
  const call = first.output[1];
  assert.ok(call.type === 'function_call');
  assert.match(call.id ?? '', /^fc_/);
  assert.deepEqual(
    { name: call.name, arguments: call.arguments, status: call.status },
    { name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
  );
  assert.match(call.call_id, /^call_[A-Za-z0-9]{24}$/, "a client's call gets the gateway's own id");
  assert.deepEqual(first.tools, [weather]);
  const offered = upstream.requests[0].body.tools?.map((t) => t.function.name) ?? [];
  assert.ok(offered.includes('echo') && offered.includes('get_weather'), 'both kinds offered');

  const second = await client.responses.create({
    model: 'conductor',
    previous_response_id: first.id,
    tools: [weather],
    input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }],
  });
  assert.equal(second.output_text, 'It is sunny in Paris.');
  // Continuing without the function's output is refused before any upstream call.
  const unanswered = await apiErrorOf(
    client.responses.create({ model: 'conductor', previous_response_id: first.id, tools: [weather], input: 'Well?' }),
  );
  assert.equal(unanswered.status, 400);
  assert.equal(unanswered.message, `400 No tool output found for function call ${call.call_id}.`);
  // An output for a call nobody made is refused too.
  const orphan = await apiErrorOf(
    client.responses.create({
      model: 'conductor',
      previous_response_id: second.id,
      tools: [weather],
      input: [{ type: 'function_call_output', call_id: 'call_nobody_made', output: '{}' }],
    }),
  );
  assert.equal(orphan.status, 400);
  assert.equal(orphan.message, '400 No tool call found for function call output with call_id call_nobody_made.');
  assert.equal(upstream.requests.length, 2);
  assert.deepEqual(
    upstream.requests[1].body.messages.slice(1).map((m) => [m.role, m.tool_call_id ?? m.content, m.tool_calls?.length]),
    [
      ['user', 'Weather in Paris?', undefined],
      ['assistant', null, 2],
      ['tool', 'call_gateway1', undefined],
      ['tool', call.call_id, undefined],
    ],
  );
});

test('streamed function calls: function_call_arguments events, parsed by responses.stream', async () => {
  const { client } = await fundedClient();
  upstream.script({ text: 'Let me look.', toolCalls: [{ id: 'call_stream01', name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
  const stream = client.responses.stream({ model: 'conductor', input: 'Weather in Oslo?', tools: [weather] });
  const events: ResponseStreamEvent[] = [];
  stream.on('event', (event) => events.push(event));
  const final = await stream.finalResponse();
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  const done = events.find((e) => e.type === 'response.function_call_arguments.done');
  assert.ok(done?.type === 'response.function_call_arguments.done');
  assert.deepEqual([done.name, done.arguments], ['get_weather', '{"city":"Oslo"}']);
  const call = final.output[1];
  assert.ok(call.type === 'function_call');
  assert.equal(call.arguments, '{"city":"Oslo"}');
  assert.equal(final.output_text, 'Let me look.');
});

test('a client that resends the items itself (no previous_response_id) gets the gateway round spliced back', async () => {
  const { client } = await fundedClient();
  upstream.script(
    {
      toolCalls: [
        { id: 'call_gw_kept1', name: 'echo', arguments: '{"text":"Rome"}' },
        { id: 'call_cl_kept1', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ],
    },
    { text: 'Rainy in Rome.' },
  );
  const first = await client.responses.create({ model: 'conductor', input: 'Weather in Rome?', tools: [weather], store: false });
  const call = first.output.find((item) => item.type === 'function_call');
  assert.ok(call?.type === 'function_call');
  const second = await client.responses.create({
    model: 'conductor',
    tools: [weather],
    input: [
      { role: 'user', content: 'Weather in Rome?' },
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"rain"}' },
    ],
  });
  assert.deepEqual(
    upstream.requests[1].body.messages.slice(1).map((m) => [m.role, m.tool_call_id ?? m.content, m.tool_calls?.length]),
    [
      ['user', 'Weather in Rome?', undefined],
      ['assistant', null, 2],
      ['tool', 'call_gw_kept1', undefined],
      ['tool', call.call_id, undefined],
    ],
  );
  // Stored as the model saw it, spliced round included: previous_response_id carries it on.
  upstream.script({ text: 'You are welcome.' });
  await client.responses.create({ model: 'conductor', input: 'Thanks.', previous_response_id: second.id });
  assert.deepEqual(
    upstream.requests[2].body.messages.slice(1).map((m) => m.tool_call_id ?? m.content),
    ['Weather in Rome?', null, 'call_gw_kept1', call.call_id, 'Rainy in Rome.', 'Thanks.'],
  );
});

test('a response the store cannot keep (over the per-wallet byte quota) says store: false, and is not found later', async () => {
  const small = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.responses = { maxBytesPerWallet: 64 };
    },
  });
  try {
    const wallet = `0x${'ab'.repeat(20)}`;
    await small.ledger.grant(wallet, 10);
    const client = openaiFor(small, await apiKeyFor(small, wallet), wallet);
    upstream.script({ text: 'Too big to keep.' });
    const response = await client.responses.create({ model: 'conductor', input: 'Hello?' });
    assert.equal(response.output_text, 'Too big to keep.');
    assert.equal((response as { store?: boolean }).store, false);
    assert.equal((await apiErrorOf(client.responses.retrieve(response.id))).status, 404);
  } finally {
    await small.stop();
  }
});

/**
 * The pattern of OpenAI's function-calling guide (input.push(...response.output)), plus
 * previous_response_id: a first response that ran a gateway tool and handed out a client call
 * (`text` before them, if any), continued with every output item echoed and the call's output.
 * Answers what the model saw on the second call, after its system message.
 */
async function echoedContinuation(city: string, text?: string) {
  const { client } = await fundedClient();
  const id = city.toLowerCase();
  upstream.script(
    {
      ...(text ? { text } : {}),
      toolCalls: [
        { id: `call_gw_${id}`, name: 'echo', arguments: JSON.stringify({ text: city }) },
        { id: `call_cl_${id}`, name: 'get_weather', arguments: JSON.stringify({ city }) },
      ],
    },
    { text: `Fine in ${city}.` },
  );
  const first = await client.responses.create({ model: 'conductor', input: `Weather in ${city}?`, tools: [weather] });
  const call = first.output.find((item) => item.type === 'function_call');
  assert.ok(call?.type === 'function_call');
  const second = await client.responses.create({
    model: 'conductor',
    previous_response_id: first.id,
    tools: [weather],
    input: [
      ...(first.output as unknown as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear"}' },
    ],
  });
  assert.equal(second.output_text, `Fine in ${city}.`);
  const seen = upstream.requests[1].body.messages.slice(1);
  return {
    seen: seen.map((m) => [m.role, m.tool_call_id ?? m.content, m.tool_calls?.length]),
    clientCall: call.call_id,
    gatewayCall: `call_gw_${id}`,
  };
}

test('previous_response_id with the earlier output items echoed in input: each call reaches the model once, with its result', async () => {
  const { seen, clientCall, gatewayCall } = await echoedContinuation('Oslo');
  assert.deepEqual(seen, [
    ['user', 'Weather in Oslo?', undefined],
    ['assistant', null, 2],
    ['tool', gatewayCall, undefined],
    ['tool', clientCall, undefined],
  ]);
});

test('previous_response_id with echoed output that holds text before the calls: the text reaches the model once', async () => {
  const { seen, clientCall, gatewayCall } = await echoedContinuation('Rome', 'Let me check.');
  assert.deepEqual(seen, [
    ['user', 'Weather in Rome?', undefined],
    ['assistant', 'Let me check.', 2],
    ['tool', gatewayCall, undefined],
    ['tool', clientCall, undefined],
  ]);
});
