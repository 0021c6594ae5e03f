/**
 * An upstream call is one `chat` span whatever its attempts: a fleet's failover and a lone
 * deployment's retry are events on it, and the span names the deployment that answered.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startTestGateway, walletHeaders, type TestGateway } from '../../helpers/gateway.js';
import { runnableEnv } from '../tools/fixture-servers.js';

let receiver: OtlpReceiver;
let primary: ScriptedUpstream;
let backup: ScriptedUpstream;
let gateway: TestGateway;

before(async () => {
  receiver = await startOtlpReceiver();
  primary = await startScriptedUpstream();
  backup = await startScriptedUpstream();
  gateway = await startTestGateway({
    env: runnableEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '10' }),
    config: (json) => {
      const models = json.models as Array<Record<string, unknown>>;
      // The conductor: a fleet whose backup (priority 1) takes calls only when the primary cannot.
      models[0] = {
        id: 'svc-32b-conductor',
        alias: 'conductor',
        upstreams: [
          { name: 'primary', baseUrl: primary.baseUrl, model: 'Qwen/Qwen3-32B' },
          { name: 'backup', baseUrl: backup.baseUrl, model: 'Qwen/Qwen3-32B', priority: 1 },
        ],
        routing: { probeIntervalMs: 3_600_000 },
      };
      // The operator: one deployment, where a 503 is retried on the same server.
      (models[1] as { upstream: Record<string, unknown> }).upstream.baseUrl = primary.baseUrl;
    },
  });
});

after(async () => {
  await gateway?.stop();
  await primary?.close();
  await backup?.close();
  await receiver?.close();
});

async function chatSpanOf(model: string, traceId: string) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: walletHeaders(undefined, { traceparent: `00-${traceId}-${'12'.repeat(8)}-01` }),
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello?' }] }),
  });
  assert.equal(response.status, 200);
  return receiver.waitFor((spans) => {
    const mine = spans.filter((s) => s.traceId === traceId);
    return mine.some((s) => s.kind === 'server') ? mine.filter((s) => s.name.startsWith('chat ')) : undefined;
  });
}

test('a failover is an event on the call’s one chat span, which names the deployment that answered', async () => {
  primary.script({ status: 503, body: { error: { message: 'overloaded' } } });
  backup.script({ text: 'From the backup.' });
  const calls = await chatSpanOf('conductor', '31'.repeat(16));
  assert.equal(calls.length, 1);
  const [call] = calls;
  assert.equal(call.name, 'chat Qwen/Qwen3-32B');
  assert.equal(call.attributes['switchyard.deployment'], 'backup');
  assert.equal(call.attributes['server.port'], Number(new URL(backup.baseUrl).port));
  assert.deepEqual(
    call.events.map((e) => [e.name, e.attributes['switchyard.deployment'], e.attributes.attempt]),
    [['switchyard.upstream.fail-over', 'primary', 1]],
  );
  assert.equal(call.status.code, 0, 'the call succeeded in the end');
});

test('a retry on a lone deployment is an event too', async () => {
  primary.reset();
  primary.script({ status: 503, body: { error: { message: 'overloaded' } } }, { text: 'Second time lucky.' });
  const [call] = await chatSpanOf('operator', '32'.repeat(16));
  assert.equal(call.attributes['switchyard.deployment'], 'default');
  assert.deepEqual(
    call.events.map((e) => e.name),
    ['switchyard.upstream.retry'],
  );
  // The failure's code (the upstream's 503), never its message.
  assert.match(String(call.events[0].attributes['error.type']), /^upstream_/);
  assert.equal(primary.requests.length, 2);
});
