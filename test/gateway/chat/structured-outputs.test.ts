/**
 * Structured outputs on chat completions with the official `openai` client's own helpers
 * (`chat.completions.parse` / `.stream` with `zodResponseFormat`) against the scripted upstream,
 * credits on: the answer is the final call's JSON alone (a tool round's "Let me look that up." never
 * reaches `content`), rounds that offer tools go up without the format, one corrective call follows
 * an invalid answer, a strict schema failing twice is 502 with both calls charged, the stream holds
 * the answer until it validated, and bad schemas are 400 before any upstream call.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { APIError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from './chat-harness.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.chat = { maxRounds: 2 };
    },
  });
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

const City = z.object({ city: z.string(), population: z.number().int() });
const cityFormat = zodResponseFormat(City, 'city');
const OSLO = '{"city":"Oslo","population":709037}';
const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'How many people live in Oslo?' }];
/** 1000 prompt tokens per call: one credit each, so the charge counts the calls. */
const oneCredit = { usage: { prompt_tokens: 1000, completion_tokens: 0 } };
const lookUp: Turn = {
  text: 'Let me look that up.',
  toolCalls: [{ id: 'call_lookup0001', name: 'echo', arguments: '{"text":"Oslo"}' }],
  ...oneCredit,
};

async function apiErrorOf(work: Promise<unknown>): Promise<APIError> {
  try {
    await work;
  } catch (err) {
    assert.ok(err instanceof APIError, `expected an APIError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

/** POST a raw chat body (streamed or not) and return the response unread. */
function postRaw(key: string, wallet: string, body: Record<string, unknown>) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ model: 'conductor', messages, ...body }),
  });
}

/** The data events of a streamed answer, parsed (comments and [DONE] left out). */
async function chunksOf(response: Response): Promise<Array<Record<string, any>>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: ') && block !== 'data: [DONE]')
    .map((block) => JSON.parse(block.slice('data: '.length)) as Record<string, any>);
}

test('parse after a tool round: content is the final JSON alone, parsed by the client; tool rounds went up without the format', async () => {
  const { wallet, client } = await funded();
  upstream.script(lookUp, { text: OSLO, ...oneCredit });
  const { data, response } = await client.chat.completions
    .parse({ model: 'conductor', messages, response_format: cityFormat })
    .withResponse();
  const message = data.choices[0].message;
  assert.deepEqual(message.parsed, { city: 'Oslo', population: 709037 });
  assert.equal(message.content, OSLO);
  assert.equal(data.choices[0].finish_reason, 'stop');
  assert.equal(upstream.requests.length, 2);
  for (const request of upstream.requests) {
    assert.equal(request.body.response_format, undefined, 'a call that offers tools carries no format');
    assert.equal(request.body.tool_choice, 'auto');
  }
  // The model still saw its own text of the tool round.
  const second = upstream.requests[1].body.messages;
  assert.deepEqual(
    second.filter((m) => m.role === 'assistant').map((m) => m.content),
    ['Let me look that up.'],
  );
  assert.equal(response.headers.get('x-credits-charged'), '2');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 98);
});

test('an answer that does not validate triggers exactly one corrective call, tool_choice none, carrying the schema', async () => {
  const { client } = await funded();
  upstream.script(lookUp, { text: 'About 709,000 people.', ...oneCredit }, { text: `\`\`\`json\n${OSLO}\n\`\`\``, ...oneCredit });
  const { data, response } = await client.chat.completions
    .parse({ model: 'conductor', messages, response_format: cityFormat })
    .withResponse();
  assert.deepEqual(data.choices[0].message.parsed, { city: 'Oslo', population: 709037 });
  assert.equal(data.choices[0].message.content, OSLO, 'the fence is gone, and nothing of the first answer is left');
  assert.equal(upstream.requests.length, 3);
  const corrective = upstream.requests[2].body;
  assert.equal(corrective.tool_choice, 'none');
  assert.deepEqual(corrective.response_format, { type: 'json_schema', json_schema: cityFormat.json_schema });
  const [answer, correction] = corrective.messages.slice(-2);
  assert.deepEqual([answer.role, answer.content], ['assistant', 'About 709,000 people.']);
  assert.equal(correction.role, 'user');
  assert.match(
    correction.content!,
    /^Your answer cannot be used: the answer is not JSON: .+ Reply again with only JSON that matches the schema "city": \{/,
  );
  assert.equal(response.headers.get('x-credits-charged'), '3', 'the corrective call is charged like any call');
});

