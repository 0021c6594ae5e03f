import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { fundedWallet, authHeaders, type TestGateway } from '../../helpers/gateway.js';
import { openaiFor, postChat, startChatGateway } from './chat-harness.js';

let upstream: ScriptedUpstream;
let gateway: TestGateway;
before(async () => {
  upstream = await startScriptedUpstream();
  gateway = await startChatGateway({
    upstream,
    config: (json) => {
      json.freeMode = false;
      json.limits = { chatConcurrencyPerWallet: 64 };
    },
  });
});
after(async () => {
  await gateway?.stop();
  await upstream?.close();
});
beforeEach(() => upstream.reset());

const ask = { model: 'conductor', messages: [{ role: 'user' as const, content: 'Plan something.' }] };
/** A chat whose first hold is small (1 credit): a wallet of a few credits covers it twice over. */
const small = { ...ask, max_tokens: 100, tool_choice: 'none' as const };

/**
 * A funded wallet the gateway has seen: one small chat, charged 1, taught it the balance (the
 * hint Charge.claimRunAhead and Charge.claimChargeAtEnd go by).
 */
async function seenWallet(credits: number): Promise<{ wallet: string; key: string }> {
  const funded = await fundedWallet(gateway, credits);
  const first = await postChat(gateway, small, authHeaders(funded.key, funded.wallet));
  assert.equal(first.headers.get('x-credits-remaining'), String(credits - 1));
  return funded;
}

/** A streamed chat the test can cancel: the response, and the controller that aborts it. */
async function cancellableStream(wallet: string, key: string): Promise<{ res: Response; controller: AbortController }> {
  const controller = new AbortController();
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: authHeaders(key, wallet),
    body: JSON.stringify({ ...ask, stream: true }),
    signal: controller.signal,
  });
  return { res, controller };
}

/** The wallet's balance once nothing is held any more (the settle of a cancelled chat runs after the cancel). */
async function balanceOnceSettled(wallet: string, deposited: number) {
  let balance = await gateway.ledger.balance(wallet);
  for (let i = 0; i < 100 && balance.credits + balance.total_spent !== deposited; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    balance = await gateway.ledger.balance(wallet);
  }
  return balance;
}

test('the charge is exactly max(1, ceil((prompt + 2 × completion) / 1000)) over every call, with credit headers', async () => {
  const { wallet, key } = await fundedWallet(gateway, 100);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }], usage: { prompt_tokens: 1200, completion_tokens: 100 } },
    { toolCalls: [{ name: 'echo', arguments: '{"text":"b"}' }], usage: { prompt_tokens: 1500, completion_tokens: 300 } },
    { text: 'Done.', usage: { prompt_tokens: 2000, completion_tokens: 400 } },
  );
  const { data, response } = await openaiFor(gateway, key, wallet).chat.completions.create(ask).withResponse();
  // (4700 + 2 × 800) / 1000 = 6.3 → 7
  assert.deepEqual(data.usage, { prompt_tokens: 4700, completion_tokens: 800, total_tokens: 5500 });
  assert.equal(response.headers.get('x-credits-charged'), '7');
  assert.equal(response.headers.get('x-credits-remaining'), '93');
  const balance = await gateway.ledger.balance(wallet);
  assert.deepEqual(balance, { address: wallet, credits: 93, total_deposited: 100, total_spent: 7 });
});

test('a tiny chat still costs the minimum of 1 credit', async () => {
  const { wallet, key } = await fundedWallet(gateway, 10);
  upstream.script({ text: 'Hi.', usage: { prompt_tokens: 3, completion_tokens: 1 } });
  const res = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-credits-charged'), '1');
  assert.equal(res.headers.get('x-credits-remaining'), '9');
});

test('an empty wallet gets 402 insufficient_credits before any upstream call', async () => {
  const { wallet, key } = await fundedWallet(gateway, 0);
  const res = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(res.status, 402);
  assert.equal(res.body.error.code, 'insufficient_credits');
  assert.equal(res.body.error.type, 'insufficient_credits_error');
  assert.match(res.body.error.message, /^Insufficient credits: balance is 0, this request needs at least \d+\.$/);
  // Streaming too: nothing was sent yet, so it is a plain HTTP error.
  const streamed = await postChat(gateway, { ...ask, stream: true }, authHeaders(key, wallet));
  assert.equal(streamed.status, 402);
  assert.equal(streamed.body.error.code, 'insufficient_credits');
  assert.equal(upstream.requests.length, 0);
});

