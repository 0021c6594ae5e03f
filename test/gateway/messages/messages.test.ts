/**
 * POST /v1/messages driven with the official `@anthropic-ai/sdk` (`messages.create`,
 * `messages.stream`, `messages.countTokens`) against the scripted upstream and the fixture MCP
 * servers, with credits on: plain answers, gateway tool runs as `mcp_tool_use` / `mcp_tool_result`
 * blocks, the streamed events, client tools and their continuations (kept rounds spliced, or the
 * client's echo used, never both), tool_choice, input blocks, billing, and every error as the
 * SDK's typed classes in the format's shape.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic, {
  APIError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import type { MessageParam, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, type TestGateway } from '../../helpers/gateway.js';
import { startChatGateway } from '../chat/chat-harness.js';
import { chatCost } from '../../../gateway/pricing.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.server = { ...(json.server as object), bodyLimitBytes: 64 * 1024 };
      json.limits = { chatConcurrencyPerWallet: 1, perWallet: { points: 40, durationSec: 60 } };
    },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

/** A fresh wallet with a verified key, `credits`, and the official client for it (the key goes as `x-api-key`). */
async function fundedClient(credits = 100) {
  const { wallet, key } = await fundedWallet(gateway, credits);
  return { wallet, key, client: anthropicFor(key, wallet) };
}

function anthropicFor(key: string, wallet: string): Anthropic {
  return new Anthropic({
    baseURL: gateway.url,
    apiKey: key,
    defaultHeaders: { 'x-wallet-address': wallet, 'anthropic-beta': 'mcp-client-2025-04-04' },
    maxRetries: 0,
    timeout: 30_000,
  });
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

const weather = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

test('a plain answer: one text block, end_turn, the upstream usage and the exact charge', async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script({ text: ['Hello', ' there.'], usage: { prompt_tokens: 1200, completion_tokens: 300 } });
  const { data: message, response } = await client.messages
    .create({
      model: 'conductor',
      max_tokens: 100_000,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }],
      temperature: 0.5,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-7' },
      // Fields the gateway does not know are ignored.
      top_k: 5,
      thinking: { type: 'disabled' },
    } as Anthropic.MessageCreateParamsNonStreaming)
    .withResponse();
  assert.match(message.id, /^msg_[A-Za-z0-9_-]{24}$/);
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, 'svc-32b-conductor');
  assert.deepEqual(message.content, [{ type: 'text', text: 'Hello there.' }]);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.stop_sequence, null);
  assert.deepEqual(message.usage, { input_tokens: 1200, output_tokens: 300, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  assert.equal(response.headers.get('x-credits-charged'), String(chatCost({ prompt_tokens: 1200, completion_tokens: 300 })));
  assert.equal((await gateway.ledger.balance(wallet)).credits, 100 - 2);
  const sent = upstream.requests[0].body;
  assert.equal(sent.messages[0].role, 'system', 'the gateway preamble comes first');
  assert.deepEqual(
    sent.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['system', 'Be brief.'],
      ['user', 'Say hello.'],
    ],
  );
  assert.equal(sent.max_tokens, 2048, 'max_tokens above the model cap is clamped, not refused');
  assert.equal(sent.temperature, 0.5);
  assert.deepEqual(sent.stop, ['END']);
  assert.equal(sent.user, 'user-7');
});

