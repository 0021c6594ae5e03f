/**
 * Issue 38, what each failure does in a fleet of replicas speaking vLLM's, SGLang's and
 * llama.cpp's recorded wire formats: a call that failed before any of its output reached the
 * client goes to another replica (never the same one twice in a row) and only the attempt that
 * answered is charged; a stream that already showed content ends with its error; failures cool a
 * replica down until its probe answers; a 429 cools it for its Retry-After, which no probe cuts short.
 * A collecting client's calls ask for JSON (issue 39), and fail over as streams do.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiKeyFor, authHeaders, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { startReplica, type Fault, type Replica } from '../../fixtures/upstreams/replica.js';
import { ask, chat, deploymentsOf, fleetGateway, metric, openingsFor, servedBy, type Member } from './fleet-harness.js';
import { chatCost } from '../../../gateway/pricing.js';

let vllm: Replica;
let sglang: Replica;
let llamacpp: Replica;
let members: Member[];
const stops: Array<() => Promise<void>> = [];

before(async () => {
  [vllm, sglang, llamacpp] = await Promise.all([startReplica('vllm-hermes'), startReplica('sglang'), startReplica('llamacpp')]);
  members = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    // Ranked third for every conversation below: it never takes a call unless both others failed.
    { name: 'gpu-c', replica: llamacpp, priority: 1 },
  ];
  stops.push(() => Promise.all([vllm, sglang, llamacpp].map((r) => r.close())).then(() => undefined));
});

after(async () => {
  for (const stop of stops.reverse()) await stop();
});

async function gatewayFor(routing: Record<string, unknown>, config?: (json: Record<string, unknown>) => void): Promise<TestGateway> {
  const gateway = await fleetGateway(members, { tools: false, routing, config });
  stops.push(() => gateway.stop());
  return gateway;
}

/** The headers of the wallet every chat here comes from, funded and keyed when credits are on. */
async function payer(gateway: TestGateway): Promise<Record<string, string>> {
  await gateway.ledger.grant(WALLET, 1_000);
  return authHeaders(await apiKeyFor(gateway, WALLET), WALLET);
}

const SGLANG_ANSWER = 'Il est 14 h 05 à Paris.';
/** sglang/answer.sse's usage: the whole charge when gpu-b answers. */
const SGLANG_USAGE = { prompt_tokens: 540, completion_tokens: 31 };

const paid = (json: Record<string, unknown>) => void (json.freeMode = false);

test('a non-streamed chat fails over on every failure before its answer was complete; only the answering attempt is charged', async () => {
  const gateway = await gatewayFor({ failuresToCooldown: 1000, firstTokenTimeoutMs: 300 }, (json) => {
    paid(json);
    const upstreams = (json.models as Array<{ upstreams: Array<Record<string, unknown>> }>)[0].upstreams;
    upstreams[0].timeoutMs = 1_000; // gpu-a's own call timeout, past its first token
  });
  const cases: Array<[string, Fault]> = [
    ['HTTP 503', { status: 503 }],
    ['HTTP 500', { status: 500 }],
    ['the connection closed without an answer', { drop: true }],
    ['an error inside the stream after some content (vLLM)', { play: 'vllm-hermes/stream-error.sse' }],
    ["SGLang's graceful abort after some content", { play: 'sglang/abort.sse' }],
    ['a stream Ollama cut off after some content', { play: 'ollama/stream-error-cut-off.sse' }],
    ['an error as a data event (llama.cpp)', { play: 'llamacpp/stream-error-data.sse' }],
    ['the connection dropped mid-answer', { cutAfterEvents: 3 }],
    [
      'visible text after its reasoning, then the stream just ended',
      { endAfterEvents: 6, play: 'vllm-hermes/think-in-content-answer.sse' },
    ],
    ['no first token within firstTokenTimeoutMs', { stallAfterEvents: 0 }],
    ['past the call timeout, after its first tokens', { stallAfterEvents: 2 }],
  ];
  const openings = openingsFor(members, 'gpu-a', cases.length, 'failover');
  const headers = await payer(gateway);
  for (const [i, [name, fault]] of cases.entries()) {
    vllm.next(fault);
    const answer = await chat(gateway, { ...ask(openings[i]), tool_choice: 'none' }, headers);
    assert.equal(answer.status, 200, `${name}: ${JSON.stringify(answer.error)}`);
    assert.equal(answer.content, SGLANG_ANSWER, `${name}: the answer once, nothing of the abandoned attempt`);
    assert.deepEqual(servedBy(members, openings[i]), ['gpu-a', 'gpu-b'], name);
    const { usage } = answer.body!;
    assert.deepEqual({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }, SGLANG_USAGE, name);
    assert.equal(answer.headers!.get('x-credits-charged'), String(chatCost(SGLANG_USAGE)), name);
  }
  vllm.release();
  assert.equal(await metric(gateway, 'switchyard_upstream_failovers_total', 'gpu-a'), cases.length);
  assert.equal(await metric(gateway, 'switchyard_upstream_failures_total', 'gpu-a'), cases.length);
  assert.equal(await metric(gateway, 'switchyard_upstream_failovers_total', 'gpu-b'), 0);
  const failed = gateway.logs.filter((l) => l.msg === 'upstream call failed');
  assert.equal(failed.length, cases.length);
  assert.ok(failed.every((l) => l.deployment === 'gpu-a' && l.next === 'fail-over'));
  assert.ok(!gateway.rawLogs().includes(vllm.baseUrl), 'no URL in the failure lines');

  // Never the same replica twice in a row: gpu-a and then gpu-b fail, and the third attempt goes
  // back to gpu-a (the lowest priority still has it), not to the fallback tier.
  const both = openingsFor(members, 'gpu-a', cases.length + 1, 'failover').at(-1)!;
  vllm.next({ status: 503 });
  sglang.next({ status: 503 });
  const third = await chat(gateway, { ...ask(both), tool_choice: 'none' }, headers);
  assert.equal(third.status, 200, JSON.stringify(third.error));
  assert.equal(third.content, 'Il est 14 h 05 à Paris ☕ 🕑.');
  assert.deepEqual(servedBy(members, both), ['gpu-a', 'gpu-a', 'gpu-b']);
});

