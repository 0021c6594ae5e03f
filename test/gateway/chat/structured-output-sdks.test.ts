/**
 * Structured outputs with the SDKs people use for them, against the scripted upstream with credits
 * on: the AI SDK's `generateObject` over its openai-compatible provider, once with
 * `supportsStructuredOutputs: true` (a `json_schema` format) and once with its defaults
 * (`json_object`), and LangChain.js `ChatOpenAI.withStructuredOutput(zodSchema)` (a `json_schema`
 * format whose schema is draft 2020-12). Each after a gateway tool round whose text must not reach
 * the answer, and each through the corrective call, whose format is what the SDK sent.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, type TestGateway } from '../../helpers/gateway.js';
import { startChatGateway } from './chat-harness.js';

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

/** A fetch that keeps each request body the SDK sent, then sends it. */
function recordingFetch(bodies: Array<Record<string, any>>): typeof fetch {
  return async (url, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return fetch(url, init);
  };
}

const City = z.object({ city: z.string(), population: z.number().int() });
const lookUp: Turn = { text: 'Let me look that up.', toolCalls: [{ id: 'call_lookup0001', name: 'echo', arguments: '{"text":"Oslo"}' }] };
const prompt = 'How many people live in Oslo?';

function aiSdkProvider(key: string, wallet: string, bodies: Array<Record<string, any>>, supportsStructuredOutputs?: boolean) {
  return createOpenAICompatible({
    name: 'switchyard',
    baseURL: `${gateway.url}/v1`,
    apiKey: key,
    headers: { 'x-wallet-address': wallet },
    fetch: recordingFetch(bodies),
    ...(supportsStructuredOutputs !== undefined ? { supportsStructuredOutputs } : {}),
  });
}

test('AI SDK generateObject, openai-compatible with supportsStructuredOutputs: the object, through a correction carrying its json_schema', async () => {
  const { key, wallet } = await fundedWallet(gateway);
  const bodies: Array<Record<string, any>> = [];
  upstream.script(lookUp, { text: 'About 709,000.' }, { text: '{"city":"Oslo","population":709037}' });
  const { object, finishReason } = await generateObject({
    model: aiSdkProvider(key, wallet, bodies, true)('conductor'),
    schema: City,
    prompt,
  });
  assert.deepEqual(object, { city: 'Oslo', population: 709037 });
  assert.equal(finishReason, 'stop');
  const sentFormat = bodies[0].response_format;
  assert.equal(sentFormat.type, 'json_schema');
  assert.deepEqual(Object.keys(sentFormat.json_schema.schema.properties), ['city', 'population']);
  assert.equal(upstream.requests.length, 3);
  assert.deepEqual(upstream.requests[2].body.response_format, {
    type: 'json_schema',
    json_schema: {
      name: sentFormat.json_schema.name,
      schema: sentFormat.json_schema.schema,
      strict: sentFormat.json_schema.strict === true,
    },
  });
});

test('AI SDK generateObject, openai-compatible defaults: json_object; the answer is the JSON alone', async () => {
  const { key, wallet } = await fundedWallet(gateway);
  const bodies: Array<Record<string, any>> = [];
  upstream.script(lookUp, { text: 'Oslo, roughly 709k.' }, { text: '{"city":"Oslo","population":709037}' });
  const { object, response } = await generateObject({ model: aiSdkProvider(key, wallet, bodies)('conductor'), schema: City, prompt });
  assert.deepEqual(object, { city: 'Oslo', population: 709037 });
  assert.deepEqual(bodies[0].response_format, { type: 'json_object' });
  assert.deepEqual(upstream.requests[2].body.response_format, { type: 'json_object' });
  assert.equal(upstream.requests[2].body.tool_choice, 'none');
  const body = response.body as { choices: Array<{ message: { content: string } }> };
  assert.equal(body.choices[0].message.content, '{"city":"Oslo","population":709037}');
});

test('LangChain ChatOpenAI.withStructuredOutput(zod): a json_schema in draft 2020-12, the parsed object', async () => {
  const { key, wallet } = await fundedWallet(gateway);
  const bodies: Array<Record<string, any>> = [];
  const model = new ChatOpenAI({
    model: 'conductor',
    apiKey: key,
    maxRetries: 0,
    configuration: { baseURL: `${gateway.url}/v1`, defaultHeaders: { 'x-wallet-address': wallet }, fetch: recordingFetch(bodies) },
  });
  upstream.script(lookUp, { text: 'Oslo has 709,037 people.' }, { text: '{"city":"Oslo","population":709037}' });
  const city = await model.withStructuredOutput(City, { name: 'city' }).invoke(prompt);
  assert.deepEqual(city, { city: 'Oslo', population: 709037 });
  const sent = bodies[0].response_format;
  assert.equal(sent.type, 'json_schema');
  assert.equal(sent.json_schema.name, 'city');
  assert.equal(sent.json_schema.schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  const corrective = upstream.requests[2].body.response_format as { json_schema: { schema: unknown } };
  assert.deepEqual(corrective.json_schema.schema, sent.json_schema.schema);
  assert.equal(upstream.requests.length, 3);
});