test('a gateway tool round: mcp_tool_use and mcp_tool_result blocks, usage summed, exactly the chat charge', async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script(
    {
      text: 'Checking.',
      toolCalls: [
        { id: 'call_aaaaaaa1', name: 'echo', arguments: '{"text":"hi"}' },
        { id: 'call_bbbbbbb1', name: 'echo_fail', arguments: '{"code":"not_found","message":"no such thing"}' },
      ],
      usage: { prompt_tokens: 900, completion_tokens: 40 },
    },
    { text: 'It said hi.', usage: { prompt_tokens: 1000, completion_tokens: 300 } },
  );
  const { data: message, response } = await client.messages
    .create({ model: 'conductor', max_tokens: 1000, messages: [{ role: 'user', content: 'Echo hi.' }] })
    .withResponse();
  const blocks = message.content as unknown as Array<Record<string, any>>;
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['text', 'mcp_tool_use', 'mcp_tool_use', 'mcp_tool_result', 'mcp_tool_result', 'text'],
  );
  const [first, ok, failed, okResult, failedResult, answer] = blocks;
  assert.equal(first.text, 'Checking.');
  assert.equal(answer.text, 'It said hi.');
  assert.match(ok.id, /^mcptoolu_/);
  assert.deepEqual(
    { name: ok.name, server_name: ok.server_name, input: ok.input },
    { name: 'echo', server_name: 'echo', input: { text: 'hi' } },
  );
  assert.equal(failed.name, 'echo_fail');
  assert.deepEqual(okResult, {
    type: 'mcp_tool_result',
    tool_use_id: ok.id,
    is_error: false,
    content: [{ type: 'text', text: '{"text":"hi"}' }],
  });
  assert.equal(failedResult.tool_use_id, failed.id);
  assert.equal(failedResult.is_error, true);
  // The result block holds what the model read, word for word.
  const modelRead = upstream.requests[1].body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  assert.deepEqual([okResult.content[0].text, failedResult.content[0].text], modelRead);
  assert.deepEqual(message.usage, { input_tokens: 1900, output_tokens: 340, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  const cost = chatCost({ prompt_tokens: 1900, completion_tokens: 340 });
  assert.equal(response.headers.get('x-credits-charged'), String(cost));
  assert.equal((await gateway.ledger.balance(wallet)).credits, 100 - cost);
});

test("messages.stream: the format's events in order, finalMessage() equal to the JSON answer, credits on message_delta", async () => {
  const { wallet, client } = await fundedClient(100);
  upstream.script(
    {
      text: 'Checking.',
      toolCalls: [{ id: 'call_aaaaaaa2', name: 'echo', arguments: '{"text":"hi"}' }],
      usage: { prompt_tokens: 900, completion_tokens: 40 },
    },
    { text: ['It said', ' hi.'], usage: { prompt_tokens: 1000, completion_tokens: 300 } },
  );
  const stream = client.messages.stream({ model: 'conductor', max_tokens: 1000, messages: [{ role: 'user', content: 'Echo hi.' }] });
  const events: RawMessageStreamEvent[] = [];
  // A copy: the SDK builds its snapshot on the message_start event's own object.
  stream.on('streamEvent', (event) => events.push(structuredClone(event)));
  const final = await stream.finalMessage();
  const kinds = events.map((e) =>
    e.type === 'content_block_start'
      ? `start:${e.content_block.type}`
      : e.type === 'content_block_delta'
        ? `delta:${e.delta.type}`
        : e.type,
  );
  assert.deepEqual(kinds, [
    'message_start',
    'start:text',
    'delta:text_delta',
    'content_block_stop',
    'start:mcp_tool_use',
    'content_block_stop',
    'start:mcp_tool_result',
    'content_block_stop',
    'start:text',
    'delta:text_delta',
    'delta:text_delta',
    'content_block_stop',
    'message_delta',
    'message_stop',
  ]);
  const start = events[0];
  assert.ok(start.type === 'message_start');
  assert.equal(start.message.usage.output_tokens, 0);
  assert.ok(start.message.usage.input_tokens > 0, 'a provisional input estimate');
  const blocks = final.content as unknown as Array<Record<string, any>>;
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['text', 'mcp_tool_use', 'mcp_tool_result', 'text'],
  );
  assert.deepEqual(blocks[1].input, { text: 'hi' }, 'the whole input arrives with content_block_start');
  assert.equal(blocks[3].text, 'It said hi.');
  assert.equal(final.stop_reason, 'end_turn');
  assert.equal(final.usage.input_tokens, 1900);
  assert.equal(final.usage.output_tokens, 340);
  const delta = events.find((e) => e.type === 'message_delta') as unknown as { credits: { charged: number; remaining: number } };
  const cost = chatCost({ prompt_tokens: 1900, completion_tokens: 340 });
  assert.deepEqual(delta.credits, { charged: cost, remaining: 100 - cost });
  assert.equal((await gateway.ledger.balance(wallet)).credits, 100 - cost);
});