test('a balance the gateway saw gone stale (spent elsewhere): the chat that ran ahead of its hold answers 402 and charges nothing', async () => {
  // Observed with the hold waiting on PostgreSQL in cluster/chat-run-ahead.test.ts; here the
  // embedded ledger refuses at once, usually before the call leaves.
  const { wallet, key } = await seenWallet(10);
  const elsewhere = await gateway.ledger.reserve(wallet, 9);
  upstream.defaultTurn = { text: 'Never shown.', delayMs: 50 };
  const before = upstream.requests.length;
  const res = await postChat(gateway, { ...small, stream: true }, authHeaders(key, wallet));
  assert.equal(res.status, 402);
  assert.equal(res.body.error.code, 'insufficient_credits');
  // Read again after the wait: a call that left just before the refusal reaches the upstream late.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const sent = () => upstream.requests.slice(before);
  for (let i = 0; i < 100 && sent().some((r) => !r.aborted); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(sent().length <= 1 && sent().every((r) => r.aborted), 'a call sent ahead is cancelled');
  await gateway.ledger.release(elsewhere);
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 9, total_deposited: 10, total_spent: 1 });
  const again = await postChat(gateway, small, authHeaders(key, wallet));
  assert.equal(again.status, 200);
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 8, total_deposited: 10, total_spent: 2 });
});

test('a JSON chat on a wallet seen holding plenty holds nothing while it runs and is charged once answered; emptied meanwhile, it answers 402 and charges nothing', async () => {
  const { wallet, key } = await seenWallet(20);

  upstream.defaultTurn = { text: 'Answered.', holdLast: true };
  const answered = postChat(gateway, small, authHeaders(key, wallet));
  await upstream.held();
  // A hold (the streamed path's, or a wallet not seen) would show here as 18.
  assert.equal((await gateway.ledger.balance(wallet)).credits, 19, 'nothing held while the model answers');
  upstream.release();
  const res = await answered;
  assert.equal(res.status, 200);
  assert.equal(res.body.choices[0].message.content, 'Answered.');
  assert.equal(res.headers.get('x-credits-charged'), '1');
  assert.equal(res.headers.get('x-credits-remaining'), '18');

  const refused = postChat(gateway, small, authHeaders(key, wallet));
  await upstream.held();
  await gateway.ledger.charge(wallet, 18); // spent elsewhere: another request, another instance
  upstream.release();
  const short = await refused;
  assert.equal(short.status, 402);
  assert.equal(short.body.error.code, 'insufficient_credits');
  assert.ok(!JSON.stringify(short.body).includes('Answered.'), 'the answer is not given');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 20, total_spent: 20 });
});

test('a JSON chat charged at the end that fails pays for what the upstream did; emptied meanwhile, it pays nothing', async () => {
  const { wallet, key } = await seenWallet(20);
  const failing = { text: ['Half ', 'an answer'], holdLast: true, streamError: { message: 'generation failed' } };

  upstream.defaultTurn = failing;
  const paid = postChat(gateway, small, authHeaders(key, wallet));
  await upstream.held();
  upstream.release();
  assert.equal((await paid).status, 502);
  let balance = await balanceOnceSettled(wallet, 20);
  assert.deepEqual([balance.credits, balance.total_spent], [18, 2], 'the failed call is paid for');

  const unpaid = postChat(gateway, small, authHeaders(key, wallet));
  await upstream.held();
  await gateway.ledger.charge(wallet, 18); // spent elsewhere: another request, another instance
  upstream.release();
  assert.equal((await unpaid).status, 502, "the chat's own error, not the charge's");
  balance = await balanceOnceSettled(wallet, 20);
  assert.deepEqual(balance, { address: wallet, credits: 0, total_deposited: 20, total_spent: 20 });
});

