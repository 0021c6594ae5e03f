/**
 * Tracing's switches and failure modes, each on a gateway of its own: content capture (and the
 * wallet's HMAC tag) only when asked, `/mcp` continuing the trace in `params._meta`, an unsampled
 * caller kept unsampled, a collector that refuses or is gone changing nothing for the client
 * (the failure shown in /health, the lost spans counted in /metrics), and `OTEL_SDK_DISABLED`.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/upstream/scripted-upstream.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.js';
import { startTestGateway, walletHeaders, WALLET, type TestGateway } from '../../helpers/gateway.js';
import { fixtureServer, runnableEnv } from '../tools/fixture-servers.js';

const PROMPT = 'Tell me about the lighthouse of Pharos-4410.';
const ECHOED = 'argument-text-3307';

let upstream: ScriptedUpstream;
before(async () => {
  upstream = await startScriptedUpstream();
});
after(async () => {
  await upstream?.close();
});

/** A free-mode gateway on the scripted upstream with the echo server, exporting to `endpoint`. */
function tracedGateway(env: Record<string, string>): Promise<TestGateway> {
  return startTestGateway({
    env: runnableEnv({ OTEL_BSP_SCHEDULE_DELAY: '10', ...env }),
    config: (json) => {
      for (const model of json.models as Array<{ upstream: Record<string, unknown> }>) model.upstream.baseUrl = upstream.baseUrl;
      json.mcpServers = { echo: fixtureServer('echo') };
    },
  });
}

async function chat(gateway: TestGateway, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: walletHeaders(WALLET, headers),
    body: JSON.stringify({ model: 'conductor', messages: [{ role: 'user', content: PROMPT }] }),
  });
  return { status: response.status, body: (await response.json()) as { choices: Array<{ message: { content: string } }> } };
}

function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.split('-')[1];
}

describe('content capture on, JSON export, a wallet secret', () => {
  let receiver: OtlpReceiver;
  let gateway: TestGateway;
  before(async () => {
    receiver = await startOtlpReceiver();
    gateway = await tracedGateway({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      TRACE_WALLET_HMAC_SECRET: 'per-deployment-secret',
    });
  });
  after(async () => {
    await gateway?.stop();
    await receiver?.close();
  });

  test('prompts, tool arguments and results go on the spans, and the wallet only as its HMAC', async () => {
    upstream.reset();
    upstream.script({ toolCalls: [{ id: 'c1', name: 'echo', arguments: JSON.stringify({ text: ECHOED }) }] }, { text: 'All done.' });
    assert.equal((await chat(gateway)).status, 200);
    const traceId = traceIdOf(upstream.requests[0].traceparent)!;
    const spans = await receiver.waitFor((all) => {
      const mine = all.filter((s) => s.traceId === traceId);
      return mine.some((s) => s.kind === 'server') ? mine : undefined;
    });
    assert.ok(spans.every((s) => s.format === 'json'));
    const agent = spans.find((s) => s.name === 'invoke_agent switchyard')!;
    assert.ok(String(agent.attributes['gen_ai.input.messages']).includes(PROMPT));
    assert.ok(String(agent.attributes['gen_ai.output.messages']).includes('All done.'));
    const execution = spans.find((s) => s.name === 'execute_tool echo')!;
    assert.deepEqual(JSON.parse(String(execution.attributes['gen_ai.tool.call.arguments'])), { text: ECHOED });
    assert.deepEqual(JSON.parse(String(execution.attributes['gen_ai.tool.call.result'])), { text: ECHOED });
    const http = spans.find((s) => s.kind === 'server')!;
    const expected = createHmac('sha256', 'per-deployment-secret').update(WALLET).digest('hex').slice(0, 32);
    assert.equal(http.attributes['switchyard.wallet.hmac'], expected);
    assert.ok(!JSON.stringify(spans.map((s) => [s.attributes, s.events])).includes(WALLET));
  });

  test('/mcp continues the trace its caller put in params._meta (SEP-414)', async () => {
    const traceId = 'aa'.repeat(16);
    const parent = 'bb'.repeat(8);
    const response = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: walletHeaders(WALLET, { accept: 'application/json, text/event-stream' }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 41,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' }, _meta: { traceparent: `00-${traceId}-${parent}-01` } },
      }),
    });
    assert.equal(response.status, 200);
    const [served, execution] = await receiver.waitFor((all) => {
      const served = all.find((s) => s.traceId === traceId && s.name === 'tools/call echo');
      const execution = all.find((s) => s.traceId === traceId && s.name === 'execute_tool echo');
      return served && execution ? [served, execution] : undefined;
    });
    assert.equal(served.kind, 'server');
    assert.equal(served.parentSpanId, parent);
    assert.equal(served.attributes['jsonrpc.request.id'], '41');
    assert.equal(served.attributes['mcp.method.name'], 'tools/call');
    assert.equal(execution.parentSpanId, served.spanId);
  });

  test('an unsampled caller stays unsampled: the upstream is told so, and no span of it is exported', async () => {
    upstream.reset();
    upstream.script({ text: 'one' }, { text: 'two' });
    const unsampled = 'cc'.repeat(16);
    assert.equal((await chat(gateway, { traceparent: `00-${unsampled}-${'dd'.repeat(8)}-00` })).status, 200);
    assert.match(upstream.requests[0].traceparent!, new RegExp(`^00-${unsampled}-[0-9a-f]{16}-00$`));
    // A sampled chat after it: once its spans are in, the earlier chat's would have been too.
    const sampled = 'ee'.repeat(16);
    assert.equal((await chat(gateway, { traceparent: `00-${sampled}-${'dd'.repeat(8)}-01` })).status, 200);
    await receiver.waitFor((all) => all.find((s) => s.traceId === sampled && s.kind === 'server'));
    assert.equal(receiver.spans.filter((s) => s.traceId === unsampled).length, 0);
  });
});