test('a JSON call (stream: false) fails over on every failure of its answer; the attempt that answered is charged', async () => {
  const gateway = await gatewayFor({ failuresToCooldown: 1000 }, paid);
  const cases: Array<[string, Fault]> = [
    ['HTTP 503', { status: 503 }],
    ['HTTP 500', { status: 500 }],
    ['the connection closed without an answer', { drop: true }],
    ['the body cut off half-way', { json: 'cut' }],
    ['a body that is no chat completion', { json: 'garbage' }],
    ["SGLang's graceful abort in a JSON answer", { play: 'sglang/abort.json' }],
  ];
  const openings = openingsFor(members, 'gpu-a', cases.length, 'json-failover');
  const headers = await payer(gateway);
  const before = { a: vllm.requests.length, b: sglang.requests.length };
  for (const [i, [name, fault]] of cases.entries()) {
    vllm.next(fault);
    const answer = await chat(gateway, { ...ask(openings[i]), tool_choice: 'none' }, headers);
    assert.equal(answer.status, 200, `${name}: ${JSON.stringify(answer.error)}`);
    assert.equal(answer.content, SGLANG_ANSWER, name);
    assert.deepEqual(servedBy(members, openings[i]), ['gpu-a', 'gpu-b'], name);
    const { usage } = answer.body!;
    assert.deepEqual({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens }, SGLANG_USAGE, name);
    assert.equal(answer.headers!.get('x-credits-charged'), String(chatCost(SGLANG_USAGE)), name);
  }
  // Every attempt asked for JSON, and gpu-b answered with its non-streamed recording.
  for (const { body } of [...vllm.requests.slice(before.a), ...sglang.requests.slice(before.b)]) {
    assert.equal(body.stream, false);
    assert.equal(body.stream_options, undefined);
  }
  assert.ok(sglang.requests.slice(before.b).every((r) => r.answer === 'sglang/answer.json'));
  assert.equal(await metric(gateway, 'switchyard_upstream_failovers_total', 'gpu-a'), cases.length);
});

test('a request the upstream refused (4xx) is not failed over and counts against no replica', async () => {
  const gateway = await gatewayFor({});
  const [opening] = openingsFor(members, 'gpu-a', 1, 'refused');
  vllm.next({ status: 400 });
  const answer = await chat(gateway, { ...ask(opening), tool_choice: 'none' });
  assert.equal(answer.status, 400);
  assert.equal(answer.error!.code, 'upstream_invalid_request');
  assert.deepEqual(servedBy(members, opening), ['gpu-a']);
  assert.equal(await metric(gateway, 'switchyard_upstream_failures_total', 'gpu-a'), 0);
});