test('a JSON chat charged at the end that goes on to a tool round holds from then on and is charged exactly', async () => {
  const { wallet, key } = await seenWallet(100);
  upstream.script(
    {
      text: 'Looking.',
      holdLast: true,
      toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }],
      usage: { prompt_tokens: 1200, completion_tokens: 100 },
    },
    { text: ['Do', 'ne.'], holdLast: true, usage: { prompt_tokens: 2000, completion_tokens: 400 } },
  );
  const answered = postChat(gateway, ask, authHeaders(key, wallet));
  await upstream.held();
  assert.equal((await gateway.ledger.balance(wallet)).credits, 99, 'nothing held during the first call');
  upstream.release();
  await upstream.held();
  assert.ok((await gateway.ledger.balance(wallet)).credits < 99, 'a hold during the call after the tool round');
  upstream.release();
  const res = await answered;
  assert.equal(res.status, 200);
  assert.equal(res.body.choices[0].message.content, 'Looking.\n\nDone.');
  // (3200 + 2 × 500) / 1000 = 4.2 → 5
  assert.equal(res.headers.get('x-credits-charged'), '5');
  assert.equal(res.headers.get('x-credits-remaining'), '94');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 94, total_deposited: 100, total_spent: 6 });
});

test('a wallet holding 3 credits running a script that would cost more ends at 0, never below, with what the model wrote', async () => {
  const { wallet, key } = await fundedWallet(gateway, 3);
  // Each call uses 1 credit's worth of tokens; with max_tokens 100 the hold before call k is the
  // k - 1 credits used so far plus 1 for the call: the fourth call would need a fourth credit.
  for (let i = 1; i <= 4; i++) {
    upstream.script({
      text: `Step ${i}.`,
      toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }],
      usage: { prompt_tokens: 1000, completion_tokens: 0 },
    });
  }
  const res = await postChat(gateway, { ...ask, max_tokens: 100 }, authHeaders(key, wallet));
  assert.equal(res.status, 200);
  assert.equal(res.body.choices[0].finish_reason, 'length');
  assert.equal(res.body.choices[0].message.content, 'Step 1.\n\nStep 2.\n\nStep 3.');
  assert.equal(upstream.requests.length, 3);
  assert.equal(res.headers.get('x-credits-charged'), '3');
  assert.equal(res.headers.get('x-credits-remaining'), '0');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 3, total_spent: 3 });
});

test('a call that used more than the wallet can cover stops the chat there, charged at most what was held', async () => {
  const { wallet, key } = await fundedWallet(gateway, 3);
  for (let i = 1; i <= 4; i++) {
    upstream.script({
      text: `Step ${i}.`,
      toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }],
      usage: { prompt_tokens: 3000, completion_tokens: 1000 },
    });
  }
  const res = await postChat(gateway, { ...ask, max_tokens: 100 }, authHeaders(key, wallet));
  assert.equal(res.status, 200);
  assert.equal(res.body.choices[0].finish_reason, 'length');
  assert.equal(res.body.choices[0].message.content, 'Step 1.');
  assert.equal(upstream.requests.length, 1);
  // The hold before the call was its worst case as estimated (1 credit): the charge is capped there.
  assert.equal(res.headers.get('x-credits-charged'), '1');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 2, total_deposited: 3, total_spent: 1 });
});

test('a modest wallet without max_tokens completes a multi-round chat: the hold tracks the cost so far, not the sum of worst cases', async () => {
  const { wallet, key } = await fundedWallet(gateway, 20);
  // Every call's worst case is about 5 credits (2 × 2048 output tokens); four of them fill the wallet.
  for (let i = 1; i <= 4; i++) upstream.script({ toolCalls: [{ name: 'echo', arguments: `{"text":"${i}"}` }] });
  upstream.script({ text: 'All done.' });
  const res = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(res.status, 200);
  assert.equal(res.body.choices[0].finish_reason, 'stop');
  assert.equal(res.body.choices[0].message.content, 'All done.');
  assert.equal(upstream.requests.length, 5);
  // 5 × (50 + 2 × 10) tokens = 350 → 1 credit.
  assert.equal(res.headers.get('x-credits-charged'), '1');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 19, total_deposited: 20, total_spent: 1 });
});

test('50 concurrent chats from one wallet never overspend it', async () => {
  const { wallet, key } = await fundedWallet(gateway, 30);
  upstream.defaultTurn = { text: 'ok', delayMs: 100, usage: { prompt_tokens: 100, completion_tokens: 20 } };
  const body = { ...ask, max_tokens: 100, tool_choice: 'none' };
  const results = await Promise.all(Array.from({ length: 50 }, () => postChat(gateway, body, authHeaders(key, wallet))));
  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 402);
  assert.equal(
    ok.length + refused.length,
    50,
    JSON.stringify(results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.body)),
  );
  // Every chat costs exactly its 1 reserved credit, so exactly 30 can run, whatever the timing.
  assert.equal(ok.length, 30);
  for (const r of refused) assert.equal(r.body.error.code, 'insufficient_credits');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 0, total_deposited: 30, total_spent: 30 });
});

