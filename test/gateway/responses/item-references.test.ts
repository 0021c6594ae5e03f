/**
 * `item_reference` input items, `GET /v1/responses/{id}/input_items` and `incomplete_details`,
 * credits on, with the official `openai` client and the AI SDK's default OpenAI provider
 * (`createOpenAI()(model)`: the Responses API with `store` on, which sends earlier assistant text
 * and gateway tool runs back as item references): references resolve for the wallet that stored
 * them (message and `mcp_call` items), are 404 `item_not_found` for another wallet's, an unknown or
 * a `store: false` response's item, go with a deleted response, and are used once beside
 * `previous_response_id`.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { APIError } from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool, type ModelMessage } from 'ai';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({ upstream, config: (json) => void (json.freeMode = false) });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

async function funded(credits = 100) {
  const { wallet, key } = await fundedWallet(gateway, credits);
  return { wallet, key, client: openaiFor(gateway, key, wallet) };
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

const echoRound: Turn = { text: 'Checking.', toolCalls: [{ id: 'call_echo000001', name: 'echo', arguments: '{"text":"hi"}' }] };

/** A stored response with a message, an mcp_call and a message: [msg, mcp, msg] ids. */
async function storedRound(client: ReturnType<typeof openaiFor>) {
  upstream.script(echoRound, { text: 'It said hi.' });
  const response = await client.responses.create({ model: 'conductor', input: 'Echo hi.' });
  const [checking, call, answer] = response.output;
  assert.deepEqual(
    response.output.map((item) => item.type),
    ['message', 'mcp_call', 'message'],
  );
  return { response, ids: { checking: checking.id!, call: call.id!, answer: answer.id! } };
}

/** What the upstream's last request carried after the preamble: role, content, and tool call ids. */
function lastSent(): Array<[string, string | null, string[] | string | undefined]> {
  return upstream.requests
    .at(-1)!
    .body.messages.slice(1)
    .map((m) => [m.role, m.content, m.tool_call_id ?? (m.tool_calls as Array<{ id: string }> | undefined)?.map((c) => c.id)]);
}

test('references to message and mcp_call items resolve for the wallet that stored them', async () => {
  const { client } = await funded();
  const { ids } = await storedRound(client);
  upstream.script({ text: 'Again: hi.' });
  const next = await client.responses.create({
    model: 'conductor',
    input: [
      { role: 'user', content: 'Echo hi.' },
      { type: 'item_reference', id: ids.checking },
      { type: 'item_reference', id: ids.call },
      { type: 'item_reference', id: ids.answer },
      { role: 'user', content: 'Once more?' },
    ],
  });
  assert.equal(next.output_text, 'Again: hi.');
  assert.deepEqual(lastSent(), [
    ['user', 'Echo hi.', undefined],
    ['assistant', 'Checking.', undefined],
    ['assistant', null, [ids.call]],
    ['tool', '{"text":"hi"}', ids.call],
    ['assistant', 'It said hi.', undefined],
    ['user', 'Once more?', undefined],
  ]);
});

