/**
 * Issue 38, where calls go: a model served by replicas speaking vLLM's, SGLang's, llama.cpp's and
 * Ollama's recorded wire formats. Conversations spread by weight; every round of a chat, a
 * client-function continuation, a `previous_response_id` request and a later turn land where the
 * conversation's first call did, on any gateway instance; a busy replica's conversation moves to
 * the least loaded; a priority tier serves only while every lower one is down.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { startReplica, type Replica } from '../../fixtures/upstreams/replica.js';
import { ask, chat, deploymentsOf, fleetGateway, homeOf, metric, openingsFor, servedBy, type Member } from './fleet-harness.js';

let vllm: Replica;
let sglang: Replica;
let llamacpp: Replica;
let ollama: Replica;
const stops: Array<() => Promise<void>> = [];

before(async () => {
  [vllm, sglang, llamacpp, ollama] = await Promise.all([
    startReplica('vllm-hermes'),
    startReplica('sglang'),
    startReplica('llamacpp'),
    startReplica('ollama'),
  ]);
  stops.push(() => Promise.all([vllm, sglang, llamacpp, ollama].map((r) => r.close())).then(() => undefined));
});

after(async () => {
  for (const stop of stops.reverse()) await stop();
});

async function gatewayFor(members: Member[], options: Parameters<typeof fleetGateway>[1] = {}): Promise<TestGateway> {
  const gateway = await fleetGateway(members, options);
  stops.push(() => gateway.stop());
  return gateway;
}

const PARIS = 'What time is it in Paris?';
const none = (text: string) => ({ ...ask(text), tool_choice: 'none' });

test('conversations spread over the replicas by weight, each where weighted rendezvous hashing sends it; /health and /metrics name each deployment', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    { name: 'gpu-c', replica: llamacpp, weight: 2 },
  ];
  const gateway = await gatewayFor(members, { tools: false });
  // Label children exist from the start, one per deployment, before any call.
  for (const m of members) assert.equal(await metric(gateway, 'switchyard_upstream_requests_total', m.name), 0);
  const counts: Record<string, number> = { 'gpu-a': 0, 'gpu-b': 0, 'gpu-c': 0 };
  for (let i = 0; i < 120; i++) {
    const text = `conversation ${i}: ${PARIS}`;
    const answer = await chat(gateway, none(text));
    assert.equal(answer.status, 200, JSON.stringify(answer.error));
    assert.equal(answer.body!.model, 'svc-32b-conductor', 'the canonical id, never a deployment');
    const where = servedBy(members, text);
    assert.deepEqual(where, [homeOf(members, text)], text);
    counts[where[0]]++;
  }
  // Weights 1 : 1 : 2 over 120 conversations.
  assert.ok(counts['gpu-a'] > 15 && counts['gpu-b'] > 15 && counts['gpu-c'] > 40, JSON.stringify(counts));
  assert.ok(counts['gpu-c'] > counts['gpu-a'] && counts['gpu-c'] > counts['gpu-b'], JSON.stringify(counts));
  for (const m of members) assert.equal(await metric(gateway, 'switchyard_upstream_requests_total', m.name), counts[m.name]);

  const deployments = await deploymentsOf(gateway);
  assert.deepEqual(deployments, [
    { name: 'gpu-a', state: 'up', outstanding: 0 },
    { name: 'gpu-b', state: 'up', outstanding: 0 },
    { name: 'gpu-c', state: 'up', outstanding: 0 },
  ]);
  const health = await (await fetch(`${gateway.url}/health`)).text();
  assert.ok(!health.includes('127.0.0.1'), 'no URL in /health');
  // The request's log line says which deployment answered.
  const line = gateway.logs.find((l) => l.msg === 'request' && l.route === '/v1/chat/completions');
  assert.equal((line?.deployments as string[]).length, 1);
});

test('every round of a chat, a later turn, a client-function continuation and a previous_response_id request stay on the conversation’s replica', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    { name: 'gpu-c', replica: ollama },
  ];
  const withTools = await gatewayFor(members);
  // A second gateway without tool servers: its clients bring `get_time` as a function of their own.
  const clientFunctions = await gatewayFor(members, { tools: false });
  const homes = new Set<string>();

  for (let i = 0; i < 4; i++) {
    // A chat with a tool round (two upstream calls), then a later turn of the same conversation.
    const text = `tools ${i}: ${PARIS}`;
    const first = await chat(withTools, ask(text));
    assert.equal(first.status, 200, JSON.stringify(first.error));
    assert.equal(first.body!.tool_trace.length, 1);
    const later = await chat(withTools, {
      messages: [
        { role: 'user', content: text },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'And in Tokyo?' },
      ],
      tool_choice: 'none',
    });
    assert.equal(later.status, 200);
    const where = servedBy(members, text);
    assert.equal(where.length, 3, 'two rounds and the later turn');
    assert.deepEqual(new Set(where), new Set([homeOf(members, text)]), text);
    homes.add(where[0]);

    // A client function: the answer hands back the call, the continuation carries its result.
    const hybrid = `functions ${i}: ${PARIS}`;
    const getTime = { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } };
    const handed = await chat(clientFunctions, { ...ask(hybrid), tools: [getTime] });
    assert.equal(handed.body!.choices[0].finish_reason, 'tool_calls');
    const call = handed.body!.choices[0].message.tool_calls[0];
    const continued = await chat(clientFunctions, {
      messages: [
        { role: 'user', content: hybrid },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"time":"14:05"}' },
      ],
      tools: [getTime],
    });
    assert.equal(continued.status, 200, JSON.stringify(continued.error));
    assert.equal(continued.body!.choices[0].finish_reason, 'stop');
    const hybridWhere = servedBy(members, hybrid);
    assert.equal(hybridWhere.length, 2);
    assert.deepEqual(new Set(hybridWhere), new Set([homeOf(members, hybrid)]), hybrid);
    homes.add(hybridWhere[0]);

    // The Responses API: a stored response, then previous_response_id with other instructions.
    const responses = `responses ${i}: ${PARIS}`;
    const created = await fetch(`${withTools.url}/v1/responses`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify({ model: 'conductor', input: responses, instructions: 'Be brief.', store: true }),
    });
    assert.equal(created.status, 200);
    const { id } = (await created.json()) as { id: string };
    const next = await fetch(`${withTools.url}/v1/responses`, {
      method: 'POST',
      headers: walletHeaders(),
      body: JSON.stringify({
        model: 'conductor',
        input: 'And in Tokyo?',
        previous_response_id: id,
        instructions: 'Be very brief.',
        tool_choice: 'none',
      }),
    });
    assert.equal(next.status, 200, await next.clone().text());
    const responsesWhere = servedBy(members, responses);
    assert.equal(responsesWhere.length, 3, 'two rounds and the next turn');
    assert.deepEqual(new Set(responsesWhere), new Set([homeOf(members, responses)]), responses);
    homes.add(responsesWhere[0]);
  }
  assert.ok(homes.size > 1, 'the conversations did not all hash to one replica');
});

test('two gateway instances with no shared store send each conversation to the same replica', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    { name: 'gpu-c', replica: llamacpp },
  ];
  const [one, two] = await Promise.all([gatewayFor(members, { tools: false }), gatewayFor(members, { tools: false })]);
  const homes = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const text = `instances ${i}: ${PARIS}`;
    const wallet = `0x${(i + 1).toString(16).padStart(40, '0')}`;
    assert.equal((await chat(one, none(text), walletHeaders(wallet))).status, 200);
    const fromOne = servedBy(members, text);
    // The same conversation's next turn, through the other instance.
    const turn = {
      messages: [
        { role: 'user', content: text },
        { role: 'assistant', content: 'Il est 14 h 05.' },
        { role: 'user', content: 'Merci.' },
      ],
      tool_choice: 'none',
    };
    assert.equal((await chat(two, turn, walletHeaders(wallet))).status, 200);
    const both = servedBy(members, text);
    assert.equal(both.length, 2);
    assert.equal(both[1], fromOne[0], text);
    homes.add(fromOne[0]);
  }
  assert.equal(homes.size, 3, 'twelve conversations reached every replica');
});

test('a replica with more than `imbalance` calls outstanding beyond the least loaded loses the next call to it, counted as a move', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    { name: 'gpu-c', replica: llamacpp },
  ];
  const gateway = await gatewayFor(members, { tools: false, routing: { imbalance: 1 } });
  const [busyOne, busyTwo, moved] = openingsFor(members, 'gpu-a', 3, 'imbalance');
  vllm.next({ stallAfterEvents: 0 }, { stallAfterEvents: 0 });
  const held = [chat(gateway, none(busyOne), walletHeaders()), chat(gateway, none(busyTwo), walletHeaders())];
  await vllm.holding(2);
  assert.deepEqual(
    (await deploymentsOf(gateway)).map((d) => [d.name, d.outstanding]),
    [
      ['gpu-a', 2],
      ['gpu-b', 0],
      ['gpu-c', 0],
    ],
  );
  // gpu-a has 2 outstanding, the least loaded 0: more than 1 apart, so this call goes elsewhere.
  const answer = await chat(gateway, none(moved));
  assert.equal(answer.status, 200);
  const where = servedBy(members, moved);
  assert.equal(where.length, 1);
  assert.notEqual(where[0], 'gpu-a');
  assert.equal(await metric(gateway, 'switchyard_upstream_affinity_moves_total', 'gpu-a'), 1);
  vllm.release();
  for (const answer of await Promise.all(held)) assert.equal(answer.status, 200);
  // Balanced again: the conversation is back home.
  assert.equal((await chat(gateway, none(moved))).status, 200);
  assert.deepEqual(servedBy(members, moved).sort(), ['gpu-a', where[0]].sort());
});

test('a higher priority serves only while every lower one is down; the probe, every probeIntervalMs, brings the lower ones back', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
    { name: 'hosted', replica: ollama, priority: 1 },
  ];
  const gateway = await gatewayFor(members, { tools: false, routing: { probeIntervalMs: 50 } });
  const before = ollama.requests.length;
  for (let i = 0; i < 10; i++) assert.equal((await chat(gateway, none(`tier ${i}: ${PARIS}`))).status, 200);
  assert.equal(ollama.requests.length, before, 'the hosted fallback took nothing while the GPUs were up');

  vllm.modelsStatus = 503;
  await until(gateway, [vllm], (d) => d.find((x) => x.name === 'gpu-a')!.state === 'down');
  const onlyB = `tier b: ${PARIS}`;
  assert.equal((await chat(gateway, none(onlyB))).status, 200);
  assert.deepEqual(servedBy(members, onlyB), ['gpu-b']);

  sglang.modelsStatus = 503;
  await until(gateway, [sglang], (d) => d.find((x) => x.name === 'gpu-b')!.state === 'down');
  const fallback = `tier hosted: ${PARIS}`;
  const answer = await chat(gateway, none(fallback));
  assert.equal(answer.status, 200);
  assert.equal(answer.content, 'Il est 14 h 05 à Paris.');
  assert.deepEqual(servedBy(members, fallback), ['hosted']);
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as { models: Array<{ id: string; upstream: string }> };
  assert.equal(health.models[0].upstream, 'up', 'the model still has a deployment up');

  vllm.modelsStatus = 200;
  sglang.modelsStatus = 200;
  await until(gateway, [vllm, sglang], (d) => d.every((x) => x.state === 'up'));
  const home = `tier home: ${PARIS}`;
  assert.equal((await chat(gateway, none(home))).status, 200);
  assert.deepEqual(servedBy(members, home), [homeOf(members, home)]);
  assert.notEqual(homeOf(members, home), 'hosted');
});

/** Wait, probe by probe of `replicas`, until the conductor's deployments satisfy `done`. */
async function until(
  gateway: TestGateway,
  replicas: Replica[],
  done: (deployments: Array<{ name: string; state: string }>) => boolean,
): Promise<void> {
  while (!done(await deploymentsOf(gateway))) await Promise.all(replicas.map((r) => r.probed()));
}