test('an upstream failure before any token was produced releases the held credits', async () => {
  const { wallet, key } = await fundedWallet(gateway, 10);
  upstream.script({ status: 400, body: { error: { message: 'bad' } } });
  const res = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(res.status, 400);
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 10, total_deposited: 10, total_spent: 0 });
});

test('a cancelled stream settles what was consumed and holds nothing afterwards', async () => {
  const { wallet, key } = await fundedWallet(gateway, 20);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }], usage: { prompt_tokens: 2500, completion_tokens: 500 } },
    { text: ['Partial', ' never sent'], holdLast: true },
  );
  const { res, controller } = await cancellableStream(wallet, key);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('Partial')) text += new TextDecoder().decode((await reader.read()).value);
  await upstream.held();
  controller.abort();
  await upstream.abortedRequest();
  upstream.release();
  // First call: 2500 + 2 × 500 = 3500 tokens; the cut-off call adds its estimated prompt and output.
  const balance = await balanceOnceSettled(wallet, 20);
  assert.equal(balance.credits + balance.total_spent, 20, 'nothing is left on hold');
  assert.ok(balance.total_spent >= 4 && balance.total_spent <= 6, `charged ${balance.total_spent}`);
});

test('a client that cancels before the next upstream call has answered pays only for the calls that answered', async () => {
  const { wallet, key } = await fundedWallet(gateway, 20);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"a"}' }], usage: { prompt_tokens: 2500, completion_tokens: 500 } },
    { text: 'Never seen.', delayMs: 5_000 },
  );
  const { res, controller } = await cancellableStream(wallet, key);
  assert.equal(res.status, 200);
  // The second call has reached the upstream, which has not answered it yet.
  for (let i = 0; i < 200 && upstream.requests.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(upstream.requests.length, 2);
  controller.abort();
  await upstream.abortedRequest();
  const balance = await balanceOnceSettled(wallet, 20);
  // The first call alone: 2500 + 2 × 500 = 3500 tokens → 4 credits; the unanswered call adds nothing.
  assert.deepEqual(balance, { address: wallet, credits: 16, total_deposited: 20, total_spent: 4 });
});

test('a streamed chat with credits on: the finish chunk carries credits {charged, remaining}, equal to the ledger', async () => {
  const { wallet, key } = await fundedWallet(gateway, 50);
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"s"}' }], usage: { prompt_tokens: 1800, completion_tokens: 200 } },
    { text: ['Streamed', ' answer.'], usage: { prompt_tokens: 2100, completion_tokens: 400 } },
  );
  const stream = await openaiFor(gateway, key, wallet).chat.completions.create({ ...ask, stream: true });
  const chunks: unknown[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const finish = chunks.at(-1) as { choices: Array<{ finish_reason: string }>; credits: { charged: number; remaining: number } };
  assert.equal(finish.choices[0].finish_reason, 'stop');
  // (3900 + 2 × 600) / 1000 = 5.1 → 6
  assert.deepEqual(finish.credits, { charged: 6, remaining: 44 });
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 44, total_deposited: 50, total_spent: 6 });
});

test('an error inside the upstream stream charges only what was consumed', async () => {
  const { wallet, key } = await fundedWallet(gateway, 20);
  // Nothing produced before the error: the hold goes back whole.
  upstream.script({ streamError: { message: 'CUDA out of memory' } });
  const failed = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(failed.status, 502);
  assert.equal(failed.body.error.code, 'upstream_error');
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 20, total_deposited: 20, total_spent: 0 });
  // A finished round, then an error: that round is charged, the failed call adds nothing it did not produce.
  upstream.script(
    { toolCalls: [{ name: 'echo', arguments: '{"text":"e"}' }], usage: { prompt_tokens: 2500, completion_tokens: 500 } },
    { streamError: { message: 'CUDA out of memory' } },
  );
  const later = await postChat(gateway, ask, authHeaders(key, wallet));
  assert.equal(later.status, 502);
  assert.deepEqual(await gateway.ledger.balance(wallet), { address: wallet, credits: 16, total_deposited: 20, total_spent: 4 });
});