test('a client tool round trip: tool_use with stop_reason tool_use; the stripped continuation gets the gateway round spliced back', async () => {
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
  const question: MessageParam = { role: 'user', content: 'Weather in Paris?' };
  const first = await client.messages.create({ model: 'conductor', max_tokens: 500, messages: [question], tools: [weather] });
  assert.equal(first.stop_reason, 'tool_use');
  assert.deepEqual(
    first.content.map((b) => b.type as string),
    ['mcp_tool_use', 'mcp_tool_result', 'tool_use'],
  );
  const use = first.content[2];
  assert.ok(use.type === 'tool_use');
  assert.deepEqual({ name: use.name, input: use.input }, { name: 'get_weather', input: { city: 'Paris' } });
  const offered = upstream.requests[0].body.tools?.map((t) => t.function.name) ?? [];
  assert.ok(offered.includes('echo') && offered.includes('get_weather'), 'both kinds offered');

  // A client that keeps only the blocks it knows sends back its tool_use alone.
  const second = await client.messages.create({
    model: 'conductor',
    max_tokens: 500,
    tools: [weather],
    messages: [
      question,
      { role: 'assistant', content: [use] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: '{"sky":"sunny"}' }] }] },
    ],
  });
  assert.deepEqual(second.content, [{ type: 'text', text: 'It is sunny in Paris.' }]);
  assert.deepEqual(
    upstream.requests[1].body.messages.slice(1).map((m) => [m.role, m.tool_call_id ?? m.content, m.tool_calls?.length]),
    [
      ['user', 'Weather in Paris?', undefined],
      ['assistant', null, 2],
      ['tool', 'call_gateway1', undefined],
      ['tool', use.id, undefined],
    ],
  );
});

test('a continuation that echoes the gateway blocks is used as sent: the kept round is not spliced twice', async () => {
  const { client } = await fundedClient();
  upstream.script(
    {
      text: 'Let me look.',
      toolCalls: [{ id: 'call_gateway2', name: 'echo', arguments: '{"text":"Rome"}' }],
    },
    { toolCalls: [{ id: 'call_client02', name: 'get_weather', arguments: '{"city":"Rome"}' }] },
    { text: 'Rainy in Rome.' },
  );
  const question: MessageParam = { role: 'user', content: 'Weather in Rome?' };
  const first = await client.messages.create({ model: 'conductor', max_tokens: 500, messages: [question], tools: [weather] });
  assert.deepEqual(
    first.content.map((b) => b.type as string),
    ['text', 'mcp_tool_use', 'mcp_tool_result', 'tool_use'],
  );
  const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
  // The SDK user's way: the answer's content, whole, as the assistant turn.
  const second = await client.messages.create({
    model: 'conductor',
    max_tokens: 500,
    tools: [weather],
    messages: [
      question,
      { role: 'assistant', content: first.content as unknown as Anthropic.ContentBlockParam[] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'rain' }] },
    ],
  });
  assert.equal((second.content[0] as Anthropic.TextBlock).text, 'Rainy in Rome.');
  const sent = upstream.requests[2].body.messages.slice(1);
  const mcpUse = first.content[1] as unknown as { id: string };
  assert.deepEqual(
    sent.map((m) => [
      m.role,
      m.tool_call_id ?? m.content,
      (m.tool_calls as Array<{ function: { name: string } }> | undefined)?.map((c) => c.function.name),
    ]),
    [
      ['user', 'Weather in Rome?', undefined],
      ['assistant', 'Let me look.', ['echo']],
      ['tool', mcpUse.id, undefined],
      ['assistant', null, ['get_weather']],
      ['tool', use.id, undefined],
    ],
  );
  assert.equal(sent.filter((m) => m.role === 'tool' && m.content === '{"text":"Rome"}').length, 1, 'the gateway result once');
});

