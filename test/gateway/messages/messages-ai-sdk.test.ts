/**
 * The AI SDK's Anthropic provider (`@ai-sdk/anthropic` with a base URL) against /v1/messages:
 * `generateText` with a client tool over several steps (the gateway's round comes back as a
 * provider-executed MCP call, the client's tool runs in the SDK, and the model sees the gateway
 * round once in the next step), and `streamText`.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, type TestGateway } from '../../helpers/gateway.js';
import { startChatGateway } from '../chat/chat-harness.js';
import { chatCost } from '../../../gateway/pricing.js';

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

async function providerFor(credits = 100) {
  const { wallet, key } = await fundedWallet(gateway, credits);
  const sent: Array<Record<string, any>> = [];
  const anthropic = createAnthropic({
    baseURL: `${gateway.url}/v1`,
    apiKey: key,
    headers: { 'x-wallet-address': wallet },
    fetch: async (url, init) => {
      sent.push(JSON.parse(String(init?.body)));
      return fetch(url, init);
    },
  });
  return { wallet, anthropic, sent };
}

const readFile = tool({
  description: 'Read a file on the user machine.',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `${path}: alpha is 42`,
});

test('generateText with a client tool, multi-step: the gateway round as a provider-executed MCP call, seen once by the model', async () => {
  const { wallet, anthropic, sent } = await providerFor();
  upstream.script(
    {
      text: 'Checking.',
      toolCalls: [{ id: 'call_echo00001', name: 'echo', arguments: '{"text":"hi"}' }],
      usage: { prompt_tokens: 800, completion_tokens: 20 },
    },
    {
      toolCalls: [{ id: 'call_read00001', name: 'read_file', arguments: '{"path":"notes.txt"}' }],
      usage: { prompt_tokens: 900, completion_tokens: 30 },
    },
    { text: 'notes.txt says alpha is 42.', usage: { prompt_tokens: 1000, completion_tokens: 40 } },
  );
  const result = await generateText({
    model: anthropic('conductor'),
    prompt: 'What does notes.txt say about alpha?',
    tools: { read_file: readFile },
    stopWhen: stepCountIs(4),
    maxOutputTokens: 500,
  });
  assert.equal(result.text, 'notes.txt says alpha is 42.');
  assert.equal(result.steps.length, 2);
  assert.deepEqual(
    result.steps[0].toolCalls.map((c) => [c.toolName, c.providerExecuted ?? false]),
    [
      ['echo', true],
      ['read_file', false],
    ],
  );
  assert.equal(result.steps[0].finishReason, 'tool-calls');
  const echoResult = result.steps[0].toolResults.find((r) => r.toolName === 'echo');
  assert.deepEqual(echoResult?.output, [{ type: 'text', text: '{"text":"hi"}' }]);
  assert.equal(result.steps[0].usage.inputTokens, 1700);
  assert.equal(result.steps[0].usage.outputTokens, 50);
  assert.equal(result.steps[1].finishReason, 'stop');
  // Step 2 went up with the gateway's blocks echoed; the model saw the gateway round once.
  const echoed = (sent[1].messages[1].content as Array<{ type: string }>).map((b) => b.type);
  assert.ok(echoed.includes('mcp_tool_use') && echoed.includes('mcp_tool_result'), `echoed ${echoed.join(', ')}`);
  const step2 = upstream.requests[2].body.messages.slice(1);
  assert.deepEqual(
    step2.map((m) => [m.role, m.content]),
    [
      ['user', 'What does notes.txt say about alpha?'],
      ['assistant', 'Checking.'],
      ['tool', '{"text":"hi"}'],
      ['assistant', null],
      ['tool', 'notes.txt: alpha is 42'],
    ],
  );
  const charged = chatCost({ prompt_tokens: 1700, completion_tokens: 50 }) + chatCost({ prompt_tokens: 1000, completion_tokens: 40 });
  assert.equal((await gateway.ledger.balance(wallet)).credits, 100 - charged);
});

test('streamText: text deltas, the gateway round as tool events, usage and finish reason', async () => {
  const { anthropic } = await providerFor();
  upstream.script(
    {
      toolCalls: [{ id: 'call_echo00002', name: 'echo', arguments: '{"text":"yo"}' }],
      usage: { prompt_tokens: 500, completion_tokens: 10 },
    },
    { text: ['Echo', ' said yo.'], usage: { prompt_tokens: 600, completion_tokens: 20 } },
  );
  const result = streamText({ model: anthropic('conductor'), prompt: 'Echo yo.', maxOutputTokens: 300 });
  const kinds: string[] = [];
  let text = '';
  for await (const part of result.fullStream) {
    kinds.push(part.type);
    if (part.type === 'text-delta') text += part.text;
  }
  assert.equal(text, 'Echo said yo.');
  assert.ok(kinds.indexOf('tool-call') < kinds.indexOf('tool-result'), kinds.join(', '));
  assert.ok(kinds.indexOf('tool-result') < kinds.indexOf('text-delta'), kinds.join(', '));
  const [calls, usage] = await Promise.all([result.toolCalls, result.usage]);
  assert.deepEqual(
    calls.map((c) => [c.toolName, c.input, c.providerExecuted]),
    [['echo', { text: 'yo' }, true]],
  );
  assert.equal(await result.finishReason, 'stop');
  assert.equal(usage.inputTokens, 1100);
  assert.equal(usage.outputTokens, 30);
});