test("another wallet's item, an unknown id and a store: false response's item are 404 item_not_found, param input", async () => {
  const alice = await funded();
  const bob = await funded();
  const { ids } = await storedRound(alice.client);
  upstream.script({ text: 'Not kept.' });
  const unkept = await alice.client.responses.create({ model: 'conductor', input: 'Hi', store: false });
  upstream.reset();
  const cases: Array<[ReturnType<typeof openaiFor>, string]> = [
    [bob.client, ids.checking],
    [bob.client, ids.call],
    [alice.client, `msg_${'0'.repeat(48)}`],
    [alice.client, unkept.output[0].id!],
  ];
  for (const [client, id] of cases) {
    const err = await apiErrorOf(
      client.responses.create({
        model: 'conductor',
        input: [
          { role: 'user', content: 'Go on.' },
          { type: 'item_reference', id },
        ],
      }),
    );
    assert.equal(err.status, 404);
    assert.deepEqual(err.error, {
      message: `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
      type: 'invalid_request_error',
      code: 'item_not_found',
      param: 'input',
    });
  }
  assert.equal(upstream.requests.length, 0, 'nothing reached the model');
});

test('a deleted response takes its items with it', async () => {
  const { client } = await funded();
  const { response, ids } = await storedRound(client);
  await client.responses.delete(response.id);
  const err = await apiErrorOf(client.responses.create({ model: 'conductor', input: [{ type: 'item_reference', id: ids.answer }] }));
  assert.equal(err.status, 404);
  assert.equal(err.code, 'item_not_found');
});

test('an item previous_response_id carries is used once, as is an item referenced twice', async () => {
  const { client } = await funded();
  const { response, ids } = await storedRound(client);
  upstream.script({ text: 'Second.' });
  const second = await client.responses.create({
    model: 'conductor',
    previous_response_id: response.id,
    input: [
      { type: 'item_reference', id: ids.checking },
      { type: 'item_reference', id: ids.call },
      { role: 'user', content: 'And?' },
    ],
  });
  // The stored conversation, as the model saw it: the tool round's text is in its tool call turn.
  const carried: ReturnType<typeof lastSent> = [
    ['user', 'Echo hi.', undefined],
    ['assistant', 'Checking.', ['call_echo000001']],
    ['tool', '{"text":"hi"}', 'call_echo000001'],
    ['assistant', 'It said hi.', undefined],
  ];
  assert.deepEqual(lastSent(), [...carried, ['user', 'And?', undefined]]);
  // A third turn: items of the first response are still carried (through the second), and one of the second's too.
  upstream.script({ text: 'Third.' });
  await client.responses.create({
    model: 'conductor',
    previous_response_id: second.id,
    input: [
      { type: 'item_reference', id: ids.answer },
      { type: 'item_reference', id: second.output[0].id! },
      { role: 'user', content: 'Done?' },
    ],
  });
  assert.deepEqual(lastSent(), [
    ...carried,
    ['user', 'And?', undefined],
    ['assistant', 'Second.', undefined],
    ['user', 'Done?', undefined],
  ]);
  // Without previous_response_id, the same item referenced twice goes up once.
  upstream.script({ text: 'Once.' });
  await client.responses.create({
    model: 'conductor',
    input: [
      { type: 'item_reference', id: ids.answer },
      { type: 'item_reference', id: ids.answer },
      { role: 'user', content: 'Once?' },
    ],
  });
  assert.deepEqual(lastSent(), [
    ['assistant', 'It said hi.', undefined],
    ['user', 'Once?', undefined],
  ]);
});

test('GET /v1/responses/{id}/input_items lists the input as OpenAI does, references resolved, a page at a time', async () => {
  const { client, key, wallet } = await funded();
  const { response, ids } = await storedRound(client);
  const first = await client.responses.inputItems.list(response.id);
  assert.equal(first.data.length, 1);
  const [only] = first.data;
  assert.ok(only.type === 'message');
  assert.match(only.id, /^msg_/);
  assert.deepEqual(
    { ...only, id: 'x' },
    { id: 'x', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Echo hi.' }] },
  );

  upstream.script({ text: 'Listed.' });
  const next = await client.responses.create({
    model: 'conductor',
    input: [
      { role: 'user', content: 'Echo hi.' },
      { type: 'item_reference', id: ids.checking },
      { type: 'item_reference', id: ids.call },
    ],
  });
  // Newest first by default.
  const page = await client.responses.inputItems.list(next.id);
  assert.deepEqual(
    page.data.map((item) => [item.type, item.id]),
    [
      ['mcp_call', ids.call],
      ['message', ids.checking],
      ['message', page.data[2].id],
    ],
  );
  const call = page.data[0];
  assert.ok(call.type === 'mcp_call');
  assert.deepEqual(
    [call.server_label, call.name, call.arguments, call.output, call.status],
    ['echo', 'echo', '{"text":"hi"}', '{"text":"hi"}', 'completed'],
  );
  // Pages of two, oldest first: the client's raw answer has first_id, last_id and has_more.
  const raw = async (query: string) => {
    const res = await fetch(`${gateway.url}/v1/responses/${next.id}/input_items?${query}`, {
      headers: { authorization: `Bearer ${key}`, 'x-wallet-address': wallet },
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const one = await raw('order=asc&limit=2');
  assert.equal(one.body.object, 'list');
  assert.deepEqual(
    one.body.data.map((item: { id: string }) => item.id),
    [page.data[2].id, ids.checking],
  );
  assert.deepEqual([one.body.first_id, one.body.last_id, one.body.has_more], [page.data[2].id, ids.checking, true]);
  const two = await raw(`order=asc&limit=2&after=${ids.checking}`);
  assert.deepEqual([two.body.data.length, two.body.first_id, two.body.last_id, two.body.has_more], [1, ids.call, ids.call, false]);
  // The SDK's auto-pagination walks the same pages.
  const all = [];
  for await (const item of client.responses.inputItems.list(next.id, { order: 'asc', limit: 1 })) all.push(item.id);
  assert.deepEqual(all, [page.data[2].id, ids.checking, ids.call]);
  assert.equal((await raw('limit=0')).status, 400);
  assert.equal((await raw('after=msg_nope')).body.error.param, 'after');
  // Another wallet: 404, as for the response itself.
  const bob = await funded();
  assert.equal((await apiErrorOf(bob.client.responses.inputItems.list(next.id))).status, 404);
});

test('incomplete_details.reason says what stopped the answer: max_output_tokens, or insufficient_credits', async () => {
  const { client } = await funded();
  upstream.script({ text: 'Cut', finishReason: 'length' });
  const cut = await client.responses.create({ model: 'conductor', input: 'Write a lot.', max_output_tokens: 16 });
  assert.equal(cut.status, 'incomplete');
  assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });

  const poor = await funded(3);
  for (let i = 1; i <= 2; i++) {
    upstream.script({
      text: `Step ${i}.`,
      toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }],
      usage: { prompt_tokens: 3000, completion_tokens: 1000 },
    });
  }
  const broke = await poor.client.responses.create({ model: 'conductor', input: 'Go.', max_output_tokens: 100 });
  assert.equal(broke.status, 'incomplete');
  assert.deepEqual(broke.incomplete_details, { reason: 'insufficient_credits' });
  assert.equal(upstream.requests.length, 2);
  // The AI SDK reads that reason as finish reason "other" (it knows only max_output_tokens and content_filter).
  const broker = await funded(3);
  upstream.script({
    text: 'Step.',
    toolCalls: [{ name: 'echo', arguments: '{"text":"1"}' }],
    usage: { prompt_tokens: 3000, completion_tokens: 1000 },
  });
  const provider = createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: broker.key, headers: { 'x-wallet-address': broker.wallet } });
  const result = await generateText({ model: provider('conductor'), prompt: 'Go.', maxOutputTokens: 100 });
  assert.equal(result.finishReason, 'other');
  assert.equal(result.rawFinishReason, 'insufficient_credits');
});

test('the AI SDK default provider: generateText with a client tool over a gateway round, then a follow-up from response.messages', async () => {
  const { key, wallet } = await funded();
  const sent: Array<{ input: Array<Record<string, unknown>>; store?: boolean }> = [];
  const provider = createOpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey: key,
    headers: { 'x-wallet-address': wallet },
    fetch: async (url, init) => {
      sent.push(JSON.parse(String(init?.body)));
      return fetch(url, init);
    },
  });
  const readFile = tool({
    description: 'Read a file on the user machine.',
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `${path}: alpha is 42`,
  });
  upstream.script(
    echoRound,
    { toolCalls: [{ id: 'call_read00001', name: 'read_file', arguments: '{"path":"notes.txt"}' }] },
    { text: 'notes.txt says alpha is 42.' },
  );
  const messages: ModelMessage[] = [{ role: 'user', content: 'What does notes.txt say about alpha?' }];
  const first = await generateText({ model: provider('conductor'), messages, tools: { read_file: readFile }, stopWhen: stepCountIs(4) });
  assert.equal(first.text, 'notes.txt says alpha is 42.');
  assert.equal(first.steps.length, 2);
  assert.deepEqual(
    first.steps[0].toolResults.map((r) => [r.toolName, r.providerExecuted ?? false]),
    [
      ['mcp.echo', true],
      ['read_file', false],
    ],
  );
  // Step 2 sent the earlier text and the gateway's run as references (store is on), which the gateway resolved.
  const step2 = upstream.requests[2].body.messages.slice(1);
  const clientCallId = (step2[2].tool_calls as Array<{ id: string }>)[1].id;
  assert.deepEqual(
    step2.map((m) => [m.role, m.content]),
    [
      ['user', 'What does notes.txt say about alpha?'],
      ['assistant', 'Checking.'],
      ['assistant', null],
      ['tool', '{"text":"hi"}'],
      ['tool', 'notes.txt: alpha is 42'],
    ],
  );
  assert.match(clientCallId, /^call_[A-Za-z0-9]{24}$/);
  const step2Input = sent[1].input.map((item) => item.type ?? item.role);
  assert.equal(sent[1].store, undefined, 'the provider leaves store to its default: on');
  assert.deepEqual(step2Input, ['user', 'item_reference', 'item_reference', 'function_call', 'function_call_output']);

  upstream.script({ text: 'Beta is not mentioned.' });
  const followUp = await generateText({
    model: provider('conductor'),
    messages: [...messages, ...first.response.messages, { role: 'user', content: 'And beta?' }],
    tools: { read_file: readFile },
    stopWhen: stepCountIs(4),
  });
  assert.equal(followUp.text, 'Beta is not mentioned.');
  assert.deepEqual(
    sent[2].input.map((item) => item.type ?? item.role),
    ['user', 'item_reference', 'item_reference', 'function_call', 'function_call_output', 'item_reference', 'user'],
  );
  assert.deepEqual(
    upstream.requests[3].body.messages.slice(1).map((m) => [m.role, m.content]),
    [
      ['user', 'What does notes.txt say about alpha?'],
      ['assistant', 'Checking.'],
      ['assistant', null],
      ['tool', '{"text":"hi"}'],
      ['tool', 'notes.txt: alpha is 42'],
      ['assistant', 'notes.txt says alpha is 42.'],
      ['user', 'And beta?'],
    ],
  );
});