test('a stream fails over until the call wrote its first content; after that it ends with the error', async () => {
  const gateway = await gatewayFor({ failuresToCooldown: 1000, firstTokenTimeoutMs: 300 });
  const before: Array<[string, Fault]> = [
    ['HTTP 503', { status: 503 }],
    ['cut after the role chunk (the stream was accepted: its headers went out), before any content', { cutAfterEvents: 1 }],
    ['no first token within firstTokenTimeoutMs', { stallAfterEvents: 0 }],
  ];
  const openings = openingsFor(members, 'gpu-a', before.length + 2, 'stream');
  for (const [i, [name, fault]] of before.entries()) {
    vllm.next(fault);
    const answer = await chat(gateway, { ...ask(openings[i]), tool_choice: 'none', stream: true });
    assert.equal(answer.status, 200, name);
    assert.equal(answer.error, undefined, `${name}: ${JSON.stringify(answer.error)}`);
    assert.equal(answer.content, SGLANG_ANSWER, name);
    assert.deepEqual(servedBy(members, openings[i]), ['gpu-a', 'gpu-b'], name);
  }
  vllm.release();

  const after: Array<[string, Fault, string]> = [
    ['ended after its first content', { endAfterEvents: 2 }, 'Il est 14'],
    ['an error inside the stream after some content', { play: 'vllm-hermes/stream-error.sse' }, 'Il est'],
  ];
  for (const [i, [name, fault, shown]] of after.entries()) {
    const opening = openings[before.length + i];
    vllm.next(fault);
    const answer = await chat(gateway, { ...ask(opening), tool_choice: 'none', stream: true });
    assert.equal(answer.status, 200, name);
    assert.equal(answer.content, shown, name);
    assert.equal(answer.contentBeforeError, true, name);
    assert.equal(answer.error?.code, 'upstream_error', name);
    assert.deepEqual(servedBy(members, opening), ['gpu-a'], `${name}: nothing was sent elsewhere`);
  }
});

test('failures within the window cool a replica down; its probe brings it back', async () => {
  const gateway = await gatewayFor({ failuresToCooldown: 2, failureWindowMs: 60_000, cooldownMs: 600_000 });
  const [first, second, whileCool, afterProbe] = openingsFor(members, 'gpu-a', 4, 'cooldown');
  vllm.next({ status: 502 }, { cutAfterEvents: 1 });
  for (const opening of [first, second]) {
    assert.equal((await chat(gateway, { ...ask(opening), tool_choice: 'none' })).status, 200);
    assert.deepEqual(servedBy(members, opening), ['gpu-a', 'gpu-b']);
  }
  assert.deepEqual(
    (await deploymentsOf(gateway)).map((d) => d.state),
    ['cooldown', 'up', 'up'],
  );
  assert.equal(await metric(gateway, 'switchyard_upstream_cooldowns_total', 'gpu-a'), 1);
  const cooled = gateway.logs.find((l) => l.msg === 'deployment cooled down');
  assert.deepEqual([cooled?.deployment, cooled?.reason, cooled?.ms], ['gpu-a', 'failures', 600_000]);

  // Cooling: gpu-a's conversations go straight to gpu-b.
  assert.equal((await chat(gateway, { ...ask(whileCool), tool_choice: 'none' })).status, 200);
  assert.deepEqual(servedBy(members, whileCool), ['gpu-b']);

  // gpu-a answers its probe: back at once, long before cooldownMs.
  await gateway.upstreams.health.probeAll();
  assert.deepEqual(
    (await deploymentsOf(gateway)).map((d) => d.state),
    ['up', 'up', 'up'],
  );
  assert.equal((await chat(gateway, { ...ask(afterProbe), tool_choice: 'none' })).status, 200);
  assert.deepEqual(servedBy(members, afterProbe), ['gpu-a']);
  assert.ok(gateway.logs.some((l) => l.msg === 'upstream is up' && l.deployment === 'gpu-a'));
});

