/**
 * /v1/messages pays as chat completions do, and stops as they do: the same scripted rounds cost
 * the same credits through both doors; `max_tokens` says the token cap or the credits cut the
 * answer (the log line says which); a failure after the stream began is an `error` event with the
 * partial work billed; a client that leaves cancels the upstream call and the tool calls at the
 * MCP server, and pays only for what answered.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { startScriptedUpstream, type ScriptedUpstream, type Turn } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, startChatGateway } from '../chat/chat-harness.js';
import { waitFor } from '../tools/fixture-servers.js';
import { chatCost } from '../../../gateway/pricing.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-messages-'));
const cancelLog = join(scratch, 'cancelled.log');
const startLog = join(scratch, 'started.log');
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    slowEnv: { SLOW_CANCEL_LOG: cancelLog, SLOW_START_LOG: startLog },
    config: (json) => void (json.freeMode = false),
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => upstream.reset());

async function funded(credits: number) {
  const { wallet, key } = await fundedWallet(gateway, credits);
  const client = new Anthropic({ baseURL: gateway.url, apiKey: key, defaultHeaders: { 'x-wallet-address': wallet }, maxRetries: 0 });
  return { wallet, key, client };
}

/** The wallet's balance once nothing is held any more (a cancelled message settles after the cancel). */
async function balanceOnceSettled(wallet: string, deposited: number) {
  let balance = await gateway.ledger.balance(wallet);
  for (let i = 0; i < 100 && balance.credits + balance.total_spent !== deposited; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    balance = await gateway.ledger.balance(wallet);
  }
  return balance;
}

const ask = { model: 'conductor', max_tokens: 1000, messages: [{ role: 'user' as const, content: 'Tell me.' }] };

const threeCalls: Turn[] = [
  { toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }], usage: { prompt_tokens: 1200, completion_tokens: 100 } },
  { toolCalls: [{ name: 'echo', arguments: '{"text":"b"}' }], usage: { prompt_tokens: 1500, completion_tokens: 300 } },
  { text: 'Done.', usage: { prompt_tokens: 2000, completion_tokens: 400 } },
];

test('the same rounds cost exactly the same through /v1/messages as through chat completions, JSON and streamed', async () => {
  const expected = chatCost({ prompt_tokens: 4700, completion_tokens: 800 });
  assert.equal(expected, 7);

  const viaChat = await funded(100);
  upstream.script(...threeCalls);
  const { response: chatResponse } = await openaiFor(gateway, viaChat.key, viaChat.wallet)
    .chat.completions.create({ model: 'conductor', messages: ask.messages, max_tokens: 1000 })
    .withResponse();
  assert.equal(chatResponse.headers.get('x-credits-charged'), String(expected));

  const viaMessages = await funded(100);
  upstream.script(...threeCalls);
  const { data, response } = await viaMessages.client.messages.create(ask).withResponse();
  assert.deepEqual({ input: data.usage.input_tokens, output: data.usage.output_tokens }, { input: 4700, output: 800 });
  assert.equal(response.headers.get('x-credits-charged'), String(expected));
  assert.equal(response.headers.get('x-credits-remaining'), String(100 - expected));

  const streamed = await funded(100);
  upstream.script(...threeCalls);
  const final = await streamed.client.messages.stream(ask).finalMessage();
  assert.equal(final.usage.output_tokens, 800);

  for (const { wallet } of [viaChat, viaMessages, streamed]) {
    assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 93, total_deposited: 100, total_spent: 7 });
  }
});