test('every deployment down: 503 upstream_unavailable naming the model, Retry-After, degraded /health, no URL', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
  ];
  vllm.modelsStatus = 503;
  sglang.modelsStatus = 503;
  try {
    const gateway = await gatewayFor(members, { tools: false });
    const answer = await chat(gateway, none(PARIS));
    assert.equal(answer.status, 503);
    assert.equal(answer.error!.code, 'upstream_unavailable');
    assert.equal(
      answer.error!.message,
      'The upstream for model "svc-32b-conductor" is unavailable (every deployment is down or cooling down). ' +
        'Its upstream is set by its "upstreams" in the config file (docs/troubleshooting.md).',
    );
    assert.equal(answer.headers!.get('retry-after'), '5');
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { status: string; models: Array<{ upstream: string }> };
    assert.equal(health.status, 'degraded');
    assert.equal(health.models[0].upstream, 'down');
  } finally {
    vllm.modelsStatus = 200;
    sglang.modelsStatus = 200;
  }
});

test('what the gateway learns of a server (its template opens <think> in the prompt) is learned per deployment', async () => {
  const members: Member[] = [
    { name: 'gpu-a', replica: vllm },
    { name: 'gpu-b', replica: sglang },
  ];
  const gateway = await gatewayFor(members, { tools: false });
  const [firstOnA, secondOnA] = openingsFor(members, 'gpu-a', 2, 'learn');
  const [onB] = openingsFor(members, 'gpu-b', 1, 'learn');
  const bare = { play: 'vllm-hermes/bare-think-close-answer.sse' };
  const streamed = (text: string) => chat(gateway, { ...none(text), stream: true });
  vllm.next(bare, bare);
  sglang.next(bare);
  // A streamed reply shows what came before the bare </think> the first time a deployment writes one ...
  assert.match((await streamed(firstOnA)).content, /^The tool returned 14:05/);
  // ... and never again from that deployment, which now holds its calls until the reasoning ends;
  assert.equal((await streamed(secondOnA)).content, 'Il est 14 h 05 à Paris.');
  // another deployment of the model has not written one yet.
  assert.match((await streamed(onB)).content, /^The tool returned 14:05/);
});
