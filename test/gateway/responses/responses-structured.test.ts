/**
 * Structured outputs on `/v1/responses` with the official `openai` client's own helpers
 * (`responses.parse` / `.stream` with `zodTextFormat`), credits on: the answer is one `message`
 * item holding the final JSON (a tool round's text emits no `output_text`, so `output_parsed`
 * parses), one corrective call carries the format upstream, a strict schema failing twice is 502
 * (or `response.failed` then `error` when streamed, nothing of an answer sent), `text.format` is
 * echoed, and bad schemas are 400 naming `text.format.schema`.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { APIError } from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, authHeaders, type TestGateway } from '../../helpers/gateway.js';
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

const City = z.object({ city: z.string(), population: z.number().int() });
const cityFormat = zodTextFormat(City, 'city');
const OSLO = '{"city":"Oslo","population":709037}';
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

test('responses.parse after a tool round: an mcp_call and one message with the JSON; output_parsed; text.format echoed', async () => {
  const { client } = await funded();
  upstream.script(lookUp, { text: OSLO, ...oneCredit });
  const response = await client.responses.parse({
    model: 'conductor',
    input: 'How many people live in Oslo?',
    text: { format: cityFormat },
  });
  assert.deepEqual(
    response.output.map((item) => item.type),
    ['mcp_call', 'message'],
  );
  assert.deepEqual(response.output_parsed, { city: 'Oslo', population: 709037 });
  assert.equal(response.output_text, OSLO);
  assert.deepEqual(response.text?.format, {
    type: 'json_schema',
    name: 'city',
    schema: cityFormat.schema,
    strict: true,
  });
  assert.equal(upstream.requests[0].body.response_format, undefined);
  // The stored copy echoes the format too, and lists the input.
  const stored = await client.responses.retrieve(response.id);
  assert.deepEqual(stored.text?.format, response.text?.format);
});

test('an invalid answer gets exactly one corrective call with tool_choice none and the format in chat form', async () => {
  const { client } = await funded();
  upstream.script(lookUp, { text: 'About 709,000.', ...oneCredit }, { text: OSLO, ...oneCredit });
  const { data, response } = await client.responses
    .parse({ model: 'conductor', input: 'How many people live in Oslo?', text: { format: cityFormat } })
    .withResponse();
  assert.deepEqual(data.output_parsed, { city: 'Oslo', population: 709037 });
  assert.deepEqual(
    data.output.map((item) => item.type),
    ['mcp_call', 'message'],
  );
  assert.equal(upstream.requests.length, 3);
  const corrective = upstream.requests[2].body;
  assert.equal(corrective.tool_choice, 'none');
  assert.deepEqual(corrective.response_format, {
    type: 'json_schema',
    json_schema: { name: 'city', schema: cityFormat.schema, strict: true },
  });
  assert.equal(response.headers.get('x-credits-charged'), '3');
  // The next turn sees the answer, not the corrective exchange.
  upstream.script({ text: '{"city":"Oslo","population":1}', ...oneCredit });
  await client.responses.parse({ model: 'conductor', input: 'Again.', previous_response_id: data.id, text: { format: cityFormat } });
  const next = upstream.requests[3].body.messages.slice(1);
  assert.deepEqual(
    next.map((m) => [m.role, m.content]),
    [
      ['user', 'How many people live in Oslo?'],
      ['assistant', 'Let me look that up.'],
      ['tool', '{"text":"Oslo"}'],
      ['assistant', OSLO],
      ['user', 'Again.'],
    ],
  );
});

test('streamed: one output_text delta with the validated JSON, no text item for the tool round', async () => {
  const { client } = await funded();
  upstream.script(lookUp, { text: ['Hmm,', ' Oslo.'], ...oneCredit }, { text: ['{"city":"Oslo",', '"population":709037}'], ...oneCredit });
  const stream = client.responses.stream({ model: 'conductor', input: 'How many people live in Oslo?', text: { format: cityFormat } });
  const events: ResponseStreamEvent[] = [];
  stream.on('event', (event) => events.push(event));
  const final = await stream.finalResponse();
  assert.deepEqual(final.output_parsed, { city: 'Oslo', population: 709037 });
  const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
  assert.deepEqual(deltas, [OSLO]);
  assert.equal(events.filter((e) => e.type === 'response.content_part.added').length, 1);
  assert.equal(events.at(-1)?.type, 'response.completed');
});

test('strict failing twice: 502 upstream_invalid_output; streamed, response.failed then error, and no text at all', async () => {
  const { wallet, client } = await funded();
  upstream.script({ text: 'Oslo.', ...oneCredit }, { text: 'Oslo!', ...oneCredit });
  const err = await apiErrorOf(client.responses.parse({ model: 'conductor', input: 'Oslo?', text: { format: cityFormat } }));
  assert.equal(err.status, 502);
  assert.equal(err.code, 'upstream_invalid_output');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 98, 'both calls charged');

  upstream.script(lookUp, { text: 'Oslo.', ...oneCredit }, { text: 'Oslo!', ...oneCredit });
  const stream = client.responses.stream({ model: 'conductor', input: 'Oslo?', text: { format: cityFormat } });
  const events: ResponseStreamEvent[] = [];
  stream.on('event', (event) => events.push(event));
  await assert.rejects(stream.finalResponse(), (e: { code?: string; message?: string }) => {
    assert.equal(e.code, 'upstream_invalid_output');
    assert.match(e.message ?? '', /did not answer in the requested format \(strict\), even when asked again/);
    return true;
  });
  const types = events.map((e) => e.type);
  assert.ok(!types.includes('response.output_text.delta'), types.join(', '));
  assert.deepEqual(types.slice(-2), ['response.failed', 'error']);
  const error = events.at(-1);
  assert.ok(error?.type === 'error');
  assert.equal(error.code, 'upstream_invalid_output');
  assert.equal((await gateway.ledger.balance(wallet)).credits, 95, 'three more calls charged');
});

test('a bad text.format schema is 400 naming text.format.schema before any upstream call', async () => {
  const { key, wallet } = await funded();
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < 16; i++) deep = { type: 'object', properties: { a: deep } };
  for (const schema of [{ type: 'object', description: 'x'.repeat(65 * 1024) }, deep]) {
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: authHeaders(key, wallet),
      body: JSON.stringify({ model: 'conductor', input: 'Hi', text: { format: { type: 'json_schema', name: 'x', schema } } }),
    });
    const { error } = (await response.json()) as { error: Record<string, string> };
    assert.equal(response.status, 400);
    assert.equal(error.param, 'text.format.schema');
    assert.match(error.message, /^text\.format\.schema: the schema (is \d+ bytes|nests deeper than 32)/);
  }
  assert.equal(upstream.requests.length, 0);
});