test("streamed: nothing is sent until the answer validated; the corrective call's text replaces the first", async () => {
  const { client } = await funded();
  upstream.script(
    lookUp,
    { text: ['About 709,000', ' people.'], ...oneCredit },
    { text: ['{"city":"Oslo",', '"population":709037}'], ...oneCredit },
  );
  const stream = client.chat.completions.stream({ model: 'conductor', messages, response_format: cityFormat });
  const deltas: string[] = [];
  stream.on('content.delta', ({ delta }) => deltas.push(delta));
  const completion = await stream.finalChatCompletion();
  assert.deepEqual(completion.choices[0].message.parsed, { city: 'Oslo', population: 709037 });
  assert.equal(deltas.join(''), OSLO);
  assert.ok(!deltas.some((delta) => /Let me|About/.test(delta)));
  assert.equal(upstream.requests.length, 3);
});

test('streamed without a correction: the answer goes out as content deltas once it validated', async () => {
  const { key, wallet } = await funded();
  upstream.script(lookUp, { text: ['{"city":', '"Oslo","population":709037}'], ...oneCredit });
  const chunks = await chunksOf(await postRaw(key, wallet, { stream: true, response_format: cityFormat }));
  const content = chunks.flatMap((c) => (typeof c.choices[0]?.delta?.content === 'string' ? [c.choices[0].delta.content] : []));
  assert.equal(content.join(''), OSLO);
  assert.equal(chunks.at(-1)!.choices[0].finish_reason, 'stop');
});

test('strict: an answer invalid twice is 502 upstream_invalid_output, both calls charged', async () => {
  const { wallet, client } = await funded();
  upstream.script({ text: 'Oslo.', ...oneCredit }, { text: '{"city":"Oslo"}', ...oneCredit });
  const err = await apiErrorOf(client.chat.completions.parse({ model: 'conductor', messages, response_format: cityFormat }));
  assert.equal(err.status, 502);
  assert.equal(err.code, 'upstream_invalid_output');
  assert.equal(
    err.message,
    '502 The model "svc-32b-conductor" did not answer in the requested format (strict), even when asked again: the answer does not match the schema: the value lacks the property "population".',
  );
  assert.equal(upstream.requests.length, 2);
  assert.equal((await gateway.ledger.balance(wallet)).credits, 98);
});

test('strict, streamed: the stream ends with the error chunk and no content at all', async () => {
  const { key, wallet } = await funded();
  upstream.script(lookUp, { text: 'Oslo, I think.', ...oneCredit }, { text: 'Still Oslo.', ...oneCredit });
  const chunks = await chunksOf(await postRaw(key, wallet, { stream: true, response_format: cityFormat }));
  assert.ok(
    chunks.every((c) => !c.choices[0]?.delta?.content),
    JSON.stringify(chunks),
  );
  const last = chunks.at(-1)!;
  assert.equal(last.choices[0].finish_reason, 'error');
  assert.equal(last.error.code, 'upstream_invalid_output');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 97, 'three calls charged');
});

test('not strict: an answer still invalid after the correction comes back as it is, finish_reason stop, and a log line', async () => {
  const { key, wallet } = await funded();
  const format = { type: 'json_schema', json_schema: { ...cityFormat.json_schema, strict: false } };
  upstream.script({ text: 'Oslo.', ...oneCredit }, { text: '{"city":"Oslo"}', ...oneCredit });
  const response = await postRaw(key, wallet, { response_format: format });
  const body = (await response.json()) as Record<string, any>;
  assert.equal(response.status, 200);
  assert.equal(body.choices[0].message.content, '{"city":"Oslo"}');
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.ok(
    gateway.logs.some(
      (line) =>
        line.msg === 'the answer does not match the requested format after a corrective call: it goes back as it is' &&
        line.problem === 'the answer does not match the schema: the value lacks the property "population"',
    ),
  );
});