test('stop_reason max_tokens for the token cap and for credits that ran out; the log line says which', async () => {
  const { client } = await funded(100);
  upstream.script({ text: 'Cut', finishReason: 'length' });
  const cut = await client.messages.create({ ...ask, max_tokens: 16 });
  assert.equal(cut.stop_reason, 'max_tokens');

  const poor = await funded(3);
  for (let i = 1; i <= 2; i++) {
    upstream.script({
      text: `Step ${i}.`,
      toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }],
      usage: { prompt_tokens: 3000, completion_tokens: 1000 },
    });
  }
  const broke = await poor.client.messages.create({ ...ask, max_tokens: 100 });
  assert.equal(broke.stop_reason, 'max_tokens');
  assert.equal(upstream.requests.length, 2, "the credits ran out before the message's second call");
  const lines = gateway.logs.filter((l) => l.msg === 'message stopped at max_tokens: cut by the token cap or the credits');
  assert.deepEqual(
    lines.slice(-2).map((l) => [l.message, l.cutShort]),
    [
      [cut.id, 'max_tokens'],
      [broke.id, 'credits'],
    ],
  );
});

test('a failure after the stream began is an error event the SDK raises; the partial work is billed', async () => {
  const { wallet, client } = await funded(100);
  upstream.script({ text: 'Part', streamError: { message: 'out of memory' }, usage: { prompt_tokens: 10, completion_tokens: 5 } });
  const stream = client.messages.stream(ask);
  const types: string[] = [];
  stream.on('streamEvent', (event) => types.push(event.type));
  await assert.rejects(stream.finalMessage(), (err: unknown) => {
    assert.ok(err instanceof APIError);
    assert.deepEqual(err.error, {
      type: 'error',
      error: {
        type: 'api_error',
        message: 'upstream_error: The upstream for model "svc-32b-conductor" failed: it sent an error in the stream: out of memory.',
      },
    });
    return true;
  });
  assert.deepEqual(types, ['message_start', 'content_block_start', 'content_block_delta']);
  assert.equal((await balanceOnceSettled(wallet, 100)).credits, 99, 'what the upstream did is charged (the minimum)');
});

test('a client that leaves while tools run cancels them at the MCP server; it pays only for the call that answered', async () => {
  const { wallet, key } = await funded(20);
  upstream.script({
    toolCalls: [
      { name: 'sleep', arguments: '{"ms":20000,"tag":"m1"}' },
      { name: 'sleep', arguments: '{"ms":20000,"tag":"m2"}' },
    ],
    usage: { prompt_tokens: 2500, completion_tokens: 500 },
  });
  const controller = new AbortController();
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: authHeaders(key, wallet, { 'anthropic-version': '2023-06-01' }),
    // A hold that covers a 2,000-token answer covers the first call's cost too (a settle charges at most what is held).
    body: JSON.stringify({ ...ask, max_tokens: 2000, stream: true }),
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('event: ping')) text += new TextDecoder().decode((await reader.read()).value);
  assert.equal(text.match(/"type":"mcp_tool_use"/g)?.length, 2, 'both runs announced before the ping');
  await waitFor('both calls running at the server', () => existsSync(startLog) && readFileSync(startLog, 'utf8').includes('started m2'));
  controller.abort();
  await waitFor(
    'both tool calls cancelled',
    () => existsSync(cancelLog) && readFileSync(cancelLog, 'utf8').split('\n').filter(Boolean).length === 2,
    5000,
  );
  assert.deepEqual(readFileSync(cancelLog, 'utf8').split('\n').filter(Boolean).sort(), ['cancelled m1', 'cancelled m2']);
  assert.equal(upstream.requests.length, 1, 'no further round');
  // The one call that answered: 2500 + 2 × 500 = 3500 tokens → 4 credits.
  assert.deepEqual(await balanceOnceSettled(wallet, 20), { address: wallet, credits: 16, total_deposited: 20, total_spent: 4 });
});

test('a non-streaming client that leaves aborts the upstream call; nothing answered, nothing charged', async () => {
  const { wallet, client } = await funded(20);
  upstream.script({ text: 'slow', delayMs: 5000 });
  const controller = new AbortController();
  const pending = client.messages.create(ask, { signal: controller.signal });
  await waitFor('the upstream call under way', () => upstream.requests.length === 1);
  controller.abort();
  await assert.rejects(pending);
  const aborted = await upstream.abortedRequest();
  assert.ok(aborted.abortedAt !== undefined);
  assert.deepEqual(await balanceOnceSettled(wallet, 20), { address: wallet, credits: 20, total_deposited: 20, total_spent: 0 });
});
