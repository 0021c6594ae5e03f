import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { startReplica } from '../../fixtures/upstreams/replica.js';
import { apiKeyFor, startTestGateway, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { parseConfig } from '../../../gateway/config.js';
import { postChat } from './chat-harness.js';
import { baseConfigJson } from '../../helpers/gateway.js';

const stops: Array<() => Promise<void>> = [];
after(async () => {
  for (const stop of stops.reverse()) await stop();
});

async function gatewayWith(options: Parameters<typeof startTestGateway>[0]): Promise<TestGateway> {
  const gateway = await startTestGateway(options);
  stops.push(() => gateway.stop());
  return gateway;
}

async function upstreamFixture(): Promise<ScriptedUpstream> {
  const upstream = await startScriptedUpstream();
  stops.push(() => upstream.close());
  return upstream;
}

test('an upstream that is down: /health says degraded and a chat fails fast with 503 naming the model, no URL', async () => {
  // The base config points both models at 127.0.0.1:9, where nothing listens; the URL carries a secret.
  const gateway = await gatewayWith({
    config: (json) => {
      const models = json.models as Array<{ upstream: Record<string, unknown> }>;
      models[0].upstream.baseUrl = 'http://user:hunter2@127.0.0.1:9/v1?key=sekrit';
    },
  });
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as Record<string, unknown>;
  assert.equal(health.status, 'degraded');
  const down = [{ name: 'default', state: 'down', outstanding: 0 }];
  assert.deepEqual(health.models, [
    { id: 'svc-32b-conductor', upstream: 'down', deployments: down },
    { id: 'svc-8b-operator', upstream: 'down', deployments: down },
  ]);
  const started = performance.now();
  const res = await postChat(gateway, { messages: [{ role: 'user', content: 'hi' }] });
  assert.ok(performance.now() - started < 1000);
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, 'upstream_unavailable');
  assert.equal(
    res.body.error.message,
    'The upstream for model "svc-32b-conductor" is unavailable (its health probe failed). Its upstream is set by ' +
      'CONDUCTOR_UPSTREAM_BASE_URL and CONDUCTOR_UPSTREAM_MODEL, or UPSTREAM_BASE_URL and UPSTREAM_MODEL for every model (docs/troubleshooting.md).',
  );
  assert.equal(res.headers.get('retry-after'), '5');
  assert.ok(!gateway.rawLogs().includes('hunter2'));
  assert.ok(!gateway.rawLogs().includes('sekrit'));
});