test('json_object: any JSON object is the answer; prose gets the corrective call with {"type":"json_object"}', async () => {
  const { client } = await funded();
  upstream.script({ text: 'Here it is: Oslo', ...oneCredit }, { text: '{"answer":"Oslo"}', ...oneCredit });
  const completion = await client.chat.completions.create({ model: 'conductor', messages, response_format: { type: 'json_object' } });
  assert.equal(completion.choices[0].message.content, '{"answer":"Oslo"}');
  assert.deepEqual(upstream.requests[1].body.response_format, { type: 'json_object' });
});

test('the forced final call after chat.maxRounds carries the format; with tool_choice none the first call does', async () => {
  const { client } = await funded();
  const round = (n: number): Turn => ({
    toolCalls: [{ id: `call_round000${n}`, name: 'echo', arguments: `{"text":"${n}"}` }],
    ...oneCredit,
  });
  upstream.script(round(1), round(2), { text: OSLO, ...oneCredit });
  const completion = await client.chat.completions.parse({ model: 'conductor', messages, response_format: cityFormat });
  assert.deepEqual(completion.choices[0].message.parsed, { city: 'Oslo', population: 709037 });
  assert.deepEqual(
    upstream.requests.map((r) => [r.body.tool_choice, r.body.response_format === undefined ? 'no format' : 'format']),
    [
      ['auto', 'no format'],
      ['auto', 'no format'],
      ['none', 'format'],
    ],
  );
  upstream.reset();
  upstream.script({ text: OSLO, ...oneCredit });
  await client.chat.completions.parse({ model: 'conductor', messages, response_format: cityFormat, tool_choice: 'none' });
  assert.equal(upstream.requests[0].body.tools, undefined);
  assert.deepEqual(upstream.requests[0].body.response_format, { type: 'json_schema', json_schema: cityFormat.json_schema });
});

test('a bad schema is 400 naming response_format before any upstream call: 65 KiB, 33 levels, a remote $ref', async () => {
  const { key, wallet } = await funded();
  const big = { type: 'object', description: 'x'.repeat(65 * 1024) };
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 16; i++) deep = { type: 'object', properties: { a: deep } }; // 33 levels of JSON
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [big, /the schema is 66\d{3} bytes of JSON; at most 65536 are accepted\.$/],
    [deep, /the schema nests deeper than 32 levels of objects and arrays\.$/],
    [{ $ref: 'https://example.com/s.json' }, /points outside the schema/],
    [{ type: 'string', pattern: '(?<=a)b' }, /the schema does not compile/],
  ];
  for (const [schema, message] of cases) {
    const response = await postRaw(key, wallet, { response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
    const { error } = (await response.json()) as { error: Record<string, string> };
    assert.equal(response.status, 400);
    assert.equal(error.param, 'response_format.json_schema.schema');
    assert.equal(error.code, 'invalid_request');
    assert.match(error.message, message);
  }
  const unnamed = await postRaw(key, wallet, { response_format: { type: 'json_schema', json_schema: { name: 'no spaces allowed' } } });
  assert.equal(unnamed.status, 400);
  assert.equal(((await unnamed.json()) as { error: { param: string } }).error.param, 'response_format.json_schema.name');
  assert.equal(upstream.requests.length, 0);
});

test('a catastrophic pattern does not stall the gateway: the answer is checked in linear time while /health answers', async () => {
  const { client } = await funded();
  const Code = z.object({ code: z.string().regex(/^(a+)+$/) });
  // V8's backtracking would need about 2^60 steps for this one.
  const evil = `{"code":"${'a'.repeat(60)}!"}`;
  upstream.script({ text: evil, ...oneCredit }, { text: '{"code":"aaaa"}', ...oneCredit });
  const [completion, health] = await Promise.all([
    client.chat.completions.parse({ model: 'conductor', messages, response_format: zodResponseFormat(Code, 'code') }),
    fetch(`${gateway.url}/health`),
  ]);
  assert.equal(health.status, 200);
  assert.deepEqual(completion.choices[0].message.parsed, { code: 'aaaa' });
  assert.match(upstream.requests[1].body.messages.at(-1)!.content!, /\/code must match pattern "\^\(a\+\)\+\$"/);
});