test('a 429 cools the replica for its Retry-After (capped at maxCooldownMs), which a probe does not cut short; all cooling is a 503 with Retry-After', async () => {
  const gateway = await gatewayFor({ maxCooldownMs: 120_000 });
  const [limited] = openingsFor(members, 'gpu-a', 1, 'rate');
  const [onB] = openingsFor(members, 'gpu-b', 1, 'rate');
  vllm.next({ status: 429, retryAfter: '3600' });
  assert.equal((await chat(gateway, { ...ask(limited), tool_choice: 'none' })).status, 200);
  assert.deepEqual(servedBy(members, limited), ['gpu-a', 'gpu-b']);
  const cooled = gateway.logs.find((l) => l.msg === 'deployment cooled down');
  assert.equal(cooled?.reason, '429');
  assert.ok((cooled?.ms as number) <= 120_000 && (cooled?.ms as number) > 100_000, String(cooled?.ms));

  await gateway.upstreams.health.probeAll();
  assert.equal((await deploymentsOf(gateway))[0].state, 'cooldown', 'the probe does not end a 429 cooldown');

  // gpu-b is rate limited too (an HTTP date), and gpu-c down: nothing can take a call.
  llamacpp.modelsStatus = 503;
  try {
    await gateway.upstreams.health.probeAll();
    sglang.next({ status: 429, retryAfter: new Date(Date.now() + 30_000).toUTCString() });
    const refused = await chat(gateway, { ...ask(onB), tool_choice: 'none' });
    assert.equal(refused.status, 503);
    assert.equal(refused.error!.code, 'upstream_unavailable');
    const down = await chat(gateway, { ...ask(onB), tool_choice: 'none' });
    assert.equal(down.status, 503);
    assert.match(down.error!.message, /every deployment is down or cooling down/);
    const retryAfter = Number(down.headers!.get('retry-after'));
    assert.ok(retryAfter > 20 && retryAfter <= 30, `Retry-After ${retryAfter}: the first cooldown's end`);
    assert.deepEqual(servedBy(members, onB), ['gpu-b'], 'the refused chat made no second call');
  } finally {
    llamacpp.modelsStatus = 200;
  }
});

test("a hold covers the largest maxOutputTokens of the model's deployments; each call asks its deployment for its own", async () => {
  const gateway = await gatewayFor({}, (json) => {
    paid(json);
    const upstreams = (json.models as Array<{ upstreams: Array<Record<string, unknown>> }>)[0].upstreams;
    upstreams[0].maxOutputTokens = 256;
    upstreams[1].maxOutputTokens = 2048;
  });
  const broke = '0x00000000000000000000000000000000000000ee';
  const refused = await chat(
    gateway,
    { ...ask('A hold, please.'), tool_choice: 'none' },
    authHeaders(await apiKeyFor(gateway, broke), broke),
  );
  assert.equal(refused.status, 402);
  // 2 × 2048 output tokens alone are 4.1 credits: the hold was sized for gpu-b, wherever the call would go.
  const needed = Number(/needs at least (\d+)/.exec(refused.error!.message)![1]);
  assert.ok(needed >= 5, refused.error!.message);

  const headers = await payer(gateway);
  const [onA] = openingsFor(members, 'gpu-a', 1, 'hold');
  const [onB] = openingsFor(members, 'gpu-b', 1, 'hold');
  for (const opening of [onA, onB]) assert.equal((await chat(gateway, { ...ask(opening), tool_choice: 'none' }, headers)).status, 200);
  const sent = (replica: Replica, text: string) =>
    replica.requests.find((r) => r.body.messages.some((m) => m.content === text))!.body.max_tokens;
  assert.equal(sent(vllm, onA), 256);
  assert.equal(sent(sglang, onB), 2048);
});

test('a Responses answer that failed over after some visible text holds only the answering attempt’s text', async () => {
  const gateway = await gatewayFor({ failuresToCooldown: 1000 });
  const [opening] = openingsFor(members, 'gpu-a', 1, 'responses');
  // Reasoning, then the visible answer, then the stream just ends: the text had reached the output being built.
  vllm.next({ endAfterEvents: 6, play: 'vllm-hermes/think-in-content-answer.sse' });
  const res = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: walletHeaders(),
    body: JSON.stringify({ model: 'conductor', input: opening, tool_choice: 'none' }),
  });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { output_text?: string; output: Array<{ type: string; content?: Array<{ text: string }> }> };
  const text = body.output.filter((o) => o.type === 'message').flatMap((o) => o.content!.map((c) => c.text));
  assert.deepEqual(text, [SGLANG_ANSWER]);
  assert.deepEqual(servedBy(members, opening), ['gpu-a', 'gpu-b']);
});