describe('a collector that refuses, then is gone', () => {
  let receiver: OtlpReceiver;
  let gateway: TestGateway;
  before(async () => {
    receiver = await startOtlpReceiver();
    // A short export timeout: the exporter retries a refused connection until it runs out.
    gateway = await tracedGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_TIMEOUT: '500' });
  });
  after(async () => {
    await gateway?.stop();
    await receiver?.close();
  });

  test('the client is answered as ever; /health shows the failure by origin, /metrics counts the lost spans', async () => {
    receiver.failWith(500);
    upstream.reset();
    upstream.script({ text: 'Still answered.' });
    const refused = receiver.nextRequests();
    const answer = await chat(gateway);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.choices[0].message.content, 'Still answered.');
    await refused;
    let tracing: { enabled: boolean; dropped_spans: number; last_failure?: { at: string; message: string } } | undefined;
    // The exporter records the failure once it has read the 500: ask until it has (each ask is a round trip).
    for (let i = 0; i < 500 && !tracing?.last_failure; i++) {
      tracing = ((await (await fetch(`${gateway.url}/health`)).json()) as { tracing: typeof tracing }).tracing;
    }
    assert.ok(tracing?.last_failure, 'the failure shows in /health');
    assert.ok(tracing.last_failure.message.startsWith(`export to ${receiver.url} failed`), tracing.last_failure.message);
    assert.ok(!tracing.last_failure.message.includes('/v1/traces'));
    assert.ok(tracing.dropped_spans > 0);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    const dropped = Number(/^switchyard_trace_spans_dropped_total (\d+)/m.exec(metrics)?.[1]);
    // An export still under way when /health was read may add to the count, never take from it.
    assert.ok(dropped >= tracing.dropped_spans, `${dropped} counted, ${tracing.dropped_spans} in /health`);

    await receiver.close();
    upstream.script({ text: 'Answered with the collector gone.' });
    const gone = await chat(gateway);
    assert.equal(gone.status, 200);
    assert.equal(gone.body.choices[0].message.content, 'Answered with the collector gone.');
  });
});

test('OTEL_SDK_DISABLED=true turns tracing off, endpoint or not: no traceparent upstream, /health says off', async () => {
  const receiver = await startOtlpReceiver();
  const gateway = await tracedGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' });
  try {
    upstream.reset();
    upstream.script({ text: 'untraced' });
    assert.equal((await chat(gateway, { traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` })).status, 200);
    assert.equal(upstream.requests[0].traceparent, undefined);
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { tracing: unknown };
    assert.deepEqual(health.tracing, { enabled: false });
    // The echo server was told nothing of tracing either.
    assert.equal(gateway.tools.server('echo')?.spawnEnv?.OTEL_SERVICE_NAME, undefined);
  } finally {
    await gateway.stop();
    await receiver.close();
  }
});