test('a primary that answers its probe but a secondary that does not: degraded (a model has no deployment up), per-model states', async () => {
  const upstream = await upstreamFixture();
  const gateway = await gatewayWith({
    config: (json) => {
      const models = json.models as Array<{ upstream: Record<string, unknown> }>;
      models[0].upstream.baseUrl = upstream.baseUrl;
    },
  });
  assert.ok(upstream.modelsRequests >= 1);
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as Record<string, unknown>;
  assert.equal(health.status, 'degraded');
  assert.deepEqual(health.models, [
    { id: 'svc-32b-conductor', upstream: 'up', deployments: [{ name: 'default', state: 'up', outstanding: 0 }] },
    { id: 'svc-8b-operator', upstream: 'down', deployments: [{ name: 'default', state: 'down', outstanding: 0 }] },
  ]);
  const res = await postChat(gateway, { model: 'operator', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.status, 503);
  assert.equal(
    res.body.error.message,
    'The upstream for model "svc-8b-operator" is unavailable (its health probe failed). Its upstream is set by ' +
      'OPERATOR_UPSTREAM_BASE_URL and OPERATOR_UPSTREAM_MODEL, or UPSTREAM_BASE_URL and UPSTREAM_MODEL for every model (docs/troubleshooting.md).',
  );
});

test('upstream env precedence in parseConfig: <ALIAS>_UPSTREAM_* beats UPSTREAM_* beats the file', () => {
  const config = parseConfig(baseConfigJson(), {
    UPSTREAM_BASE_URL: 'http://10.0.0.1:8000/v1',
    UPSTREAM_API_KEY: 'shared',
    CONDUCTOR_UPSTREAM_BASE_URL: 'http://10.0.0.2:8000/v1',
    CONDUCTOR_UPSTREAM_MODEL: 'Qwen/Qwen3-32B',
    CONDUCTOR_UPSTREAM_API_KEY: 'own',
  });
  const [conductor, operator] = config.models;
  assert.deepEqual(
    [conductor.upstreams[0].baseUrl, conductor.upstreams[0].model, conductor.upstreams[0].apiKeyEnv],
    ['http://10.0.0.2:8000/v1', 'Qwen/Qwen3-32B', 'CONDUCTOR_UPSTREAM_API_KEY'],
  );
  assert.deepEqual(
    [operator.upstreams[0].baseUrl, operator.upstreams[0].model, operator.upstreams[0].apiKeyEnv],
    ['http://10.0.0.1:8000/v1', 'qwen3:8b', 'UPSTREAM_API_KEY'],
  );
  const fileOnly = parseConfig(baseConfigJson(), { UPSTREAM_BASE_URL: '  ' });
  assert.equal(fileOnly.models[0].upstreams[0].baseUrl, 'http://127.0.0.1:9/v1');
  assert.equal(fileOnly.models[0].upstreams[0].apiKeyEnv, undefined);
});

test('upstream env precedence end to end: each model reaches its server with its model name and key', async () => {
  const shared = await upstreamFixture();
  const own = await upstreamFixture();
  const gateway = await gatewayWith({
    env: {
      UPSTREAM_BASE_URL: shared.baseUrl,
      UPSTREAM_API_KEY: 'shared-key',
      CONDUCTOR_UPSTREAM_BASE_URL: own.baseUrl,
      CONDUCTOR_UPSTREAM_MODEL: 'Qwen/Qwen3-32B',
      CONDUCTOR_UPSTREAM_API_KEY: 'own-key',
    },
  });
  const key = await apiKeyFor(gateway);
  const headers = walletHeaders(undefined, { authorization: `Bearer ${key}` });
  assert.equal((await postChat(gateway, { model: 'conductor', messages: [{ role: 'user', content: 'a' }] }, headers)).status, 200);
  assert.equal((await postChat(gateway, { model: 'operator', messages: [{ role: 'user', content: 'b' }] }, headers)).status, 200);
  assert.equal(own.requests.length, 1);
  assert.equal(own.requests[0].body.model, 'Qwen/Qwen3-32B');
  assert.equal(own.requests[0].authorization, 'Bearer own-key');
  assert.equal(shared.requests.length, 1);
  assert.equal(shared.requests[0].body.model, 'qwen3:8b');
  assert.equal(shared.requests[0].authorization, 'Bearer shared-key');
  assert.ok(!gateway.rawLogs().includes('own-key'));
});

test('a chat past CHAT_DEADLINE_MS is a 504 chat_deadline_exceeded and its upstream call is aborted', async () => {
  const upstream = await upstreamFixture();
  const gateway = await gatewayWith({
    env: { UPSTREAM_BASE_URL: upstream.baseUrl, CHAT_DEADLINE_MS: '400' },
  });
  upstream.script({ text: 'too late', delayMs: 3000 });
  const started = performance.now();
  const res = await postChat(gateway, { messages: [{ role: 'user', content: 'hi' }] });
  assert.ok(performance.now() - started < 2500);
  assert.equal(res.status, 504);
  assert.equal(res.body.error.code, 'chat_deadline_exceeded');
  assert.equal(res.body.error.message, 'The chat did not finish within its deadline of 400 ms.');
  await upstream.abortedRequest();
});

test("a model's only upstream that drops one connection is retried and never reported down meanwhile", async () => {
  const replica = await startReplica('vllm-hermes');
  stops.push(() => replica.close());
  const gateway = await gatewayWith({
    config: (json) => {
      const models = json.models as Array<{ upstream: Record<string, unknown> }>;
      models[0].upstream.baseUrl = replica.baseUrl;
    },
  });
  replica.next({ drop: true });
  const res = await postChat(gateway, { messages: [{ role: 'user', content: 'hi' }], tool_choice: 'none' });
  assert.equal(res.status, 200);
  assert.equal(replica.requests.length, 2);
  assert.ok(!gateway.logs.some((l) => l.msg === 'upstream is down' && l.model === 'svc-32b-conductor'));
});