test('tool_choice: any → required, tool → that function, none → no tools; disable_parallel_tool_use; any without tools is 400', async () => {
  const { client } = await fundedClient();
  const ask = (tool_choice: Anthropic.ToolChoice) =>
    client.messages.create({
      model: 'conductor',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [weather],
      tool_choice,
    });
  upstream.script({ text: 'a' }, { text: 'b' }, { text: 'c' });
  await ask({ type: 'any', disable_parallel_tool_use: true });
  await ask({ type: 'tool', name: 'get_weather' });
  await ask({ type: 'none' });
  const [any, named, none] = upstream.requests.map((r) => r.body as Record<string, any>);
  assert.equal(any.tool_choice, 'required');
  assert.equal(any.parallel_tool_calls, false);
  assert.deepEqual(named.tool_choice, { type: 'function', function: { name: 'get_weather' } });
  assert.equal(none.tools, undefined, "none turns every tool off, the gateway's too");
  const refused = await apiErrorOf(
    client.messages.create({
      model: 'conductor',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      tool_choice: { type: 'any' },
    }),
  );
  assert.ok(refused instanceof BadRequestError);
  assert.equal((refused.error as any).error.type, 'invalid_request_error');
  assert.match((refused.error as any).error.message, /^unsupported_parameter: tool_choice "required" needs functions of your own/);
});

test('input blocks: thinking is ignored, an image is 400 naming messages[i].content[j].type, server tools are refused', async () => {
  const { client } = await fundedClient();
  upstream.script({ text: 'Fine.' });
  await client.messages.create({
    model: 'conductor',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'x' },
          { type: 'text', text: 'Hello.' },
        ],
      },
      { role: 'user', content: 'How are you?' },
    ],
  });
  assert.deepEqual(
    upstream.requests[0].body.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'Hi'],
      ['assistant', 'Hello.'],
      ['user', 'How are you?'],
    ],
  );
  const image = await apiErrorOf(
    client.messages.create({
      model: 'conductor',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
    }),
  );
  assert.ok(image instanceof BadRequestError);
  assert.deepEqual(image.error, {
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message: 'unsupported_parameter: Content blocks of type "image" are not supported: send text (the gateway\'s models read text only).',
    },
  });
  const serverTool = await apiErrorOf(
    client.messages.create({
      model: 'conductor',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    }),
  );
  assert.ok(serverTool instanceof BadRequestError);
  assert.match((serverTool.error as any).error.message, /^unsupported_parameter: Tools of type "web_search_20250305" are not supported/);
  assert.equal(upstream.requests.length, 1);
});

test("errors are the SDK's typed classes in the format's shape: 401, 402, 404, 413, 429", async () => {
  const { wallet, key } = await fundedClient(0);
  const create = (client: Anthropic, body: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) =>
    client.messages.create({ model: 'conductor', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...body });

  const badKey = await apiErrorOf(create(anthropicFor('sy_not_a_key_of_this_gateway_0000000000', wallet)));
  assert.ok(badKey instanceof AuthenticationError);
  assert.equal((badKey.error as any).error.type, 'authentication_error');
  assert.match((badKey.error as any).error.message, /^invalid_api_key: /);
  const noKey = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-wallet-address': wallet } });
  assert.equal(noKey.status, 401);
  assert.match(((await noKey.json()) as any).error.message, /^missing_api_key: /);

  const broke = await apiErrorOf(create(anthropicFor(key, wallet)));
  assert.ok(broke instanceof PaymentRequiredError);
  assert.equal((broke.error as any).type, 'error');
  assert.equal((broke.error as any).error.type, 'billing_error');
  assert.match((broke.error as any).error.message, /^insufficient_credits: /);

  const claude = await apiErrorOf(create(anthropicFor(key, wallet), { model: 'claude-sonnet-4-5' }));
  assert.ok(claude instanceof NotFoundError);
  assert.deepEqual(claude.error, {
    type: 'error',
    error: { type: 'not_found_error', message: 'model_not_found: The model "claude-sonnet-4-5" does not exist.' },
  });

  const huge = await apiErrorOf(create(anthropicFor(key, wallet), { messages: [{ role: 'user', content: 'x'.repeat(70 * 1024) }] }));
  assert.ok(huge instanceof ContentTooLargeError);
  assert.equal((huge.error as any).error.type, 'request_too_large');

  // The per-wallet budget (40 a minute) runs out: 429 from the budget layer, before any route.
  const client = anthropicFor(key, wallet);
  let limited: APIError | undefined;
  for (let i = 0; i < 60 && !limited; i++) {
    const err = await apiErrorOf(
      client.messages
        .countTokens({ model: 'conductor', messages: [{ role: 'user', content: 'Hi' }] })
        .then(() => Promise.reject(new APIError(200, undefined, 'ok', new Headers()))),
    );
    if (err.status === 429) limited = err;
  }
  assert.ok(limited instanceof RateLimitError, 'the budget ran out');
  assert.equal((limited.error as any).error.type, 'rate_limit_error');
  assert.ok(limited.headers?.get('retry-after'));
  assert.equal(upstream.requests.length, 0);
});

test('count_tokens: the estimate the loop makes (preamble, system, tool schemas), free of charge; unknown models 404', async () => {
  const { wallet, client } = await fundedClient(10);
  const base = { model: 'conductor', messages: [{ role: 'user' as const, content: 'How warm is it in Paris today?' }] };
  const plain = await client.messages.countTokens(base);
  const withSystem = await client.messages.countTokens({ ...base, system: 'x'.repeat(400) });
  const withTools = await client.messages.countTokens({ ...base, tools: [weather] });
  const noTools = await client.messages.countTokens({ ...base, tools: [weather], tool_choice: { type: 'none' } });
  assert.ok(plain.input_tokens > 100, 'the preamble and the gateway tool schemas count');
  assert.ok(withSystem.input_tokens >= plain.input_tokens + 100, 'system counts');
  assert.ok(withTools.input_tokens > plain.input_tokens, "the client's tool schema counts");
  assert.ok(noTools.input_tokens < plain.input_tokens, 'tool_choice none offers no schemas');
  // The same estimate the loop makes for its first call: the scripted upstream reports no usage.
  upstream.script({ text: 'Warm.', usage: null });
  const stream = client.messages.stream({ ...base, max_tokens: 100 });
  const started = new Promise<number>((resolve) =>
    stream.on('streamEvent', (e) => e.type === 'message_start' && resolve(e.message.usage.input_tokens)),
  );
  await stream.finalMessage();
  assert.equal(await started, plain.input_tokens);
  const balanceBefore = (await gateway.ledger.balance(wallet)).credits;
  await client.messages.countTokens(base);
  assert.equal((await gateway.ledger.balance(wallet)).credits, balanceBefore, 'counting is free');
  const missing = await apiErrorOf(client.messages.countTokens({ ...base, model: 'claude-3-haiku' }));
  assert.ok(missing instanceof NotFoundError);
});

test('every error under /v1/messages is in the format, from the router too; anthropic headers pass CORS', async () => {
  const { wallet, key } = await fundedClient();
  const notJson = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-wallet-address': wallet, 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: '{"model":',
  });
  assert.equal(notJson.status, 400);
  const body = (await notJson.json()) as Record<string, any>;
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'invalid_request_error');
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type']);
  const wrongMethod = await fetch(`${gateway.url}/v1/messages`, { headers: { 'x-wallet-address': wallet, 'x-api-key': key } });
  assert.equal(wrongMethod.status, 405);
  assert.equal(((await wrongMethod.json()) as Record<string, any>).error.type, 'invalid_request_error');
  const noRoute = await fetch(`${gateway.url}/v1/messages/batches`, {
    method: 'POST',
    headers: { 'x-wallet-address': wallet, 'x-api-key': key },
  });
  assert.equal(noRoute.status, 404);
  assert.equal(((await noRoute.json()) as Record<string, any>).error.type, 'not_found_error');
  // Elsewhere the OpenAI shape stays.
  const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-wallet-address': wallet, 'x-api-key': key },
  });
  const openaiShaped = (await chat.json()) as Record<string, any>;
  assert.equal(openaiShaped.type, undefined);
  assert.equal(typeof openaiShaped.error.code, 'string');
  const missingRequired = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-wallet-address': wallet, 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: 'Hi' }] }),
  });
  assert.equal(missingRequired.status, 400);
  assert.match(((await missingRequired.json()) as Record<string, any>).error.message, /^invalid_request: Invalid request: max_tokens: /);
});
